package mcp

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Jupyter server that does not answer is worded as such however deep the
// engine wrapped it: which server, what to do, that work resumes by itself.
func TestJupyterNotAnsweringWording(t *testing.T) {
	t.Parallel()
	external := &jupyter.UnreachableError{Server: "http://127.0.0.1:8888/", Method: "GET", Path: "api/kernels", Reason: "connection refused", Err: syscall.ECONNREFUSED}
	managed := &jupyter.UnreachableError{Server: "http://127.0.0.1:9999/", Reason: "restarting", Err: jupyter.ErrUnreachable,
		State: &jupyter.ServerState{Phase: jupyter.PhaseRestarting, Attempt: 2, Cause: "killed by SIGKILL", Problem: "port 9999 is taken by another program"}}
	early := &jupyter.UnreachableError{Server: "http://127.0.0.1:7777/", Reason: "connection refused", Managed: true, Err: syscall.ECONNREFUSED}
	starting := &jupyter.UnreachableError{Server: "http://127.0.0.1:6666/", Reason: "starting", Managed: true, Err: jupyter.ErrUnreachable,
		State: &jupyter.ServerState{Phase: jupyter.PhaseStarting}}
	failed := &jupyter.UnreachableError{Server: "http://127.0.0.1:5555/", Reason: "failed", Managed: true, Err: jupyter.ErrUnreachable,
		State: &jupyter.ServerState{Phase: jupyter.PhaseFailed, Problem: "ModuleNotFoundError: No module named 'jupyter_server' (exited with status 1)"}}
	for _, c := range []struct {
		err     error
		managed bool
		want    []string
	}{
		{fmt.Errorf("sending the code to kernel k: %w", external), false, []string{"Jupyter at http://127.0.0.1:8888/ is not answering (connection refused)", "Start that Jupyter server again", "--jupyter-url", "by themselves"}},
		{early, true, []string{"Jupyter at http://127.0.0.1:7777/ is not answering (connection refused)", "manages has stopped", "restarted by itself", "restart_notebook"}},
		{managed, true, []string{"Jupyter at http://127.0.0.1:9999/ is not answering", "killed by SIGKILL", "attempt 2", "port 9999 is taken", "by themselves", "restart_notebook"}},
		{starting, true, []string{"Jupyter at http://127.0.0.1:6666/ is not answering yet", "manages is still starting", "Retry in a few seconds"}},
		{failed, false, []string{"the managed Jupyter server failed to start: ModuleNotFoundError: No module named 'jupyter_server' (exited with status 1).", "started again with the cause fixed", "--jupyter-url"}},
	} {
		res := errorResult("list_files", c.err)
		raw := res.Content[0].(*sdk.TextContent).Text
		if !res.IsError {
			t.Errorf("%v: not an error result", c.err)
		}
		for _, w := range c.want {
			if !strings.Contains(raw, w) {
				t.Errorf("text %q does not say %q", raw, w)
			}
		}
		if strings.Contains(raw, "manages") != c.managed {
			t.Errorf("text %q: only a managed server is said to be ours", raw)
		}
		if strings.Contains(raw, "Server error") {
			t.Errorf("text %q calls Jupyter not answering a server error of ours", raw)
		}
	}
}
