package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

func TestChangedFacts(t *testing.T) {
	t.Parallel()
	nb := event.BoundFact{What: factNotebook, Value: "nb (a.ipynb)"}
	k1 := event.BoundFact{What: factRunsOn, Value: "kernel 1"}
	c1 := event.BoundFact{What: factCells, Value: "c1"}
	s1 := event.BoundFact{What: factSources, Value: "1:a"}
	for _, tc := range []struct {
		was, now []event.BoundFact
		want     string
	}{
		{[]event.BoundFact{nb, k1, c1, s1}, []event.BoundFact{nb, k1, c1, s1}, ""},
		{nil, nil, ""},
		{[]event.BoundFact{nb, k1, c1, s1}, []event.BoundFact{nb, k1, c1, {What: factSources, Value: "1:b"}}, "the source of cell c1"},
		{[]event.BoundFact{nb, c1, s1}, []event.BoundFact{nb, {What: factCells, Value: "c2, c3"}, {What: factSources, Value: "1:a1:b"}},
			"which cells it acts on; the sources of cells c2, c3"},
		{[]event.BoundFact{nb, k1}, []event.BoundFact{{What: factRunsOn, Value: "sandbox s (eval, sbx-1)"}}, "the notebook; where the code runs"},
		// A preview that found no notebook, a call that finds one.
		{nil, []event.BoundFact{nb, k1}, "the notebook; where the code runs"},
	} {
		if got := changedFacts(tc.was, tc.now); got != tc.want {
			t.Errorf("changedFacts(%v, %v) = %q, want %q", tc.was, tc.now, got, tc.want)
		}
	}
}

// Every held change and run, allowed on its preview with nothing changed
// since, runs on that one decision: the facts the preview shows are the
// ones the call finds as it runs, op by op. (A change in between holds it
// again: mcp/bound_test.go, as an agent would try it.)
func TestHeldCallsRunOnOneDecision(t *testing.T) {
	f := newFixture(t, jupytertest.Shared(t), &sharedKernel{})
	e := f.e
	ctx := ctxT(t)
	kid := f.shared.get(t, f.client)
	f.use(t, "s", "nb", "bound.ipynb", "create")
	ids := insertCells(t, e, "s", "a = 1", "# Notes", "b = 2", "c = 3")
	e.Calls().SetApproval(calls.ApproveAll, time.Minute)
	defer e.Calls().AttachWorkbench()()
	sub := e.Bus().SubscribeTo(64, event.EvCallHeld)
	defer sub.Close()

	n := 0
	allowed := func(t *testing.T, req PreviewRequest) context.Context {
		t.Helper()
		n++
		id := "c" + string(rune('a'+n))
		type begun struct {
			ctx context.Context
			err error
		}
		ch := make(chan begun, 1)
		go func() {
			cctx, _, err := e.Calls().Begin(ctx, calls.Start{ID: id, Session: "s", Tool: "t", RunsCode: true,
				Preview: func(ctx context.Context) *event.CallPreview { p := e.Preview(ctx, "s", req); return &p }})
			ch <- begun{cctx, err}
		}()
		select {
		case ev := <-sub.C():
			if ev.Call.Preview == nil || ev.Call.Preview.Problem != "" || len(ev.Call.Preview.Bound) == 0 {
				t.Fatalf("held with %+v", ev.Call.Preview)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("not held")
		}
		if err := e.Calls().Decide(id, calls.Verdict{Allow: true}); err != nil {
			t.Fatal(err)
		}
		b := <-ch
		if b.err != nil {
			t.Fatal(b.err)
		}
		return b.ctx
	}
	// runs runs call, failing when it is held again instead of running.
	runs := func(t *testing.T, name string, req PreviewRequest, call func(ctx context.Context) error) {
		t.Helper()
		cctx := allowed(t, req)
		done := make(chan error, 1)
		go func() { done <- call(cctx) }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		case ev := <-sub.C():
			t.Fatalf("%s: held again although nothing changed (%s): %+v", name, ev.Call.Preview.Changed, ev.Call.Preview)
		}
	}
	runs(t, "edit", PreviewRequest{Op: PreviewEdit, Cell: CellRef{Index: ptr(0)}, Old: "1", New: "10"}, func(ctx context.Context) error {
		_, _, err := e.EditCellSource(ctx, "s", "", CellRef{Index: ptr(0)}, "1", "10", false)
		return err
	})
	runs(t, "overwrite", PreviewRequest{Op: PreviewOverwrite, Notebook: "nb", Cell: CellRef{ID: ids[2]}, Source: "b = 20"}, func(ctx context.Context) error {
		_, _, err := e.OverwriteCellSource(ctx, "s", "nb", CellRef{ID: ids[2]}, "b = 20")
		return err
	})
	runs(t, "overwrite to the same", PreviewRequest{Op: PreviewOverwrite, Cell: CellRef{ID: ids[2]}, Source: "b = 20"}, func(ctx context.Context) error {
		_, _, err := e.OverwriteCellSource(ctx, "s", "", CellRef{ID: ids[2]}, "b = 20")
		return err
	})
	runs(t, "insert", PreviewRequest{Op: PreviewInsert, Index: 1, CellType: "code", Source: "x = 0"}, func(ctx context.Context) error {
		_, _, err := e.InsertCell(ctx, "s", "", 1, "code", "x = 0")
		return err
	})
	runs(t, "append", PreviewRequest{Op: PreviewInsert, Index: -1, CellType: "markdown", Source: "# end"}, func(ctx context.Context) error {
		_, _, err := e.InsertCell(ctx, "s", "", -1, "markdown", "# end")
		return err
	})
	runs(t, "move", PreviewRequest{Op: PreviewMove, Cell: CellRef{Index: ptr(1)}, Target: CellRef{ID: ids[3]}}, func(ctx context.Context) error {
		_, _, _, err := e.MoveCell(ctx, "s", "", CellRef{Index: ptr(1)}, CellRef{ID: ids[3]})
		return err
	})
	runs(t, "delete", PreviewRequest{Op: PreviewDelete, Indices: []int{5, 1}}, func(ctx context.Context) error {
		_, _, err := e.DeleteCells(ctx, "s", "", []int{5, 1}, nil)
		return err
	})
	runs(t, "run a cell", PreviewRequest{Op: PreviewRunCell, Cell: CellRef{ID: ids[0]}}, func(ctx context.Context) error {
		_, err := e.ExecuteCell(ctx, "s", "", CellRef{ID: ids[0]}, ExecOptions{})
		return err
	})
	runs(t, "insert and run", PreviewRequest{Op: PreviewInsertRun, Index: 0, Source: "y = 1"}, func(ctx context.Context) error {
		_, err := e.InsertExecuteCell(ctx, "s", "", 0, "y = 1", ExecOptions{})
		return err
	})
	runs(t, "run code", PreviewRequest{Op: PreviewRunCode, Source: "z = 1"}, func(ctx context.Context) error {
		_, err := e.ExecuteCode(ctx, "s", "z = 1", ExecOptions{})
		return err
	})
	runs(t, "run code on a kernel", PreviewRequest{Op: PreviewRunCode, Source: "z = 2", KernelID: kid}, func(ctx context.Context) error {
		_, err := e.ExecuteCode(ctx, "s", "z = 2", ExecOptions{KernelID: kid})
		return err
	})

	// And once something changed: held again, denied, not run.
	_, ran, err := e.ReadCell(ctx, "s", "", CellRef{ID: ids[0]})
	if err != nil || ran.ExecutionCount == nil {
		t.Fatalf("the cell run above: %+v %v", ran, err)
	}
	cctx := allowed(t, PreviewRequest{Op: PreviewRunCell, Cell: CellRef{ID: ids[0]}})
	if _, _, err := e.OverwriteCellSource(ctx, "s", "", CellRef{ID: ids[0]}, "a = 'changed'"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := e.ExecuteCell(cctx, "s", "", CellRef{ID: ids[0]}, ExecOptions{}); done <- err }()
	select {
	case ev := <-sub.C():
		if !strings.Contains(ev.Call.Preview.Changed, "the source of cell "+ids[0]) || ev.Call.Preview.Code != "a = 'changed'" {
			t.Fatalf("held again with %+v", ev.Call.Preview)
		}
		if err := e.Calls().Decide(ev.Call.ID, calls.Verdict{}); err != nil {
			t.Fatal(err)
		}
	case err := <-done:
		t.Fatalf("ran the changed cell without a new decision (err %v)", err)
	}
	if err := <-done; err == nil || !IsUserError(err) {
		t.Fatalf("denied when held again: %v", err)
	}
	if _, c, err := e.ReadCell(ctx, "s", "", CellRef{ID: ids[0]}); err != nil || c.ExecutionCount == nil || *c.ExecutionCount != *ran.ExecutionCount {
		t.Fatalf("the denied cell ran (or its outputs were cleared): %+v %v", c, err)
	}
}
