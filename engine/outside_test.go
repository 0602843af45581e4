package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

func TestDiffNotebooks(t *testing.T) {
	t.Parallel()
	cell := func(id, src string) *notebook.Cell {
		return &notebook.Cell{ID: id, Type: notebook.Code, Source: src, Metadata: json.RawMessage(`{}`)}
	}
	one := 1
	withOutput := cell("c", "c = 3")
	withOutput.ExecutionCount = &one
	withOutput.Outputs = []notebook.Output{{OutputType: "stream", Name: "stdout", Text: "3\n"}}
	relaid := cell("e", "e = 5")
	relaid.Metadata = json.RawMessage("{\n  \"tags\": [ \"x\" ]\n}")
	before := cell("e", "e = 5")
	before.Metadata = json.RawMessage(`{"tags":["x"]}`)
	// Jupyter marks every code cell it reads out as trusted.
	trusted := cell("g", "g = 7")
	trusted.Metadata = json.RawMessage(`{"trusted": true}`)

	old := &notebook.Notebook{Metadata: json.RawMessage(`{"kernelspec":{"name":"python3"}}`), Cells: []*notebook.Cell{
		cell("a", "a = 1"), cell("b", "b = 2"), cell("c", "c = 3"), cell("d", "d = 4"), before, cell("f", "f = 6"), cell("g", "g = 7"),
	}}
	cur := &notebook.Notebook{Metadata: json.RawMessage("{\"kernelspec\": {\"name\": \"python3\"}}"), Cells: []*notebook.Cell{
		cell("new", "x"), cell("a", "a = 10"), withOutput, cell("f", "f = 6"), cell("d", "d = 4"), relaid, trusted,
	}}
	changes, metadata := diffNotebooks(old, cur)
	want := []event.ChangedCell{
		{ID: "new", Index: 0, How: event.CellAdded},
		{ID: "a", Index: 1, How: event.CellEdited},
		{ID: "c", Index: 2, How: event.CellOutputs},
		{ID: "f", Index: 3, How: event.CellMoved},
		{ID: "b", Index: 1, How: event.CellRemoved},
	}
	if !reflect.DeepEqual(changes, want) || metadata {
		t.Errorf("diffNotebooks = %+v, metadata %v\nwant %+v (the same metadata laid out differently is no change)", changes, metadata, want)
	}
	if c, m := diffNotebooks(old, old); len(c) != 0 || m {
		t.Errorf("a notebook against itself: %+v %v", c, m)
	}
	meta := *old
	meta.Metadata = json.RawMessage(`{"kernelspec":{"name":"ir"}}`)
	if c, m := diffNotebooks(old, &meta); len(c) != 0 || !m {
		t.Errorf("metadata only: %+v %v", c, m)
	}

	at := time.Date(2026, 11, 30, 14, 31, 23, 0, time.UTC)
	text := event.OutsideEditText("nb", "dir/x.ipynb", at, want[:2], true)
	if text != "notebook 'nb' (dir/x.ipynb) was changed outside this server at 14:31:23 UTC: cell 0 (new) added, cell 1 (a) edited, notebook metadata changed; cells read before then may be out of date" {
		t.Errorf("text = %q", text)
	}
	many := make([]event.ChangedCell, event.MaxListedChanges+3)
	for i := range many {
		many[i] = event.ChangedCell{ID: strconv.Itoa(i), Index: i, How: event.CellOutputs}
	}
	if text := event.OutsideEditText("nb", "x.ipynb", at, many, false); !strings.Contains(text, "cell 11 (11) outputs changed, and 3 more cells;") {
		t.Errorf("text = %q", text)
	}
}

// A notebook written again by another program is laid out as nbformat
// writes it: a mime bundle's text split into a list of lines where the
// kernel sent one string. That is the same output, not a changed one: an
// edit of a markdown cell elsewhere reports that cell alone.
func TestDiffNotebooksResaved(t *testing.T) {
	t.Parallel()
	one := 1
	ran := func(data string) *notebook.Cell {
		return &notebook.Cell{ID: "code", Type: notebook.Code, Source: "1+1", Metadata: json.RawMessage(`{}`), ExecutionCount: &one,
			Outputs: []notebook.Output{{OutputType: notebook.ExecuteResult, ExecutionCount: &one, Metadata: json.RawMessage(`{}`),
				Data: map[string]json.RawMessage{"text/plain": json.RawMessage(data)}}}}
	}
	md := func(src string) *notebook.Cell {
		return &notebook.Cell{ID: "md", Type: notebook.Markdown, Source: src, Metadata: json.RawMessage(`{}`)}
	}
	old := &notebook.Notebook{Metadata: json.RawMessage(`{}`), Cells: []*notebook.Cell{md("# Title"), ran(`"2\n3"`)}}
	cur := &notebook.Notebook{Metadata: json.RawMessage(`{}`), Cells: []*notebook.Cell{md("# Title, edited"), ran(`["2\n", "3"]`)}}
	changes, metadata := diffNotebooks(old, cur)
	if want := []event.ChangedCell{{ID: "md", Index: 0, How: event.CellEdited}}; !reflect.DeepEqual(changes, want) || metadata {
		t.Errorf("diffNotebooks = %+v, metadata %v; want %+v (the output only laid out as nbformat writes it)", changes, metadata, want)
	}
}

// The same through a real server: a cell run here, the notebook read and
// saved again elsewhere with one markdown cell changed. The outside edit
// names the markdown cell and nothing else.
func testOutsideEditResaved(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	sub := e.Bus().SubscribeTo(64, event.EvNotebookOutsideEdit)
	defer sub.Close()
	f.use(t, "s", "nb", "resaved.ipynb", "create")
	_, md, err := e.InsertCell(ctx, "s", "", -1, "markdown", "# Title")
	checkNoError(t, "insert", err)
	res, err := e.InsertExecuteCell(ctx, "s", "", -1, "1+1\nprint('a')\nprint('b')\n'x\\ny'", ExecOptions{})
	checkNoError(t, "execute", err)
	if len(res.Outputs) != 2 {
		t.Fatalf("outputs %+v, want a stream and a result", res.Outputs)
	}
	nb := f.disk(t, "resaved.ipynb")
	nb.Cells[0].Source = "# Title, edited"
	f.writeBehind(t, "resaved.ipynb", nb)
	if _, _, err := e.ReadNotebook(ctx, "s", "", 0, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := nextOutsideEdit(t, sub).ChangedCells, []event.ChangedCell{{ID: md.ID, Index: 0, How: event.CellEdited}}; !reflect.DeepEqual(got, want) {
		t.Errorf("changes %+v, want %+v: the cell that ran was saved again unchanged", got, want)
	}
}

// watchingEngine is an engine on the fixture's server that checks the
// notebooks in use every interval.
func watchingEngine(t *testing.T, f *fixture, every time.Duration) *Engine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := New(ctx, Config{JupyterURL: f.srv.URL, JupyterToken: f.srv.Token, WatchInterval: every, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// nextOutsideEdit waits for the next outside-edit event.
func nextOutsideEdit(t *testing.T, sub *event.Subscription) *event.NotebookEvent {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev := <-sub.C():
			if ev.Type == event.EvNotebookOutsideEdit {
				return ev.Notebook
			}
		case <-deadline:
			t.Fatal("no outside edit reported within 60 s")
			return nil
		}
	}
}

// An edit made elsewhere is found by the watcher, with no call on the
// notebook: the workbench gets the cells that changed, and every session
// a notice for its next result on the notebook. The engine's own saves
// before it are not reported: the first report is the outside edit alone.
func testOutsideEditWatched(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := watchingEngine(t, f, 100*time.Millisecond)
	e.SessionOpened("s", "agent 1")
	e.SessionOpened("other", "agent 2")
	sub := e.Bus().SubscribeTo(64, event.EvNotebookOutsideEdit)
	defer sub.Close()
	if _, err := e.UseNotebook(ctx, UseRequest{Session: "s", Name: "nb", Path: f.path("watched.ipynb"), Mode: "create", KernelID: f.shared.get(t, f.client)}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		_, c, err := e.InsertCell(ctx, "s", "", -1, "code", fmt.Sprintf("x%d = %d", i, i))
		checkNoError(t, "insert", err)
		ids = append(ids, c.ID)
		// Give the watcher turns between our own saves.
		time.Sleep(150 * time.Millisecond)
	}
	_, _, err := e.EditCellSource(ctx, "s", "", CellRef{ID: ids[0]}, "x0 = 0", "x0 = 100", false)
	checkNoError(t, "edit", err)

	nb := f.disk(t, "watched.ipynb")
	nb.Cells[1].Source = "x1 = 'edited in JupyterLab'"
	added := nb.NewCell(notebook.Markdown, "# notes")
	nb.Cells = append(nb.Cells[:2], added)
	f.writeBehind(t, "watched.ipynb", nb)

	got := nextOutsideEdit(t, sub)
	want := []event.ChangedCell{{ID: ids[1], Index: 1, How: event.CellEdited}, {ID: added.ID, Index: 2, How: event.CellAdded}, {ID: ids[2], Index: 2, How: event.CellRemoved}}
	if got.Name != "nb" || got.Path != f.path("watched.ipynb") || !reflect.DeepEqual(got.ChangedCells, want) || got.MetadataChanged || got.At.IsZero() {
		t.Fatalf("outside edit %+v, want changes %+v", got, want)
	}
	text := event.OutsideEditText("nb", f.path("watched.ipynb"), got.At, want, false)
	for _, s := range []string{"s", "other"} {
		if lines := e.TakeNotices(s, "nb").Lines; len(lines) != 1 || lines[0] != text {
			t.Errorf("session %s notices %q, want [%q]", s, lines, text)
		}
	}
	if !strings.Contains(text, fmt.Sprintf("cell 1 (%s) edited, cell 2 (%s) added, cell 2 (%s) removed", ids[1], added.ID, ids[2])) {
		t.Errorf("text %q", text)
	}
	// The model is the file's now.
	if _, c, err := e.ReadCell(ctx, "s", "", CellRef{ID: ids[1]}); err != nil || c.Source != "x1 = 'edited in JupyterLab'" {
		t.Errorf("ReadCell = %+v, %v", c, err)
	}
}

// With the polling off, the check before a call finds the edit and
// reports it the same way.
func testOutsideEditBeforeCall(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	e.SessionOpened("s", "agent 1")
	sub := e.Bus().SubscribeTo(64, event.EvNotebookOutsideEdit)
	defer sub.Close()
	f.use(t, "s", "nb", "percall.ipynb", "create")
	_, c, err := e.InsertCell(ctx, "s", "", -1, "code", "a = 1")
	checkNoError(t, "insert", err)
	nb := f.disk(t, "percall.ipynb")
	nb.Cells[0].Source = "a = 2"
	f.writeBehind(t, "percall.ipynb", nb)
	// A change by id reloads first, reports, then applies.
	_, _, err = e.EditCellSource(ctx, "s", "", CellRef{ID: c.ID}, "a = 2", "a = 3", false)
	checkNoError(t, "edit by id", err)
	got := nextOutsideEdit(t, sub)
	if want := []event.ChangedCell{{ID: c.ID, Index: 0, How: event.CellEdited}}; !reflect.DeepEqual(got.ChangedCells, want) {
		t.Fatalf("changes %+v, want %+v", got.ChangedCells, want)
	}
	if lines := e.TakeNotices("s", "nb").Lines; len(lines) != 1 || !strings.Contains(lines[0], "was changed outside this server") {
		t.Errorf("notices %q", lines)
	}
	// Our own save is not an outside edit: the next outside one is
	// reported alone.
	nb = f.disk(t, "percall.ipynb")
	nb.Cells = append(nb.Cells, nb.NewCell(notebook.Code, "b = 1"))
	f.writeBehind(t, "percall.ipynb", nb)
	if _, _, err := e.ReadNotebook(ctx, "s", "", 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := nextOutsideEdit(t, sub); len(got.ChangedCells) != 1 || got.ChangedCells[0].How != event.CellAdded {
		t.Errorf("changes %+v", got.ChangedCells)
	}
}

// watchers counts the watcher goroutines of the notebook at path.
func watchers(t *testing.T, path string) int {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	// Goroutines a watcher starts (an HTTP connection's) inherit its
	// label: only the watcher itself runs watchFile.
	label := fmt.Sprintf("%q:%q", watchLabel, path)
	n := 0
	for _, block := range strings.Split(buf.String(), "\n\n") {
		if !strings.Contains(block, label) || !strings.Contains(block, "(*Engine).watchFile") {
			continue
		}
		count, _, _ := strings.Cut(block, " @")
		k, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil {
			t.Fatalf("goroutine profile block %q", block)
		}
		n += k
	}
	return n
}

// watchersSettle waits until the watcher goroutines of the notebooks at
// paths number want: a watcher started a moment ago may not have run far
// enough to carry its label.
func watchersSettle(t *testing.T, what string, paths []string, want ...int) {
	t.Helper()
	pollUntil(t, fmt.Sprintf("the watchers %s to number %v", what, want), func() bool {
		for i, p := range paths {
			if watchers(t, p) != want[i] {
				return false
			}
		}
		return true
	})
}

// A notebook is watched while in use: unuse and Close stop its watcher,
// and no goroutine is left.
func testWatcherStops(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := watchingEngine(t, f, 50*time.Millisecond)
	kid := f.shared.get(t, f.client)
	for _, n := range []string{"w1", "w2"} {
		if _, err := e.UseNotebook(ctx, UseRequest{Session: "s", Name: n, Path: f.path(n + ".ipynb"), Mode: "create", KernelID: kid}); err != nil {
			t.Fatal(err)
		}
	}
	both := []string{f.path("w1.ipynb"), f.path("w2.ipynb")}
	watchersSettle(t, "while in use", both, 1, 1)
	if _, err := e.UnuseNotebook(ctx, "s", "w1"); err != nil {
		t.Fatal(err)
	}
	// Unuse and Close wait for the watchers they stop: gone at once.
	if a, b := watchers(t, both[0]), watchers(t, both[1]); a != 0 || b != 1 {
		t.Fatalf("watchers after unuse of w1: %d, %d", a, b)
	}
	e.Close()
	if b := watchers(t, both[1]); b != 0 {
		t.Fatalf("watchers after Close: %d", b)
	}

	// Polling off: no watcher at all.
	f.use(t, "s", "off", "off.ipynb", "create")
	if n := watchers(t, f.path("off.ipynb")); n != 0 {
		t.Errorf("%d watchers with polling off", n)
	}
}
