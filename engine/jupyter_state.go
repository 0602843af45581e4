package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// SetJupyterState tells the engine what the supervisor of the managed
// Jupyter server (the one the engine was started with) knows of it. While
// it is not up, every request to it fails at once with a
// *jupyter.UnreachableError that says so, and the workbench header shows it
// (EvServerState). Notebooks in use keep their place: when the server is
// back at the same address they are read and saved again as before; their
// kernels did not survive and say so when used.
func (e *Engine) SetJupyterState(st jupyter.ServerState) {
	e.first.SetServerState(st)
	var old *jupyter.ServerState
	if st.Phase == jupyter.PhaseUp {
		// The supervisor saw it answer with the token: up, until the
		// next check says otherwise (jupyter_health.go).
		e.health.Store(&jupyterHealth{client: e.first, state: event.JupyterUp})
		old = e.jupyterState.Swap(nil)
	} else {
		old = e.jupyterState.Swap(&st)
	}
	if old == nil && st.Phase == jupyter.PhaseUp {
		return // up, as it was: nothing to tell
	}
	if e.jupyterClient() == e.first {
		e.calls.PublishState()
	}
}

// fillJupyterState puts the managed server's state into a header event,
// when that server is the one in use and it is not up.
func (e *Engine) fillJupyterState(ev *event.ServerEvent) {
	st := e.jupyterState.Load()
	if st == nil || e.jupyterClient() != e.first {
		e.fillJupyterHealth(ev)
		return
	}
	ev.Jupyter = string(st.Phase)
	ev.JupyterAttempt = st.Attempt
	ev.JupyterCause = st.Cause
	ev.JupyterProblem = st.Problem
}

// whyDisconnected adds to the error of a run that lost its kernel's
// connection what the server's REST API says: when Jupyter itself is not
// answering, that (naming it) is the fault, not the kernel. Other errors
// pass unchanged.
func whyDisconnected(client *jupyter.Client, err error) error {
	if client == nil || !errors.Is(err, jupyter.ErrDisconnected) || errors.Is(err, jupyter.ErrUnreachable) {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, serr := client.Status(ctx); errors.Is(serr, jupyter.ErrUnreachable) {
		return fmt.Errorf("%w: %w", err, serr)
	}
	return err
}
