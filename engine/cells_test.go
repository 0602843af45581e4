package engine

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// checkNoError fails on err.
func checkNoError(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func testCellOps(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "ops.ipynb", "create")

	_, c0, err := e.InsertCell(ctx, "s", "", -1, "code", "x = 1\ny = 2\n")
	checkNoError(t, "insert", err)
	_, c1, err := e.InsertCell(ctx, "s", "", 0, "markdown", "# Title")
	checkNoError(t, "insert", err)
	_, c2, err := e.InsertCell(ctx, "s", "nb", 2, "raw", "raw text")
	checkNoError(t, "insert", err)
	if c0.Index != 0 || c1.Index != 0 || c2.Index != 2 || c0.ID == "" || c0.ID == c1.ID {
		t.Fatalf("inserted cells: %+v %+v %+v", c0, c1, c2)
	}
	if got := sources(f.disk(t, "ops.ipynb")); !equalStrings(got, []string{"# Title", "x = 1\ny = 2\n", "raw text"}) {
		t.Fatalf("on disk after inserts: %q", got)
	}

	info, cells, err := e.ReadNotebook(ctx, "s", "", 1, 1)
	checkNoError(t, "read notebook", err)
	if info.Cells != 3 || len(cells) != 1 || cells[0].ID != c0.ID || cells[0].Index != 1 {
		t.Fatalf("ReadNotebook(1,1) = %+v %+v", info, cells)
	}
	_, all, err := e.ReadNotebook(ctx, "s", "", 0, 0)
	checkNoError(t, "read notebook", err)
	if len(all) != 3 {
		t.Fatalf("ReadNotebook(0,0) returned %d cells", len(all))
	}
	_, byID, err := e.ReadCell(ctx, "s", "", CellRef{ID: c0.ID, Index: ptr(0)})
	checkNoError(t, "read cell", err)
	if byID.Index != 1 || byID.Source != "x = 1\ny = 2\n" || byID.Type != "code" {
		t.Fatalf("ReadCell by id (id wins over index) = %+v", byID)
	}

	// Edit: a literal, single replacement, with a diff.
	_, sc, err := e.EditCellSource(ctx, "s", "", CellRef{ID: c0.ID}, "y = 2", "y = 3", false)
	checkNoError(t, "edit", err)
	if sc.Cell.Source != "x = 1\ny = 3\n" || sc.OldSource != "x = 1\ny = 2\n" || sc.Replacements != 1 ||
		!strings.Contains(sc.Diff, "-y = 2") || !strings.Contains(sc.Diff, "+y = 3") || !strings.Contains(sc.Diff, "a/cell[1]") {
		t.Fatalf("edit change: %+v", sc)
	}
	_, sc, err = e.EditCellSource(ctx, "s", "", CellRef{Index: ptr(1)}, " = ", "=", true)
	checkNoError(t, "edit all", err)
	if sc.Cell.Source != "x=1\ny=3\n" || sc.Replacements != 2 {
		t.Fatalf("replace_all change: %+v", sc)
	}
	_, sc, err = e.OverwriteCellSource(ctx, "s", "", CellRef{Index: ptr(0)}, "# New title")
	checkNoError(t, "overwrite", err)
	if sc.OldSource != "# Title" || !strings.Contains(sc.Diff, "+# New title") {
		t.Fatalf("overwrite change: %+v", sc)
	}

	// Move [T, X, R] -> move T to 2 -> [X, R, T]; then R to where X is.
	_, mc, from, err := e.MoveCell(ctx, "s", "", CellRef{Index: ptr(0)}, CellRef{Index: ptr(2)})
	checkNoError(t, "move", err)
	if from != 0 || mc.Index != 2 || mc.ID != c1.ID {
		t.Fatalf("move: from %d, %+v", from, mc)
	}
	_, mc, from, err = e.MoveCell(ctx, "s", "", CellRef{ID: c2.ID}, CellRef{ID: c0.ID})
	checkNoError(t, "move by id", err)
	if from != 1 || mc.Index != 0 {
		t.Fatalf("move by id: from %d, %+v", from, mc)
	}
	if got := sources(f.disk(t, "ops.ipynb")); !equalStrings(got, []string{"raw text", "x=1\ny=3\n", "# New title"}) {
		t.Fatalf("on disk after moves: %q", got)
	}

	// Clear output of a code cell that has outputs (written from outside
	// the engine's execute path: set them on disk and reload).
	nb := f.disk(t, "ops.ipynb")
	n := 7
	nb.Cells[1].ExecutionCount = &n
	nb.Cells[1].Outputs = []notebook.Output{{OutputType: notebook.Stream, Name: "stdout", Text: "hi\n"}}
	f.writeBehind(t, "ops.ipynb", nb)
	_, cleared, err := e.ClearCellOutput(ctx, "s", "", CellRef{ID: c0.ID})
	checkNoError(t, "clear output", err)
	if len(cleared.Outputs) != 0 || cleared.ExecutionCount != nil {
		t.Fatalf("cleared cell: %+v", cleared)
	}
	if c := f.disk(t, "ops.ipynb").Cells[1]; len(c.Outputs) != 0 || c.ExecutionCount != nil {
		t.Fatalf("cleared cell on disk: %+v", c)
	}

	// Delete by ids returns the cells in the order given.
	_, deleted, err := e.DeleteCells(ctx, "s", "", nil, []string{c1.ID, c2.ID})
	checkNoError(t, "delete", err)
	if len(deleted) != 2 || deleted[0].ID != c1.ID || deleted[0].Index != 2 || deleted[1].ID != c2.ID || deleted[1].Index != 0 {
		t.Fatalf("deleted: %+v", deleted)
	}
	if got := sources(f.disk(t, "ops.ipynb")); !equalStrings(got, []string{"x=1\ny=3\n"}) {
		t.Fatalf("on disk after delete: %q", got)
	}
	_, deleted, err = e.DeleteCells(ctx, "s", "", []int{0}, nil)
	checkNoError(t, "delete by index", err)
	if len(deleted) != 1 || deleted[0].ID != c0.ID {
		t.Fatalf("deleted: %+v", deleted)
	}
	if got := f.disk(t, "ops.ipynb"); len(got.Cells) != 0 {
		t.Fatalf("cells left: %d", len(got.Cells))
	}

	// The resource accessors.
	_, c3, err := e.InsertCell(ctx, "s", "", -1, "code", "print(1)")
	checkNoError(t, "insert", err)
	js, err := e.NotebookJSON(ctx, "nb")
	checkNoError(t, "notebook json", err)
	if parsed, err := notebook.Parse(js); err != nil || len(parsed.Cells) != 1 || parsed.Cells[0].ID != c3.ID {
		t.Fatalf("NotebookJSON: %v", err)
	}
	_, err = e.CellOutput(ctx, "nb", c3.ID, 0)
	wantUserError(t, err, "no outputs")
	_, err = e.CellOutput(ctx, "nb", "nope", 0)
	wantUserError(t, err, `no cell with id "nope"`)
}

func testBadInputs(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "bad.ipynb", "create")
	var ids []string
	for _, src := range []string{"a = 1", "# md", "b = a + a\nb"} {
		typ := "code"
		if strings.HasPrefix(src, "#") {
			typ = "markdown"
		}
		_, c, err := e.InsertCell(ctx, "s", "", -1, typ, src)
		checkNoError(t, "insert", err)
		ids = append(ids, c.ID)
	}
	before := f.file(t, "bad.ipynb")

	cases := []struct {
		name string
		call func() error
		want []string
	}{
		{"read index out of range", func() error {
			_, _, err := e.ReadCell(ctx, "s", "", CellRef{Index: ptr(12)})
			return err
		}, []string{"cell index 12 is out of range", "3 cells", "0-2"}},
		{"read negative index", func() error {
			_, _, err := e.ReadCell(ctx, "s", "", CellRef{Index: ptr(-1)})
			return err
		}, []string{"out of range"}},
		{"read no ref", func() error {
			_, _, err := e.ReadCell(ctx, "s", "", CellRef{})
			return err
		}, []string{"no cell was named"}},
		{"read unknown id", func() error {
			_, _, err := e.ReadCell(ctx, "s", "", CellRef{ID: "abc", Index: ptr(0)})
			return err
		}, []string{`no cell with id "abc"`}},
		{"unknown notebook", func() error {
			_, _, err := e.ReadCell(ctx, "s", "x", CellRef{Index: ptr(0)})
			return err
		}, []string{`no notebook named "x"`, "in use: nb"}},
		{"no current notebook", func() error {
			_, _, err := e.InsertCell(ctx, "other", "", -1, "code", "1")
			return err
		}, []string{"this session has no current notebook"}},
		{"read notebook past end", func() error {
			_, _, err := e.ReadNotebook(ctx, "s", "", 5, 0)
			return err
		}, []string{"start 5 is past the end"}},
		{"insert out of range", func() error {
			_, _, err := e.InsertCell(ctx, "s", "", 4, "code", "1")
			return err
		}, []string{"cell index 4 is out of range", "valid 0-3"}},
		{"insert below -1", func() error {
			_, _, err := e.InsertCell(ctx, "s", "", -2, "code", "1")
			return err
		}, []string{"out of range"}},
		{"insert invalid type", func() error {
			_, _, err := e.InsertCell(ctx, "s", "", -1, "python", "1")
			return err
		}, []string{`cell type "python"`, "markdown"}},
		{"overwrite unknown id", func() error {
			_, _, err := e.OverwriteCellSource(ctx, "s", "", CellRef{ID: "zz"}, "x")
			return err
		}, []string{`no cell with id "zz"`}},
		{"edit ambiguous", func() error {
			_, _, err := e.EditCellSource(ctx, "s", "", CellRef{ID: ids[2]}, "a", "c", false)
			return err
		}, []string{"occurs 2 times"}},
		{"edit not found", func() error {
			_, _, err := e.EditCellSource(ctx, "s", "", CellRef{Index: ptr(0)}, "zzz", "c", false)
			return err
		}, []string{"not found", "a = 1"}},
		{"edit empty old", func() error {
			_, _, err := e.EditCellSource(ctx, "s", "", CellRef{Index: ptr(0)}, "", "c", false)
			return err
		}, []string{"the text to replace is empty"}},
		{"edit index out of range", func() error {
			_, _, err := e.EditCellSource(ctx, "s", "", CellRef{Index: ptr(3)}, "a", "c", false)
			return err
		}, []string{"cell index 3 is out of range"}},
		{"delete one bad id among good", func() error {
			_, _, err := e.DeleteCells(ctx, "s", "", nil, []string{ids[0], "nope"})
			return err
		}, []string{`no cell with id "nope"`}},
		{"delete duplicate ids", func() error {
			_, _, err := e.DeleteCells(ctx, "s", "", nil, []string{ids[0], ids[0]})
			return err
		}, []string{"twice"}},
		{"delete bad index among good", func() error {
			_, _, err := e.DeleteCells(ctx, "s", "", []int{0, 9}, nil)
			return err
		}, []string{"cell index 9"}},
		{"delete duplicate indices", func() error {
			_, _, err := e.DeleteCells(ctx, "s", "", []int{1, 1}, nil)
			return err
		}, []string{"twice"}},
		{"delete nothing named", func() error {
			_, _, err := e.DeleteCells(ctx, "s", "", nil, nil)
			return err
		}, []string{"no cells were named"}},
		{"move source out of range", func() error {
			_, _, _, err := e.MoveCell(ctx, "s", "", CellRef{Index: ptr(3)}, CellRef{Index: ptr(0)})
			return err
		}, []string{"cell index 3"}},
		{"move target out of range", func() error {
			_, _, _, err := e.MoveCell(ctx, "s", "", CellRef{Index: ptr(0)}, CellRef{Index: ptr(3)})
			return err
		}, []string{"cell index 3"}},
		{"move no target", func() error {
			_, _, _, err := e.MoveCell(ctx, "s", "", CellRef{Index: ptr(0)}, CellRef{})
			return err
		}, []string{"no cell was named"}},
		{"clear markdown", func() error {
			_, _, err := e.ClearCellOutput(ctx, "s", "", CellRef{ID: ids[1]})
			return err
		}, []string{"markdown cell"}},
		{"execute markdown", func() error {
			_, err := e.ExecuteCell(ctx, "s", "", CellRef{Index: ptr(1)}, ExecOptions{})
			return err
		}, []string{"markdown cell", "only code cells"}},
		{"execute out of range", func() error {
			_, err := e.ExecuteCell(ctx, "s", "", CellRef{Index: ptr(7)}, ExecOptions{})
			return err
		}, []string{"cell index 7"}},
		{"insert-execute out of range", func() error {
			_, err := e.InsertExecuteCell(ctx, "s", "", 9, "1", ExecOptions{})
			return err
		}, []string{"cell index 9"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantUserError(t, tc.call(), tc.want...)
			if !bytes.Equal(before, f.file(t, "bad.ipynb")) {
				t.Fatal("the notebook file changed")
			}
		})
	}
}

func testExternalEdit(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "ext.ipynb", "create")
	_, a, err := e.InsertCell(ctx, "s", "", -1, "code", "a = 1")
	checkNoError(t, "insert", err)
	_, b, err := e.InsertCell(ctx, "s", "", -1, "code", "b = 2")
	checkNoError(t, "insert", err)

	// Someone else inserts a cell at the top and edits cell b.
	nb := f.disk(t, "ext.ipynb")
	nb.Cells = append([]*notebook.Cell{nb.NewCell(notebook.Markdown, "# added outside")}, nb.Cells...)
	nb.Cells[2].Source = "b = 20"
	f.writeBehind(t, "ext.ipynb", nb)
	external := f.file(t, "ext.ipynb")

	// By index: refused, nothing written.
	_, _, err = e.OverwriteCellSource(ctx, "s", "", CellRef{Index: ptr(0)}, "clobber")
	wantErrorAs[*NotebookReloadedError](t, err)
	if !bytes.Equal(external, f.file(t, "ext.ipynb")) {
		t.Fatal("an index-addressed edit against a changed notebook wrote the file")
	}
	// The refusal reloaded the notebook: reads now show the outside edit.
	if _, c, _ := e.ReadCell(ctx, "s", "", CellRef{Index: ptr(0)}); c.Source != "# added outside" {
		t.Fatalf("after reload, cell 0 = %q", c.Source)
	}

	// Another outside write, then an edit by id: both changes survive.
	nb = f.disk(t, "ext.ipynb")
	nb.Cells = append(nb.Cells, nb.NewCell(notebook.Code, "c = 3"))
	f.writeBehind(t, "ext.ipynb", nb)
	_, sc, err := e.EditCellSource(ctx, "s", "", CellRef{ID: a.ID}, "a = 1", "a = 10", false)
	checkNoError(t, "edit by id", err)
	if sc.Cell.Index != 1 {
		t.Fatalf("edited cell is at %d, want 1", sc.Cell.Index)
	}
	got := sources(f.disk(t, "ext.ipynb"))
	if want := []string{"# added outside", "a = 10", "b = 20", "c = 3"}; !equalStrings(got, want) {
		t.Fatalf("on disk: %q, want %q", got, want)
	}
	_ = b
}

func testConcurrentInserts(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "conc.ipynb", "create")
	const workers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				src := "w" + string(rune('0'+w)) + "-" + string(rune('0'+i))
				if _, _, err := e.InsertCell(ctx, "s", "nb", -1, "code", src); err != nil {
					errs <- err
				}
				// Readers run alongside the writers.
				if _, _, err := e.ReadNotebook(ctx, "s", "nb", 0, 0); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	nb := f.disk(t, "conc.ipynb")
	if len(nb.Cells) != workers*each {
		t.Fatalf("%d cells on disk, want %d", len(nb.Cells), workers*each)
	}
	seen := map[string]bool{}
	last := map[byte]int{}
	for _, c := range nb.Cells {
		seen[c.Source] = true
		// Each worker's cells appear in its own order.
		w, i := c.Source[1], int(c.Source[3]-'0')
		if prev, ok := last[w]; ok && prev > i {
			t.Errorf("worker %c: cell %d after %d", w, i, prev)
		}
		last[w] = i
	}
	if len(seen) != workers*each {
		t.Fatalf("%d distinct cells, want %d", len(seen), workers*each)
	}
	info, _ := e.Notebook("s", "nb")
	if info.Cells != workers*each {
		t.Fatalf("in memory: %d cells", info.Cells)
	}
}
