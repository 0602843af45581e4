//go:build linux

// These tests read /proc to see which processes a run leaves behind.

package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// The binary as a person runs it, on its own managed Jupyter server: a
// kernel killed mid-execution, a client that hangs up mid-execution, then
// SIGTERM, after which nothing it started may be left running. The log at
// debug level (which carries the managed server's own output) must not hold
// the managed server's token.
func TestManagedLifecycle(t *testing.T) {
	jupytertest.Shared(t) // skips with the others when Jupyter is absent and JUPYTER_TESTS=skip
	root := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "managed.log")
	if f := os.Getenv("RELIABILITY_KEEP_LOG"); f != "" {
		logFile = f
	}
	p := harness.StartHTTP(t, "lifecycle-token", "--root-dir", root, "--log-level", "debug", "--log-file", logFile)
	t.Cleanup(func() {
		// Whatever happened, leave no server or kernel behind.
		killAll(append(descendantsOf(p.Cmd.Process.Pid), mentioning(root)...))
	})
	cs := p.Connect(t)
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "life", "notebook_path": "life.ipynb", "mode": "create"})

	kernelPID := func() int {
		text, _ := ok(t, cs, "execute_code", map[string]any{"code": "import os; print(os.getpid())"})
		pid, err := strconv.Atoi(strings.TrimSpace(regexp.MustCompile(`\d+`).FindString(text)))
		if err != nil || !alive(pid) {
			t.Fatalf("kernel pid from %q: %v", text, err)
		}
		return pid
	}

	t.Run("kernel killed mid-execution", func(t *testing.T) {
		pid := kernelPID()
		go func() {
			time.Sleep(1500 * time.Millisecond)
			syscall.Kill(pid, syscall.SIGKILL)
		}()
		start := time.Now()
		text := fails(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1,
			"cell_source": "import time\nprint('before', flush=True)\ntime.sleep(30)\nprint('never')", "timeout": 60},
			"died", "restart_notebook")
		if took := time.Since(start); took > 15*time.Second {
			t.Errorf("the dead kernel was noticed after %v", took)
		}
		t.Logf("dead kernel: %s", text)
		// Jupyter's own restarter may already have put a fresh kernel in
		// its place (the death was reported above, with the lost state);
		// either way the next call must answer, not hang.
		res := callTool(t, cs, "execute_code", map[string]any{"code": "import os; os.getpid()", "timeout": 20})
		t.Logf("execute_code after the death (old pid %d): error=%v %s", pid, res.IsError, textOf(res))
		ok(t, cs, "restart_notebook", map[string]any{"notebook_name": "life"})
		if text, _ := ok(t, cs, "execute_code", map[string]any{"code": "print(6*7)"}); !strings.Contains(text, "42") {
			t.Errorf("after restart_notebook: %q", text)
		}
		if newPID := kernelPID(); newPID == pid {
			t.Errorf("the kernel pid did not change")
		}
	})

	t.Run("client gone mid-execution", func(t *testing.T) {
		r := newRPC(t, p.Endpoint, p.Token)
		r.initialize(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		code, body, _, err := r.post(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"use_notebook","arguments":{"notebook_name":"life","notebook_path":"life.ipynb"}}}`), nil)
		if err != nil || code != 200 || strings.Contains(body, `"isError":true`) {
			t.Fatalf("use_notebook: %d %v %s", code, err, body)
		}
		// The client hangs up half a second into a three-second cell.
		hang, hangUp := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer hangUp()
		_, _, _, err = r.post(hang, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"insert_execute_code_cell","arguments":{"cell_index":-1,"cell_source":"import time\ntime.sleep(3)\nprint('done')"}}}`), nil)
		if err == nil {
			t.Fatalf("the call returned before the client hung up")
		}
		// The output lands in the file anyway.
		path := filepath.Join(root, "life.ipynb")
		var last string
		if !waitFor(20*time.Second, func() bool {
			data, _ := os.ReadFile(path)
			last = string(data)
			return strings.Contains(last, "time.sleep(3)") && strings.Contains(last, "done\\n")
		}) {
			t.Fatalf("the output of the abandoned call never reached the file:\n%s", truncate(last, 3000))
		}
		nb := parseFile(t, path)
		c := nb.Cells[len(nb.Cells)-1]
		if !strings.Contains(c.Source, "time.sleep(3)") || len(c.Outputs) == 0 || c.ExecutionCount == nil {
			t.Errorf("last cell after the hang-up: %+v", c)
		}
	})

	t.Run("SIGTERM", func(t *testing.T) {
		kpid := kernelPID()
		// A long execution is running when the signal comes.
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": "import time; time.sleep(60)", "timeout": 90}})
		}()
		time.Sleep(500 * time.Millisecond)
		started := descendantsOf(p.Cmd.Process.Pid)
		started = append(started, mentioning(root)...)
		var jupyterPID int
		for _, s := range started {
			if strings.Contains(s.cmdline, "--ServerApp.root_dir="+root) {
				jupyterPID = s.pid
			}
		}
		if jupyterPID == 0 || !alive(kpid) {
			t.Fatalf("before SIGTERM: jupyter-server pid %d, kernel %d alive %v; processes %v", jupyterPID, kpid, alive(kpid), started)
		}
		start := time.Now()
		if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.Exited():
		case <-time.After(15 * time.Second):
			t.Fatalf("still running 15s after SIGTERM; stderr:\n%s", p.Stderr.String())
		}
		took := time.Since(start)
		t.Logf("exited %v after SIGTERM with %v", took.Round(time.Millisecond), p.WaitErr())
		// About 4 s on a quiet machine (most of it Jupyter stopping its
		// kernels); the bound catches a shutdown that waits something out,
		// not a slow machine.
		if took > 10*time.Second {
			t.Errorf("took %v to exit after SIGTERM", took)
		}
		if code := p.Cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("exit code %d after SIGTERM; stderr:\n%s", code, p.Stderr.String())
		}
		// Nothing it started survives it.
		if !waitFor(3*time.Second, func() bool {
			for _, s := range started {
				if alive(s.pid) {
					return false
				}
			}
			return len(mentioning(root)) == 0
		}) {
			var left []string
			for _, s := range append(started, mentioning(root)...) {
				if alive(s.pid) {
					left = append(left, fmt.Sprintf("%d %s", s.pid, s.cmdline))
				}
			}
			t.Errorf("processes left after SIGTERM:\n%s", strings.Join(left, "\n"))
		}
	})

	// The managed server prints its URL with the token; at debug level that
	// output is logged, and must be redacted.
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "jupyter-server") {
		t.Errorf("the debug log does not carry the managed server's output: nothing was checked")
	}
	if m := regexp.MustCompile(`token=[0-9a-fA-F]{8,}`).FindString(string(data)); m != "" {
		t.Errorf("the log holds the managed server's token: %q", m)
	}
	for _, out := range []string{p.Stderr.String(), p.Stdout.String()} {
		if m := regexp.MustCompile(`token=[0-9a-fA-F]{8,}`).FindString(out); m != "" {
			t.Errorf("the terminal output holds a token: %q", m)
		}
	}
}
