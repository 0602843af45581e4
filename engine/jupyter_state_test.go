package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// While the supervisor says the managed server is restarting, calls fail
// at once with the state (no request leaves: the server here is in fact up,
// and a stranger on its port must not get our token), the header event
// says so, and nothing is changed; when it is up again, work resumes on the
// same notebook without reopening it.
func TestJupyterStateGatesCalls(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	dir := srv.Subdir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := New(ctx, Config{JupyterURL: srv.URL, JupyterToken: srv.Token, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.UseNotebook(ctx, UseRequest{Session: "s", Name: "g", Path: dir + "/g.ipynb", Mode: "create"}); err != nil {
		t.Fatal(err)
	}
	sub := e.Bus().Subscribe(64)
	defer sub.Close()
	nextState := func() event.ServerEvent {
		t.Helper()
		for {
			select {
			case ev := <-sub.C():
				if ev.Type == event.EvServerState {
					return *ev.Server
				}
			case <-ctx.Done():
				t.Fatal("no server state event")
			}
		}
	}

	e.SetJupyterState(jupyter.ServerState{Phase: jupyter.PhaseRestarting, Attempt: 2, Cause: "killed by SIGKILL", Problem: "port 1 is taken by another program"})
	if st := nextState(); st.Jupyter != "restarting" || st.JupyterAttempt != 2 || st.JupyterProblem == "" || st.JupyterCause != "killed by SIGKILL" {
		t.Errorf("server state while restarting: %+v", st)
	}
	if st := e.Calls().State(); st.Jupyter != "restarting" {
		t.Errorf("ServerState while restarting: %+v", st)
	}
	_, err = e.ListFiles(ctx, dir, 1, "")
	var ue *jupyter.UnreachableError
	if !errors.As(err, &ue) || ue.State == nil || ue.State.Attempt != 2 {
		t.Fatalf("ListFiles while restarting: %v", err)
	}
	if _, _, err := e.InsertCell(ctx, "s", "", -1, "code", "x = 1"); !errors.Is(err, jupyter.ErrUnreachable) {
		t.Fatalf("InsertCell while restarting: %v", err)
	}

	e.SetJupyterState(jupyter.ServerState{Phase: jupyter.PhaseUp})
	if st := nextState(); st.Jupyter != event.JupyterUp || st.JupyterAttempt != 0 {
		t.Errorf("server state when up again: %+v", st)
	}
	if _, _, err := e.InsertCell(ctx, "s", "", -1, "code", "x = 1"); err != nil {
		t.Fatalf("InsertCell when up again: %v", err)
	}
	if _, err := e.ListFiles(ctx, dir, 1, ""); err != nil {
		t.Fatalf("ListFiles when up again: %v", err)
	}
	// The insert refused during the outage left nothing behind.
	if _, cells, err := e.ReadNotebook(ctx, "s", "", 0, 0); err != nil || len(cells) != 1 {
		t.Fatalf("ReadNotebook when up again: %d cells, %v", len(cells), err)
	}
}

// The header's words for the managed server's phases are the supervisor's
// own (engine/event does not import engine/jupyter).
func TestJupyterPhaseWords(t *testing.T) {
	t.Parallel()
	if event.JupyterStarting != string(jupyter.PhaseStarting) || event.JupyterFailed != string(jupyter.PhaseFailed) {
		t.Errorf("event.JupyterStarting %q, JupyterFailed %q; the phases are %q and %q",
			event.JupyterStarting, event.JupyterFailed, jupyter.PhaseStarting, jupyter.PhaseFailed)
	}
}
