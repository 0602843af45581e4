package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// An interrupt from the workbench stops the run, and its result says the
// person did it (the agent otherwise reads a bare KeyboardInterrupt); a run
// that is not stopped by one says nothing of it.
func testPersonInterrupt(t *testing.T, f *fixture) {
	e := f.e
	info := f.useOwnKernel(t, "s", "nb", "interrupt.ipynb", "create")
	sub := e.Bus().SubscribeTo(256, event.EvExecFinished)
	defer sub.Close()
	events := sub.C()
	time.AfterFunc(1500*time.Millisecond, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.InterruptKernel(ctx, info.KernelID); err != nil {
			t.Errorf("InterruptKernel: %v", err)
		}
	})
	res, err := e.InsertExecuteCell(ctxT(t), "s", "", -1, "import time\nprint('going', flush=True)\ntime.sleep(30)", ExecOptions{Timeout: 60 * time.Second})
	checkNoError(t, "execute", err)
	got := describe(res.Outputs)
	if !res.InterruptedByPerson || len(got) == 0 || got[len(got)-1] != "error:KeyboardInterrupt" {
		t.Fatalf("interrupted run: by person %v, outputs %q", res.InterruptedByPerson, got)
	}
	// The executions pane reads it as interrupted, not as a failure.
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-events:
			if ev.Type == event.EvExecFinished && ev.Exec.ID == res.ExecID {
				if ev.Exec.Status != "interrupted" {
					t.Errorf("exec finished with status %q, want interrupted", ev.Exec.Status)
				}
				done = true
			}
		case <-deadline:
			t.Fatal("no exec.finished event")
		}
	}
	res, err = e.ExecuteCell(ctxT(t), "s", "", CellRef{ID: res.Cell.ID}, ExecOptions{Timeout: 60 * time.Second})
	checkNoError(t, "execute again", err)
	if res.InterruptedByPerson {
		t.Error("a later run says the person interrupted it too")
	}
	res, err = e.ExecuteCode(ctxT(t), "s", "1/0", ExecOptions{Timeout: 10 * time.Second})
	checkNoError(t, "execute 1/0", err)
	if res.InterruptedByPerson || !strings.Contains(strings.Join(describe(res.Outputs), " "), "error:ZeroDivisionError") {
		t.Errorf("1/0: by person %v, outputs %q", res.InterruptedByPerson, describe(res.Outputs))
	}
}
