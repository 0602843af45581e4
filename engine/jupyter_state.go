package engine

import "github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"

// SetJupyterState tells the engine what the supervisor of the managed
// Jupyter server (the one the engine was started with) knows of it. While
// it is not up, every request to it fails at once with a
// *jupyter.UnreachableError that says so, and the workbench header shows it
// (EvServerState). Notebooks in use keep their place: when the server is
// back at the same address they are read and saved again as before; their
// kernels did not survive and say so when used.
func (e *Engine) SetJupyterState(st jupyter.ServerState) {
	e.first.SetServerState(st)
	if st.Phase == jupyter.PhaseUp {
		e.jupyterState.Store(nil)
	} else {
		e.jupyterState.Store(&st)
	}
	if e.jupyterClient() == e.first {
		e.calls.publishState()
	}
}

// fillJupyterState puts the managed server's state into a header event,
// when that server is the one in use and it is not up.
func (e *Engine) fillJupyterState(ev *ServerEvent) {
	st := e.jupyterState.Load()
	if st == nil || e.jupyterClient() != e.first {
		return
	}
	ev.Jupyter = string(st.Phase)
	ev.JupyterAttempt = st.Attempt
	ev.JupyterCause = st.Cause
	ev.JupyterProblem = st.Problem
}
