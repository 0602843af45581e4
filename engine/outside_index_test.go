package engine

import (
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// An edit made elsewhere that the watcher (or another session's read)
// reloaded before an agent's next change still refuses that agent's change
// by index until its session is told of the edit: the index it read may
// now name another cell. Once told (its next result on the notebook, the
// read_notebook the refusal asks for, carries the notice), the same change
// by index goes through.
func testIndexEditAfterWatchedReload(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := watchingEngine(t, f, 50*time.Millisecond)
	e.SessionOpened("s", "agent 1")
	sub := e.Bus().SubscribeTo(64, event.EvNotebookOutsideEdit)
	defer sub.Close()
	if _, err := e.UseNotebook(ctx, UseRequest{Session: "s", Name: "nb", Path: f.path("watchedidx.ipynb"), Mode: "create", KernelID: f.shared.get(t, f.client)}); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"a = 1", "b = 2"} {
		_, _, err := e.InsertCell(ctx, "s", "", -1, "code", src)
		checkNoError(t, "insert", err)
	}
	if _, _, err := e.ReadNotebook(ctx, "s", "", 0, 0); err != nil {
		t.Fatal(err)
	}

	// A person inserts a cell on top: the agent's index 1 ("b = 2") is
	// now "a = 1".
	nb := f.disk(t, "watchedidx.ipynb")
	nb.Cells = append([]*notebook.Cell{nb.NewCell(notebook.Code, "z = 0")}, nb.Cells...)
	f.writeBehind(t, "watchedidx.ipynb", nb)
	nextOutsideEdit(t, sub) // the watcher reloaded it, not the change below

	_, _, err := e.OverwriteCellSource(ctx, "s", "", CellRef{Index: ptr(1)}, "b = 20")
	wantErrorAs[*NotebookReloadedError](t, err)
	if got := sources(f.disk(t, "watchedidx.ipynb")); !equalStrings(got, []string{"z = 0", "a = 1", "b = 2"}) {
		t.Fatalf("on disk after the refused change: %q", got)
	}

	// Told (the read's result takes the notice), the agent's indices are
	// the file's again.
	if lines := e.TakeNotices("s", "nb").Lines; len(lines) != 1 {
		t.Fatalf("notices %q, want the outside edit", lines)
	}
	_, _, err = e.OverwriteCellSource(ctx, "s", "", CellRef{Index: ptr(2)}, "b = 20")
	checkNoError(t, "overwrite by index once told", err)
	if got := sources(f.disk(t, "watchedidx.ipynb")); !equalStrings(got, []string{"z = 0", "a = 1", "b = 20"}) {
		t.Fatalf("on disk: %q", got)
	}
}
