package ui

import (
	"strings"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// The header says when the managed Jupyter server is being restarted, with
// the attempt and why the last one failed, and goes back to normal when the
// server is up again.
func TestHeaderShowsJupyterRestarting(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 160, 24, scenario(t))
	m = send(m, eventsMsg{{Type: event.EvServerState, Server: &event.ServerEvent{
		Jupyter: "restarting", JupyterAttempt: 3, JupyterCause: "killed by SIGKILL", JupyterProblem: "port 8888 is taken by another program",
	}}})
	header := strings.SplitN(m.View(), "\n", 3)
	if got := header[0] + header[1]; !strings.Contains(got, "jupyter restarting (attempt 3)…") || !strings.Contains(got, "port 8888 is taken") {
		t.Errorf("header while restarting:\n%s\n%s", header[0], header[1])
	}
	m = send(m, eventsMsg{{Type: event.EvServerState, Server: &event.ServerEvent{}}})
	if strings.Contains(m.View(), "restarting") {
		t.Error("the header still says restarting once the server is up")
	}
}

// A managed Jupyter server launched with the workbench says it is starting
// in the header from the first frame until it is up; one that cannot start
// says why, in the same place.
func TestHeaderShowsJupyterStarting(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 160, 24, nil)
	m = send(m, eventsMsg{{Type: event.EvServerState, Server: &event.ServerEvent{Jupyter: event.JupyterStarting}}})
	header := strings.SplitN(m.View(), "\n", 3)
	if got := header[1]; !strings.Contains(got, "jupyter starting…") {
		t.Errorf("header while starting:\n%s\n%s", header[0], header[1])
	}
	up := send(m, eventsMsg{{Type: event.EvServerState, Server: &event.ServerEvent{}}})
	if v := up.View(); strings.Contains(v, "starting") {
		t.Errorf("the header still says starting once the server is up:\n%s", v)
	}
	failed := send(m, eventsMsg{{Type: event.EvServerState, Server: &event.ServerEvent{
		Jupyter: event.JupyterFailed, JupyterProblem: "ModuleNotFoundError: No module named 'jupyter_server'\n(exited with status 1)",
	}}})
	header = strings.SplitN(failed.View(), "\n", 4)
	if got := header[1]; !strings.Contains(got, "jupyter failed to start") || strings.Contains(got, "starting…") {
		t.Errorf("header after a failed start:\n%s\n%s", header[0], header[1])
	}
	if got := header[2]; !strings.Contains(got, "The managed Jupyter server failed to start: ModuleNotFoundError: No module named 'jupyter_server'") {
		t.Errorf("the header's third line does not say what failed:\n%s", got)
	}
}
