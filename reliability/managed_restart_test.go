//go:build linux

// These tests read /proc to see which processes a run leaves behind.

package reliability

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverStates reads the EvServerState payloads of a recording, in order.
func serverStates(t *testing.T, path string) []event.ServerEvent {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []event.ServerEvent
	for _, line := range strings.Split(string(data), "\n") {
		var ev event.Event
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Type != event.EvServerState || ev.Server == nil {
			continue
		}
		out = append(out, *ev.Server)
	}
	return out
}

// managedServerPID finds the jupyter-server the binary started.
func managedServerPID(t *testing.T, parent int) int {
	t.Helper()
	for _, p := range allProcs() {
		if p.ppid == parent && strings.Contains(p.cmdline, "jupyter_server.serverapp") {
			return p.pid
		}
	}
	t.Fatalf("no jupyter-server child of %d", parent)
	return 0
}

// The managed Jupyter server (the default: no --jupyter-url) is killed with
// SIGKILL: the engine starts it again at the same address and says so in
// its server state (the workbench header); calls during the outage fail at
// once saying what happened; afterwards the notebook in use is edited
// again, its lost kernel is named and restart_notebook recovers it, and a
// new notebook opens and runs.
func TestManagedJupyterRestartsAfterKill(t *testing.T) {
	jupytertest.Shared(t) // skips with the others when Jupyter is absent and JUPYTER_TESTS=skip
	root := t.TempDir()
	rec := filepath.Join(t.TempDir(), "events.jsonl")
	p := harness.StartHTTP(t, "managed-restart-token", "--root-dir", root, "--record", rec, "--log-level", "debug")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("binary stderr:\n%s", p.Stderr.String())
		}
	})
	cs := p.Connect(t)
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "m", "notebook_path": "m.ipynb", "mode": "create"})
	ok(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "x = 41"})
	if text, _ := ok(t, cs, "execute_code", map[string]any{"code": "print(40 + 2)"}); !strings.Contains(text, "42") {
		t.Fatalf("execute before the kill: %q", text)
	}

	// A call in flight when the server dies ends at once naming the fault.
	type answer struct {
		res *sdk.CallToolResult
		end time.Time
	}
	inflight := make(chan answer, 1)
	go func() {
		res := callTool(t, cs, "execute_code", map[string]any{"code": "import time; open('started', 'w').close(); time.sleep(30)", "timeout": 60})
		inflight <- answer{res, time.Now()}
	}()
	if !waitFor(60*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(root, "started"))
		return err == nil
	}) {
		t.Fatal("the kernel never started the sleep")
	}

	pid := managedServerPID(t, p.Pid())
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case a := <-inflight:
		text := textOf(a.res)
		t.Logf("in flight: execute_code ended %v after the kill: error=%v %s", a.end.Sub(killed).Round(time.Millisecond), a.res.IsError, text)
		if !a.res.IsError || !strings.Contains(text, "is not answering") || !strings.Contains(text, "this MCP server manages") {
			t.Errorf("the execution in flight when the managed server died says %q", text)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("the execution in flight when the managed server died did not end within 25 s")
	}
	var restarting event.ServerEvent
	if !waitFor(30*time.Second, func() bool {
		for _, st := range serverStates(t, rec) {
			if st.Jupyter == "restarting" {
				restarting = st
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no server state says the managed server is restarting; states: %+v", serverStates(t, rec))
	}
	t.Logf("server state %v after the kill: %+v", time.Since(killed).Round(time.Millisecond), restarting)
	if restarting.JupyterAttempt < 1 || !strings.Contains(restarting.JupyterCause, "SIGKILL") {
		t.Errorf("server state %+v: want attempt >= 1 and the cause", restarting)
	}
	// Calls while it is down fail at once saying so; a call that finds it
	// already back must simply work.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_files", nil},
		{"execute_code", map[string]any{"code": "print(1)", "timeout": 60}},
		{"insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "y = 1"}},
	} {
		start := time.Now()
		res := callTool(t, cs, c.tool, c.args)
		took := time.Since(start)
		text := textOf(res)
		t.Logf("down: %s took %v: error=%v %s", c.tool, took.Round(time.Millisecond), res.IsError, text)
		if !res.IsError {
			continue
		}
		if c.tool == "execute_code" && strings.Contains(text, "no longer exists") {
			continue // back already, and the kernel from before is named as gone
		}
		if !strings.Contains(text, "is not answering") || !strings.Contains(text, "being restarted (attempt") || strings.Contains(text, "managed-restart-token") {
			t.Errorf("%s while the managed server is down says %q", c.tool, text)
		}
		if took > 10*time.Second {
			t.Errorf("%s took %v to fail while the managed server is down", c.tool, took)
		}
	}

	var back time.Duration
	if !waitFor(120*time.Second, func() bool {
		sts := serverStates(t, rec)
		seen := false
		for _, st := range sts {
			if st.Jupyter == "restarting" {
				seen = true
			} else if seen && (st.Jupyter == "" || st.Jupyter == "up") { // up: the health check says so
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the managed server never came back; states: %+v", serverStates(t, rec))
	}
	back = time.Since(killed)
	t.Logf("back %v after the kill", back.Round(time.Millisecond))
	if newPID := managedServerPID(t, p.Pid()); newPID == pid {
		t.Fatal("the same jupyter-server process is still running")
	}

	// The notebook in use is edited again at once.
	ok(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "print('back')"})
	// Its kernel went with the server: executing names it as gone, and
	// restart_notebook gives the notebook a new one.
	res := callTool(t, cs, "execute_code", map[string]any{"code": "print(2 + 2)", "timeout": 60})
	t.Logf("execute after the restart: error=%v %s", res.IsError, textOf(res))
	if text := textOf(res); !res.IsError || !strings.Contains(text, "no longer exists") {
		t.Errorf("after the restart, execute_code on the kernel from before says %q: it should name the kernel as gone", text)
	}
	ok(t, cs, "restart_notebook", map[string]any{"notebook_name": "m"})
	if text, _ := ok(t, cs, "execute_code", map[string]any{"code": "print(2 + 2)", "timeout": 60}); !strings.Contains(text, "4") {
		t.Errorf("execute after the recovery: %q", text)
	}
	// A notebook opened after the restart runs.
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "n", "notebook_path": "n.ipynb", "mode": "create"})
	if text, _ := ok(t, cs, "execute_code", map[string]any{"code": "print(6 * 7)", "timeout": 60}); !strings.Contains(text, "42") {
		t.Errorf("execute on a notebook opened after the restart: %q", text)
	}
	nb := parseFile(t, filepath.Join(root, "m.ipynb"))
	var sources []string
	for _, c := range nb.Cells {
		sources = append(sources, c.Source)
	}
	// After the reference's one markdown cell that a created notebook holds.
	if got := strings.Join(sources, "|"); !strings.HasPrefix(got, "New Notebook Created by Jupyter MCP Server|x = 41") || !strings.HasSuffix(got, "print('back')") {
		t.Errorf("m.ipynb cells after the restart: %q", got)
	}
}
