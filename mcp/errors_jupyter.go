package mcp

import (
	"errors"
	"fmt"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// Listed with the other wordings (errors.go) for the user errors that carry
// a Jupyter outage; errorResult also asks it first for every other error,
// since a server not answering is no fault of the agent's arguments and
// not a failure of ours either.

// wordJupyterErrors words the errors of a Jupyter server that is not
// answering: which server, what happened, and that the agent need not (and
// cannot) fix its arguments: the server comes back, and with it the work,
// without restarting this MCP server. It answers false for every other
// error.
func wordJupyterErrors(tool string, err error) (string, bool) {
	var e *jupyter.UnreachableError
	if !errors.As(err, &e) {
		return "", false
	}
	if st := e.State; st != nil && st.Phase == jupyter.PhaseFailed {
		return e.Error() + ". Nothing that needs Jupyter can work until this MCP server is started again with the cause fixed, or pointed at a running Jupyter server (--jupyter-url / JUPYTER_URL).", true
	}
	if st := e.State; st != nil && st.Phase == jupyter.PhaseStarting {
		return fmt.Sprintf("Jupyter at %s is not answering yet: the Jupyter server this MCP server manages is still starting. Retry in a few seconds: calls work once it is up.", e.Server), true
	}
	if st := e.State; st != nil {
		text := fmt.Sprintf("Jupyter at %s is not answering: the Jupyter server this MCP server manages went down (%s) and is being restarted (attempt %d)", e.Server, st.Cause, st.Attempt)
		if st.Problem != "" {
			text += "; the last attempt failed: " + st.Problem
		}
		text += ". Retry in a few seconds: calls work again by themselves once it is back. Kernels from before it stopped are gone with their variables; restart_notebook gives a notebook in use a new kernel."
		return text, true
	}
	if e.Managed {
		return fmt.Sprintf("Jupyter at %s is not answering (%s): the Jupyter server this MCP server manages has stopped and is restarted by itself. Retry in a few seconds: calls work again once it is back. Kernels from before it stopped are gone with their variables; restart_notebook gives a notebook in use a new kernel.", e.Server, e.Reason), true
	}
	text := fmt.Sprintf("Jupyter at %s is not answering (%s). Start that Jupyter server again, or check its URL (--jupyter-url / JUPYTER_URL", e.Server, e.Reason)
	if tool != "connect_to_jupyter" {
		text += "; connect_to_jupyter switches to another server"
	}
	text += "). Calls work again by themselves once it answers, without restarting this MCP server; kernels that did not survive are named when used."
	return text, true
}
