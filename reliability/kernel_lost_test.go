//go:build linux

// These tests read /proc to see which processes a run leaves behind.

package reliability

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// callTimeout is the timeout every execution in these tests asks for; a
// call on a lost kernel must come back well before it.
const callTimeout = 60

// beforeTimeout is the bound "returned before the timeout" is checked
// against: generous, so that a loaded machine does not fail it, and still
// far from what waiting out the timeout takes.
const beforeTimeout = callTimeout * time.Second / 2

// lostKernel is one scenario's notebook, its kernel and the agent's
// session, on an in-process server whose events the test watches.
type lostKernel struct {
	t      *testing.T
	srv    *jupytertest.Server
	ip     *inproc
	cs     *sdk.ClientSession
	name   string
	kernel string

	mu     sync.Mutex
	events []event.Event
}

func newLostKernel(t *testing.T) *lostKernel {
	t.Helper()
	srv := jupytertest.Shared(t)
	ip, _ := startInProcess(t, srv)
	lk := &lostKernel{t: t, srv: srv, ip: ip, name: "lost"}
	sub := ip.e.Bus().Subscribe(1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range sub.C() {
			if ev.Type == event.EvKernelLost || ev.Type == event.EvKernelStatus || ev.Type == event.EvExecOutput {
				lk.mu.Lock()
				lk.events = append(lk.events, ev)
				lk.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { sub.Close(); <-done })
	lk.cs = ip.connect(t)
	path := writeNotebook(t, srv, srv.Subdir(t)+"/lost.ipynb", "x = 1")
	ok(t, lk.cs, "use_notebook", map[string]any{"notebook_name": lk.name, "notebook_path": path})
	for _, nb := range ip.e.ListNotebooks("") {
		if nb.Name == lk.name {
			lk.kernel = nb.KernelID
		}
	}
	if lk.kernel == "" {
		t.Fatal("no kernel for the notebook")
	}
	lk.run("x = 41", "")
	return lk
}

// call runs a tool with the scenario's timeout and measures it.
func (lk *lostKernel) call(tool string, args map[string]any) (string, bool, time.Duration) {
	lk.t.Helper()
	start := time.Now()
	res := callTool(lk.t, lk.cs, tool, args)
	return textOf(res), res.IsError, time.Since(start)
}

// run executes code that must succeed and print want ("" for anything).
func (lk *lostKernel) run(code, want string) {
	lk.t.Helper()
	text, isErr, _ := lk.call("execute_code", map[string]any{"code": code, "timeout": callTimeout})
	if isErr || !strings.Contains(text, want) {
		lk.t.Fatalf("execute_code(%q) = %q (error %v), want %q", code, text, isErr, want)
	}
}

// pid is the kernel process's id.
func (lk *lostKernel) pid() int {
	lk.t.Helper()
	text, isErr, _ := lk.call("execute_code", map[string]any{"code": "import os; print('PID', os.getpid())", "timeout": callTimeout})
	_, after, found := strings.Cut(text, "PID ")
	n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(after, "\n", 2)[0]))
	if isErr || !found || err != nil || n <= 1 {
		lk.t.Fatalf("no pid in %q", text)
	}
	return n
}

// wantLostText checks the agent's text for a lost kernel: it is an error,
// names what happened and what to call, says the state is gone, never
// says the code is still running, and came back before the timeout.
func (lk *lostKernel) wantLostText(scenario, text string, isErr bool, took time.Duration, want ...string) {
	lk.t.Helper()
	lk.t.Logf("%s: took %v, agent text:\n%s", scenario, took.Round(time.Millisecond), text)
	if !isErr {
		lk.t.Errorf("%s: not an error: %q", scenario, text)
	}
	low := strings.ToLower(text)
	for _, w := range append(want, "state", "is gone") {
		if !strings.Contains(low, strings.ToLower(w)) {
			lk.t.Errorf("%s: %q does not say %q", scenario, text, w)
		}
	}
	for _, bad := range []string{"still running", "timeout", "server error"} {
		if strings.Contains(low, bad) {
			lk.t.Errorf("%s: %q says %q", scenario, text, bad)
		}
	}
	if took >= beforeTimeout {
		lk.t.Errorf("%s: took %v; it must return before the timeout (%ds)", scenario, took, callTimeout)
	}
}

// restartWorks calls restart_notebook and checks that code runs again.
func (lk *lostKernel) restartWorks() {
	lk.t.Helper()
	text, isErr, took := lk.call("restart_notebook", map[string]any{"notebook_name": lk.name})
	lk.t.Logf("restart_notebook: took %v: %s", took.Round(time.Millisecond), text)
	if isErr {
		lk.t.Fatalf("restart_notebook failed: %s", text)
	}
	lk.run("print(6 * 7)", "42")
	lk.run("print('x' in dir())", "False")
}

// sawLost reports whether the workbench was told of a loss of the kernel.
func (lk *lostKernel) sawLost() bool {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	for _, ev := range lk.events {
		if ev.Type == event.EvKernelLost && ev.Kernel.ID == lk.kernel && ev.Kernel.Lost != "" {
			return true
		}
	}
	return false
}

// waitLost waits until the engine has noticed the loss.
func (lk *lostKernel) waitLost() {
	lk.t.Helper()
	if !waitFor(30*time.Second, lk.sawLost) {
		lk.t.Fatal("the loss was never published")
	}
}

// during starts a long execution with tool and returns a func that waits
// for its result, once the code is running.
func (lk *lostKernel) during(tool string) func() (string, bool, time.Duration) {
	lk.t.Helper()
	type result struct {
		text  string
		isErr bool
		took  time.Duration
	}
	ch := make(chan result, 1)
	args := map[string]any{"code": "import time\nprint('started', flush=True)\nfor i in range(600):\n    time.sleep(0.1)", "timeout": callTimeout}
	if tool == "insert_execute_code_cell" {
		args = map[string]any{"cell_index": -1, "cell_source": args["code"], "timeout": callTimeout}
	}
	go func() {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*callTimeout*time.Second)
		defer cancel()
		res, err := lk.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			ch <- result{text: "protocol error: " + err.Error(), took: time.Since(start)}
			return
		}
		ch <- result{textOf(res), res.IsError, time.Since(start)}
	}()
	// Running: its first output has arrived, and the call has not come
	// back.
	started := func() bool {
		lk.mu.Lock()
		defer lk.mu.Unlock()
		for _, ev := range lk.events {
			if ev.Type == event.EvExecOutput && ev.Exec.KernelID == lk.kernel && ev.Exec.Output != nil && strings.Contains(ev.Exec.Output.Text, "started") {
				return true
			}
		}
		return false
	}
	deadline := time.After(60 * time.Second)
	for !started() {
		select {
		case r := <-ch:
			lk.t.Fatalf("the long execution returned before it ran: %q (error %v)", r.text, r.isErr)
		case <-deadline:
			lk.t.Fatal("the long execution never started")
		case <-time.After(50 * time.Millisecond):
		}
	}
	return func() (string, bool, time.Duration) {
		r := <-ch
		return r.text, r.isErr, r.took
	}
}

func (lk *lostKernel) shutdownOutside() {
	lk.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := lk.srv.Client().ShutdownKernel(ctx, lk.kernel); err != nil {
		lk.t.Fatal(err)
	}
}

func (lk *lostKernel) restartOutside() {
	lk.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := lk.srv.Client().RestartKernel(ctx, lk.kernel); err != nil {
		lk.t.Fatal(err)
	}
}

func kill9(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
}

// A kernel that goes away between calls or during one is named at once,
// with what to do; restart_notebook then gives a kernel that works.
func TestKernelLostNamed(t *testing.T) {
	t.Run("shutdown between calls", func(t *testing.T) {
		lk := newLostKernel(t)
		lk.shutdownOutside()
		lk.waitLost()
		text, isErr, took := lk.call("execute_code", map[string]any{"code": "print(x)", "timeout": callTimeout})
		lk.wantLostText("DELETE between calls", text, isErr, took, "shut down from outside", "not run", "restart_notebook")
		lk.restartWorks()
	})
	t.Run("shutdown during a run", func(t *testing.T) {
		lk := newLostKernel(t)
		wait := lk.during("execute_code")
		lk.shutdownOutside()
		text, isErr, took := wait()
		lk.wantLostText("DELETE during a run", text, isErr, took, "shut down from outside", "while it ran", "restart_notebook")
		if strings.Contains(text, "KeyboardInterrupt") {
			t.Errorf("a bare KeyboardInterrupt: %q", text)
		}
		lk.restartWorks()
	})
	t.Run("kill -9 during a run", func(t *testing.T) {
		lk := newLostKernel(t)
		pid := lk.pid()
		wait := lk.during("insert_execute_code_cell")
		kill9(t, pid)
		text, isErr, took := wait()
		lk.wantLostText("kill -9 during a run", text, isErr, took, "died", "while it ran cell", "restart_notebook")
		lk.restartWorks()
	})
	t.Run("kill -9 between calls", func(t *testing.T) {
		lk := newLostKernel(t)
		kill9(t, lk.pid())
		lk.waitLost()
		text, isErr, took := lk.call("execute_code", map[string]any{"code": "print(x)", "timeout": callTimeout})
		lk.wantLostText("kill -9 between calls", text, isErr, took, "died", "jupyter restarted it", "not run", "restart_notebook")
		lk.restartWorks()
	})
	t.Run("call right after death", func(t *testing.T) {
		lk := newLostKernel(t)
		kill9(t, lk.pid())
		// No wait: the call may reach the dead process before anyone
		// noticed.
		text, isErr, took := lk.call("execute_code", map[string]any{"code": "print(x)", "timeout": callTimeout})
		lk.wantLostText("call right after kill -9", text, isErr, took, "died", "restart_notebook")
		lk.restartWorks()
	})
	t.Run("restarted outside between calls", func(t *testing.T) {
		lk := newLostKernel(t)
		lk.restartOutside()
		text, isErr, took := lk.call("execute_code", map[string]any{"code": "print(x)", "timeout": callTimeout})
		lk.wantLostText("POST restart between calls", text, isErr, took, "restarted from outside", "restart_notebook")
		if strings.Contains(text, "NameError") {
			t.Errorf("a bare NameError: %q", text)
		}
		lk.restartWorks()
	})
	t.Run("restarted outside during a run", func(t *testing.T) {
		lk := newLostKernel(t)
		wait := lk.during("execute_code")
		lk.restartOutside()
		text, isErr, took := wait()
		lk.wantLostText("POST restart during a run", text, isErr, took, "restarted from outside", "while it ran", "restart_notebook")
		if strings.Contains(text, "KeyboardInterrupt") {
			t.Errorf("a bare KeyboardInterrupt: %q", text)
		}
		lk.restartWorks()
	})
	t.Run("NUL byte", func(t *testing.T) {
		lk := newLostKernel(t)
		text, isErr, took := lk.call("execute_code", map[string]any{"code": "x = '\x00'", "timeout": callTimeout})
		t.Logf("NUL byte: took %v, agent text:\n%s", took.Round(time.Millisecond), text)
		if !isErr || !strings.Contains(text, "NUL byte") || !strings.Contains(text, "not run") {
			t.Errorf("NUL byte: %q (error %v)", text, isErr)
		}
		if took >= beforeTimeout {
			t.Errorf("NUL byte: took %v", took)
		}
		lk.run("print(x + 1)", "42")
	})
}

// The workbench hears of the loss: an EvKernelLost event naming it, and
// kernel statuses that carry it until restart_notebook.
func TestKernelLostShownInWorkbench(t *testing.T) {
	lk := newLostKernel(t)
	lk.shutdownOutside()
	lk.waitLost()
	lk.mu.Lock()
	var last event.KernelEvent
	for _, ev := range lk.events {
		if ev.Kernel != nil && ev.Kernel.ID == lk.kernel {
			last = *ev.Kernel
		}
	}
	lk.mu.Unlock()
	if last.State != "dead" || last.Lost != event.KernelShutDown.String() {
		t.Errorf("the workbench's last word on the kernel: %+v, want dead and %q", last, event.KernelShutDown)
	}
}
