package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/nbfile"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// queueThenRun starts each call in turn while d's writer is held, waiting
// until each has queued before the next starts (so the first is the leader
// and the group holds them in this order), runs between(), then lets the
// group go and returns the calls' errors once all answered.
func queueThenRun(t *testing.T, d *document, between func(), calls ...func() error) []error {
	t.Helper()
	d.writeMu.Lock()
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = call() }()
		pollUntil(t, fmt.Sprintf("call %d to queue", i), func() bool {
			d.queue.mu.Lock()
			defer d.queue.mu.Unlock()
			return len(d.queue.pending) == i+1
		})
	}
	if between != nil {
		between()
	}
	d.writeMu.Unlock()
	wg.Wait()
	return errs
}

// testGroupCommitEdges: a change that altered the working copy before it
// failed, or panicked, leaves nothing of itself in the group's save; the
// leader's caller going away fails its own change only; a group whose save
// failed leaves no undo record.
func testGroupCommitEdges(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "edges.ipynb", "create")
	_, _, err := e.InsertCell(ctx, "s", "nb", -1, "code", "a")
	checkNoError(t, "insert", err)
	d, err := e.lookup("s", "nb")
	checkNoError(t, "lookup", err)
	sc := &saveCounter{path: "/api/contents/" + f.path("edges.ipynb")}
	client, err := jupyter.NewClient(f.srv.URL, f.srv.Token, jupyter.Options{HTTPClient: &http.Client{Transport: sc}})
	checkNoError(t, "client", err)
	d.file = nbfile.New(client, d.path, d.name, nil, nbfile.LockTimes{})
	insert := func(ctx context.Context, src string) func() error {
		return func() error { _, _, err := e.InsertCell(ctx, "s", "nb", -1, "code", src); return err }
	}
	onDisk := func(want ...string) {
		t.Helper()
		if got := sources(f.disk(t, "edges.ipynb")); !equalStrings(got, want) {
			t.Fatalf("on disk %q, want %q", got, want)
		}
		if got := sources(d.model()); !equalStrings(got, want) {
			t.Fatalf("in memory %q, want %q", got, want)
		}
	}

	// A change that inserted a cell and then failed (as an undo of
	// several calls does when the second conflicts) fails alone, and its
	// cell is in neither the file nor the model.
	refused := Userf("refused after changing the notebook")
	errs := queueThenRun(t, d, nil,
		insert(ctx, "b"),
		func() error {
			return e.mutate(ctx, d, "s", false, func(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
				nb.Cells = append(nb.Cells, nb.NewCell(notebook.Code, "half"))
				return nil, refused
			})
		},
		insert(ctx, "c"))
	checkNoError(t, "insert b", errs[0])
	if !errors.Is(errs[1], refused) {
		t.Errorf("the change that failed halfway: %v, want its own error", errs[1])
	}
	checkNoError(t, "insert c", errs[2])
	onDisk("a", "b", "c")

	// A change that panics (a bug) fails alone: the leader running it for
	// another call does not leave the notebook's writer held and the
	// group's other calls waiting for ever.
	errs = queueThenRun(t, d, nil,
		insert(ctx, "p1"),
		func() error {
			return e.mutate(ctx, d, "s", false, func(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
				nb.Cells = append(nb.Cells, nb.NewCell(notebook.Code, "panicked"))
				var cells []*notebook.Cell
				_ = cells[len(nb.Cells)] // index out of range
				return nil, nil
			})
		},
		insert(ctx, "p2"))
	checkNoError(t, "insert p1", errs[0])
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "internal error") {
		t.Errorf("the change that panicked: %v, want an internal error", errs[1])
	}
	checkNoError(t, "insert p2", errs[2])
	onDisk("a", "b", "c", "p1", "p2")
	_, _, err = e.DeleteCells(ctx, "s", "nb", []int{3, 4}, nil)
	checkNoError(t, "a change after the panic", err)
	onDisk("a", "b", "c")

	// The leader's caller goes away while the group waits: its change is
	// left out, the others are saved.
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs = queueThenRun(t, d, cancel, insert(lctx, "gone"), insert(ctx, "d"), insert(ctx, "e"))
	if !errors.Is(errs[0], context.Canceled) {
		t.Errorf("the leader whose caller went away: %v, want context.Canceled", errs[0])
	}
	checkNoError(t, "insert d", errs[1])
	checkNoError(t, "insert e", errs[2])
	onDisk("a", "b", "c", "d", "e")

	// A group whose save failed keeps no undo record of its calls: there
	// is nothing on disk to revert.
	var ids []string
	undoable := func(src string) func() error {
		id := fmt.Sprintf("edges-%s", src)
		ids = append(ids, id)
		return func() error {
			cctx, finish, err := e.Calls().Begin(ctx, calls.Start{ID: id, Session: "s", Tool: "insert_cell"})
			if err != nil {
				return err
			}
			defer finish(calls.Outcome{})
			return insert(cctx, src)()
		}
	}
	sc.failSaves.Store(1)
	errs = queueThenRun(t, d, nil, undoable("x"), undoable("y"))
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("call %d of a group whose save failed: %v, want the save's error", i, err)
		}
	}
	onDisk("a", "b", "c", "d", "e")
	for _, id := range ids {
		if e.undo.Has(id) {
			t.Errorf("call %s failed to save, yet an undo record of it is kept", id)
		}
	}
}
