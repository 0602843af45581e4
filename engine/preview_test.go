package engine

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// insertCells appends cells to session's current notebook, markdown ones
// for sources that start with "#", and returns their ids.
func insertCells(t *testing.T, e *Engine, session string, srcs ...string) []string {
	t.Helper()
	var ids []string
	for _, src := range srcs {
		typ := "code"
		if strings.HasPrefix(src, "#") {
			typ = "markdown"
		}
		_, c, err := e.InsertCell(ctxT(t), session, "", -1, typ, src)
		checkNoError(t, "insert", err)
		ids = append(ids, c.ID)
	}
	return ids
}

// testPreviews checks every preview against a real notebook: what it shows
// is what the operation then does, an impossible one says why plainly, and
// computing a preview changes nothing on disk.
func testPreviews(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	e.SessionOpened("s", "preview-agent 1.0")
	info := f.use(t, "s", "nb", "preview.ipynb", "create")
	ids := insertCells(t, e, "s", "a = 1\nb = 2\n", "# Notes", "print(a + b)")
	before := f.file(t, "preview.ipynb")

	// Edit: the diff the edit will make, the session's client named.
	p := e.Preview(ctx, "s", PreviewRequest{Op: PreviewEdit, Cell: CellRef{ID: ids[0]}, Old: "b = 2", New: "b = 3"})
	if p.Problem != "" || p.Client != "preview-agent 1.0" || p.Notebook != "nb" ||
		!strings.Contains(p.Diff, "-b = 2") || !strings.Contains(p.Diff, "+b = 3") || !strings.Contains(p.Diff, "a/cell[0]") ||
		!strings.Contains(p.What, "edit the source of cell 0 (id "+ids[0]+")") {
		t.Fatalf("edit preview: %+v", p)
	}
	// The preview's diff is the one the edit reports.
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewOverwrite, Notebook: "nb", Cell: CellRef{Index: ptr(2)}, Source: "print(a * b)"})
	if p.Problem != "" || !strings.Contains(p.Diff, "-print(a + b)") || !strings.Contains(p.Diff, "+print(a * b)") {
		t.Fatalf("overwrite preview: %+v", p)
	}

	// Problems are said plainly, in the engine's own words.
	for _, tc := range []struct {
		req  PreviewRequest
		want string
	}{
		{PreviewRequest{Op: PreviewEdit, Cell: CellRef{Index: ptr(7)}, Old: "a", New: "b"}, "out of range"},
		{PreviewRequest{Op: PreviewEdit, Cell: CellRef{ID: ids[0]}, Old: "zzz", New: "y"}, "not found"},
		{PreviewRequest{Op: PreviewDelete, IDs: []string{"nope"}}, "nope"},
		{PreviewRequest{Op: PreviewInsert, Index: 9, CellType: "code"}, "9"},
		{PreviewRequest{Op: PreviewRestart, Notebook: "other"}, "other"},
		{PreviewRequest{Problem: "the arguments are not a JSON object"}, "not a JSON object"},
	} {
		p := e.Preview(ctx, "s", tc.req)
		if p.Problem == "" || !strings.Contains(p.Problem, tc.want) || p.Diff != "" || len(p.Cells) != 0 {
			t.Errorf("preview of %+v: %+v, want a problem saying %q", tc.req, p, tc.want)
		}
	}

	// Insert: the new cell at its place between its neighbours.
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewInsert, Index: 1, CellType: "markdown", Source: "## New"})
	if p.Problem != "" || len(p.Cells) != 3 ||
		p.Cells[0].ID != ids[0] || p.Cells[0].Role != event.PreviewCellContext ||
		p.Cells[1].Role != event.PreviewCellNew || p.Cells[1].Index != 1 || p.Cells[1].Source != "## New" || p.Cells[1].Type != "markdown" ||
		p.Cells[2].ID != ids[1] || p.Cells[2].Index != 1 {
		t.Fatalf("insert preview: %+v", p)
	}
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewInsert, Index: -1, CellType: "code", Source: "z = 0"})
	if len(p.Cells) != 2 || p.Cells[0].ID != ids[2] || p.Cells[1].Index != 3 {
		t.Fatalf("append preview: %+v", p)
	}

	// Delete: the cells that would go, each at its index.
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewDelete, Indices: []int{2, 0}})
	if p.Problem != "" || len(p.Cells) != 2 || p.Cells[0].ID != ids[0] || p.Cells[1].ID != ids[2] ||
		p.Cells[1].Source != "print(a + b)" || p.Cells[0].Role != event.PreviewCellGone || !strings.Contains(p.What, "delete 2 of 3 cells") {
		t.Fatalf("delete preview: %+v", p)
	}

	// Move: from and to.
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewMove, Cell: CellRef{ID: ids[2]}, Target: CellRef{Index: ptr(0)}})
	if p.Problem != "" || !strings.Contains(p.What, "move cell 2 (id "+ids[2]+") to index 0") ||
		len(p.Cells) != 2 || p.Cells[0].Role != event.PreviewCellMoved || p.Cells[1].ID != ids[0] {
		t.Fatalf("move preview: %+v", p)
	}

	// Runs: the code and the kernel's language.
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewRunCell, Cell: CellRef{Index: ptr(0)}})
	if p.Problem != "" || p.Code != "a = 1\nb = 2\n" || p.Language != "python" || !strings.Contains(p.What, info.KernelID[:8]) {
		t.Fatalf("run cell preview: %+v", p)
	}
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewRunCell, Cell: CellRef{Index: ptr(1)}})
	if p.Code != "" || !strings.Contains(p.What, "markdown cell") {
		t.Fatalf("run markdown cell preview: %+v", p)
	}
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewInsertRun, Index: -1, Source: "print('hi')"})
	if p.Problem != "" || p.Code != "print('hi')" || p.Language != "python" || len(p.Cells) != 2 || p.Cells[1].Type != "code" {
		t.Fatalf("insert and run preview: %+v", p)
	}
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewRunCode, Source: "import os"})
	if p.Problem != "" || p.Code != "import os" || p.Language != "python" || p.Notebook != "nb" || !strings.Contains(p.What, "not saved") {
		t.Fatalf("run code preview: %+v", p)
	}
	// Code is carried whole, well past what a sentence may take; past
	// previewCodeMax it is cut, and the preview says by how much (never
	// with words appended to the code).
	long := strings.Repeat("x = 1  # padding the cell\n", 700) + "print('the end')"
	if p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewRunCode, Source: long}); p.Code != long || p.CodeCut != 0 {
		t.Fatalf("a %d-byte code came %d bytes long, %d cut", len(long), len(p.Code), p.CodeCut)
	}
	huge := strings.Repeat("y", previewCodeMax+10)
	if p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewRunCode, Source: huge}); len(p.Code) != previewCodeMax || p.CodeCut != 10 || strings.Contains(p.Code, "more bytes") {
		t.Fatalf("a huge code: %d bytes carried, %d cut", len(p.Code), p.CodeCut)
	}
	p = e.Preview(ctx, "nobody", PreviewRequest{Op: PreviewRunCode, Source: "1"})
	if p.Problem == "" || p.Code != "1" {
		t.Fatalf("run code without a notebook: %+v", p)
	}

	// Unuse: the kernel and what goes with it.
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewUnuse, Notebook: "nb"})
	if p.Problem != "" || !strings.Contains(p.What, "stop using notebook nb") || len(p.Facts) < 2 ||
		!strings.Contains(strings.Join(p.Facts, "\n"), info.KernelID) || !strings.Contains(strings.Join(p.Facts, "\n"), "no execution is running") {
		t.Fatalf("unuse preview: %+v", p)
	}

	if after := f.file(t, "preview.ipynb"); !bytes.Equal(before, after) {
		t.Fatalf("a preview changed the file:\n%s\n---\n%s", before, after)
	}
	if _, all, err := e.ReadNotebook(ctx, "s", "", 0, 0); err != nil || len(all) != 3 {
		t.Fatalf("a preview changed the model: %d cells, %v", len(all), err)
	}
}

// testPreviewRestart checks that a restart's preview names the execution it
// would stop.
func testPreviewRestart(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	info := f.useOwnKernel(t, "s", "nb", "preview-restart.ipynb", "create")
	p := e.Preview(ctx, "s", PreviewRequest{Op: PreviewRestart})
	if p.Problem != "" || !strings.Contains(p.What, "restart kernel "+info.KernelID[:8]) ||
		!strings.Contains(strings.Join(p.Facts, "\n"), "no execution is running") {
		t.Fatalf("restart preview, idle: %+v", p)
	}
	slow, err := e.InsertExecuteCell(ctx, "s", "", -1, "import time; time.sleep(60)", ExecOptions{Timeout: 500 * time.Millisecond})
	checkNoError(t, "execute slow", err)
	if !slow.StillRunning {
		t.Fatalf("slow cell: %+v", slow)
	}
	defer func() { _ = e.InterruptKernel(ctx, info.KernelID) }()
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewRestart})
	facts := strings.Join(p.Facts, "\n")
	if !strings.Contains(facts, "1 running execution(s) stop: cells "+slow.Cell.ID) || !strings.Contains(facts, info.KernelID) {
		t.Fatalf("restart preview, running: %+v", p)
	}
}

// testPreviewIsTheCall holds a preview against what the call then does:
// a call that will be refused is previewed as that refusal, in the words
// the call gets, and one that will succeed is previewed without a problem.
// A delete naming one cell twice was once shown as a deletion, then failed
// once allowed.
func testPreviewIsTheCall(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "preview-call.ipynb", "create")
	ids := insertCells(t, e, "s", "a = 1", "# Notes", "b = 2")
	before := f.file(t, "preview-call.ipynb")
	for _, tc := range []struct {
		name string
		req  PreviewRequest
		call func() error
	}{
		{"delete an index twice", PreviewRequest{Op: PreviewDelete, Indices: []int{1, 1}},
			func() error { _, _, err := e.DeleteCells(ctx, "s", "", []int{1, 1}, nil); return err }},
		{"delete an id twice", PreviewRequest{Op: PreviewDelete, IDs: []string{ids[2], ids[0], ids[2]}},
			func() error {
				_, _, err := e.DeleteCells(ctx, "s", "", nil, []string{ids[2], ids[0], ids[2]})
				return err
			}},
		{"run a markdown cell", PreviewRequest{Op: PreviewRunCell, Cell: CellRef{ID: ids[1]}},
			func() error { _, err := e.ExecuteCell(ctx, "s", "", CellRef{ID: ids[1]}, ExecOptions{}); return err }},
		{"insert and run code with a NUL", PreviewRequest{Op: PreviewInsertRun, Index: -1, Source: "x\x00"},
			func() error { _, err := e.InsertExecuteCell(ctx, "s", "", -1, "x\x00", ExecOptions{}); return err }},
		// A replacement by the text itself is checked as any edit is.
		{"edit to the same text, not in the cell", PreviewRequest{Op: PreviewEdit, Cell: CellRef{ID: ids[0]}, Old: "zz", New: "zz"},
			func() error {
				_, _, err := e.EditCellSource(ctx, "s", "", CellRef{ID: ids[0]}, "zz", "zz", false)
				return err
			}},
		{"insert of no type", PreviewRequest{Op: PreviewInsert, Index: 0, CellType: "prose"},
			func() error { _, _, err := e.InsertCell(ctx, "s", "", 0, "prose", "x"); return err }},
	} {
		p := e.Preview(ctx, "s", tc.req)
		err := tc.call()
		if err == nil {
			t.Fatalf("%s: the call was not refused", tc.name)
		}
		if p.Problem != err.Error() || !p.Refused || len(p.Cells) != 0 || p.Diff != "" {
			t.Errorf("%s: previewed %+v; the call was refused with %q", tc.name, p, err)
		}
	}
	if after := f.file(t, "preview-call.ipynb"); !bytes.Equal(before, after) {
		t.Fatalf("a refused call changed the file")
	}
	// An edit to the same text that is there is a no-op, as in the
	// reference: previewed as no change, and the call changes nothing.
	p := e.Preview(ctx, "s", PreviewRequest{Op: PreviewEdit, Cell: CellRef{ID: ids[0]}, Old: "a", New: "a"})
	_, same, err := e.EditCellSource(ctx, "s", "", CellRef{ID: ids[0]}, "a", "a", false)
	checkNoError(t, "edit to the same text", err)
	if p.Problem != "" || p.Refused || !strings.HasSuffix(p.What, ": no change") || p.Diff != "" || same.Diff != "" || same.Replacements != 0 {
		t.Errorf("edit to the same text: previewed %+v, answered %+v", p, same)
	}
	if after := f.file(t, "preview-call.ipynb"); !bytes.Equal(before, after) {
		t.Fatalf("an edit to the same text changed the file")
	}
	// A delete that goes through: the cells previewed are the ones gone.
	p = e.Preview(ctx, "s", PreviewRequest{Op: PreviewDelete, IDs: []string{ids[2], ids[0]}})
	_, gone, err := e.DeleteCells(ctx, "s", "", nil, []string{ids[2], ids[0]})
	checkNoError(t, "delete", err)
	if p.Problem != "" || p.Refused || len(p.Cells) != len(gone) || p.Cells[0].ID != gone[1].ID || p.Cells[1].ID != gone[0].ID {
		t.Errorf("previewed %+v; deleted %+v", p, gone)
	}
}
