//go:build unix

// The eval sandbox runs on Unix only (see eval_windows.go).

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/proctest"
)

// processAlive reports whether pid runs (a zombie counts as gone).
func processAlive(pid int) bool { return proctest.Alive(pid) }

func TestEvalStateResultAndErrors(t *testing.T) {
	t.Parallel()
	s := launchEval(t)
	info := s.Info()
	if info.Variant != Eval || info.PID == 0 || !strings.HasPrefix(info.Python, "3.") {
		t.Fatalf("Info = %+v, want eval with a pid and a Python 3 version", info)
	}
	if st := s.State(); st != StateIdle {
		t.Fatalf("State after launch = %q, want idle", st)
	}

	res := execEval(t, s, "x = 20\ny = x + 1", 10*time.Second, nil)
	if res.Status != "ok" || len(res.Outputs) != 0 {
		t.Fatalf("assignment: status %q outputs %+v, want ok and none", res.Status, res.Outputs)
	}

	// State is kept across calls, and the last expression's value comes back
	// as an execute_result with its repr, like in Jupyter.
	res = execEval(t, s, "print('x is', x)\nx * 2 + y - 21", 10*time.Second, nil)
	if res.Status != "ok" || len(res.Outputs) != 2 {
		t.Fatalf("got status %q outputs %+v", res.Status, res.Outputs)
	}
	if o := res.Outputs[0]; o.OutputType != notebook.Stream || o.Name != "stdout" || o.Text != "x is 20\n" {
		t.Errorf("first output = %+v, want stdout 'x is 20'", o)
	}
	if o := res.Outputs[1]; o.OutputType != notebook.ExecuteResult || jsonString(o.Data["text/plain"]) != "40" || o.ExecutionCount == nil {
		t.Errorf("second output = %+v, want execute_result 40 with a count", o)
	}
	if res.ExecutionCount == nil || *res.ExecutionCount != 2 {
		t.Errorf("ExecutionCount = %v, want 2", res.ExecutionCount)
	}

	// The value's repr, not its str; None shows nothing; a statement last
	// shows nothing either.
	res = execEval(t, s, "'a' + 'b'", 10*time.Second, nil)
	if got := outputText(res.Outputs); got != "'ab'\n" {
		t.Errorf("string result = %q, want the repr 'ab'", got)
	}
	res = execEval(t, s, "None", 10*time.Second, nil)
	if len(res.Outputs) != 0 {
		t.Errorf("None produced %+v", res.Outputs)
	}

	// A traceback comes back as an error output naming the line; the
	// driver's own frames are not in it.
	res = execEval(t, s, "def f():\n    return 1 / 0\nf()", 10*time.Second, nil)
	if res.Status != "error" || len(res.Outputs) != 1 {
		t.Fatalf("traceback: status %q outputs %+v", res.Status, res.Outputs)
	}
	e := res.Outputs[0]
	tb := strings.Join(e.Traceback, "\n")
	if e.OutputType != notebook.Error || e.EName != "ZeroDivisionError" || !strings.Contains(tb, "return 1 / 0") || strings.Contains(tb, "sandbox-driver") {
		t.Errorf("error output = %+v\ntraceback:\n%s", e, tb)
	}
	res = execEval(t, s, "def broken(:\n", 10*time.Second, nil)
	if res.Status != "error" || len(res.Outputs) != 1 || res.Outputs[0].EName != "SyntaxError" {
		t.Errorf("syntax error: %+v", res)
	}

	// stderr, input() (no stdin) and SystemExit do not break the sandbox.
	res = execEval(t, s, "import sys\nprint('oops', file=sys.stderr)", 10*time.Second, nil)
	if len(res.Outputs) != 1 || res.Outputs[0].Name != "stderr" || res.Outputs[0].Text != "oops\n" {
		t.Errorf("stderr: %+v", res.Outputs)
	}
	res = execEval(t, s, "input()", 10*time.Second, nil)
	if res.Status != "error" {
		t.Errorf("input(): %+v, want an error (no stdin)", res)
	}
	res = execEval(t, s, "raise SystemExit(3)", 10*time.Second, nil)
	if res.Status != "error" || res.Outputs[0].EName != "SystemExit" {
		t.Errorf("SystemExit: %+v", res)
	}
	res = execEval(t, s, "x", 10*time.Second, nil)
	if got := outputText(res.Outputs); got != "20\n" {
		t.Errorf("after the errors x = %q, want 20 (state kept)", got)
	}

	// display() and matplotlib figures come back as display_data, the
	// figure as a PNG, as a notebook's inline backend shows it.
	res = execEval(t, s, "display(3)\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nNone", 60*time.Second, nil)
	if len(res.Outputs) != 2 || res.Outputs[0].OutputType != notebook.DisplayData || jsonString(res.Outputs[0].Data["text/plain"]) != "3" {
		t.Fatalf("display outputs: %+v", res.Outputs)
	}
	png, _ := base64.StdEncoding.DecodeString(jsonString(res.Outputs[1].Data["image/png"]))
	if res.Outputs[1].OutputType != notebook.DisplayData || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("figure output: %+v", res.Outputs[1].OutputType)
	}

	// Output of a subprocess bypasses sys.stdout and still arrives.
	res = execEval(t, s, "import os\nos.system('echo from-a-shell')", 10*time.Second, nil)
	if got := outputText(res.Outputs); !strings.Contains(got, "from-a-shell\n") {
		t.Errorf("subprocess output missing: %q", got)
	}
}

func TestEvalStreamsInOrder(t *testing.T) {
	t.Parallel()
	s := launchEval(t)
	type arrival struct {
		text string
		at   time.Time
	}
	var mu sync.Mutex
	var got []arrival
	start := time.Now()
	res := execEval(t, s, "import time\nprint('first')\ntime.sleep(0.6)\nprint('second')", 10*time.Second, func(o notebook.Output) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, arrival{o.Text, time.Now()})
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].text != "first\n" || got[1].text != "second\n" {
		t.Fatalf("arrivals = %+v, want 'first' then 'second' as two outputs", got)
	}
	// The first line arrived while the code still slept, not at the end.
	if gap := got[1].at.Sub(got[0].at); gap < 400*time.Millisecond {
		t.Errorf("the two prints arrived %s apart; the first was not streamed (start %s)", gap, got[0].at.Sub(start))
	}
	// The result merges consecutive text of one stream, as a notebook shows
	// it.
	if len(res.Outputs) != 1 || res.Outputs[0].Text != "first\nsecond\n" {
		t.Errorf("result outputs = %+v, want one merged stdout", res.Outputs)
	}

	// A partial line (no newline) is streamed too, by the driver's flusher.
	var partial []string
	execEval(t, s, "import sys, time\nsys.stdout.write('tick')\ntime.sleep(0.5)\nprint('tock')", 10*time.Second, func(o notebook.Output) {
		partial = append(partial, o.Text)
	})
	if len(partial) != 2 || partial[0] != "tick" {
		t.Errorf("partial line arrivals = %q, want \"tick\" first on its own", partial)
	}
}

func TestEvalInterruptAndTimeout(t *testing.T) {
	t.Parallel()
	s := launchEval(t)
	execEval(t, s, "kept = 'yes'", 10*time.Second, nil)

	// Interrupt stops time.sleep(30) within 2 s; the sandbox survives.
	type out struct {
		res Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := s.Execute(context.Background(), Request{Code: "import time\nprint('sleeping')\ntime.sleep(30)", Timeout: time.Minute})
		done <- out{res, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for s.State() != StateBusy && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let it reach the sleep
	t0 := time.Now()
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("Execute: %v", o.err)
		}
		// Well short of the sleep's 30 s; loose enough for a loaded machine.
		if d := time.Since(t0); d > 10*time.Second {
			t.Errorf("interrupt took %s, want well under the 30 s sleep", d)
		}
		last := o.res.Outputs[len(o.res.Outputs)-1]
		if o.res.Status != "error" || last.EName != "KeyboardInterrupt" {
			t.Errorf("interrupted run: %+v", o.res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("time.sleep(30) was not interrupted within 5 s")
	}
	if res := execEval(t, s, "kept", 10*time.Second, nil); outputText(res.Outputs) != "'yes'\n" {
		t.Errorf("state after interrupt: %q", outputText(res.Outputs))
	}

	// A run past its timeout is interrupted, and its error says why.
	t0 = time.Now()
	res := execEval(t, s, "import time\ntime.sleep(30)", 500*time.Millisecond, nil)
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("timed-out run returned after %s, want about its 0.5 s timeout", d)
	}
	if !res.Interrupted || res.StillRunning || res.Status != "error" {
		t.Errorf("timed-out run: %+v, want Interrupted, not StillRunning", res)
	}
	if got := outputText(res.Outputs); !strings.Contains(got, "KeyboardInterrupt: the execution ran past its 500ms timeout") {
		t.Errorf("timeout note missing: %q", got)
	}

	// A cancelled call interrupts its run as well.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := s.Execute(ctx, Request{Code: "import time\ntime.sleep(30)", Timeout: time.Minute})
	if err != nil || !res.Interrupted || !strings.Contains(outputText(res.Outputs), "call was cancelled") {
		t.Errorf("cancelled run: %+v %v", res, err)
	}
	if res := execEval(t, s, "kept", 10*time.Second, nil); outputText(res.Outputs) != "'yes'\n" {
		t.Errorf("state after timeout: %q", outputText(res.Outputs))
	}
}

func TestEvalKilledWhenItIgnoresInterrupts(t *testing.T) {
	t.Parallel()
	s := launchEval(t)
	pid := s.Info().PID
	code := "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)"
	t0 := time.Now()
	res := execEval(t, s, code, 200*time.Millisecond, nil)
	if d := time.Since(t0); d > interruptGrace+3*time.Second {
		t.Errorf("took %s", d)
	}
	if res.Status != "aborted" || len(res.Outputs) == 0 || res.Outputs[len(res.Outputs)-1].EName != ErrSandboxDied {
		t.Errorf("result = %+v, want aborted with a SandboxDied error", res)
	}
	if st := s.State(); st != StateFailed {
		t.Errorf("State = %q, want failed", st)
	}
	if _, err := s.Execute(context.Background(), Request{Code: "1", Timeout: time.Second}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Execute on a failed sandbox: %v, want ErrNotRunning", err)
	}
	if processAlive(pid) {
		t.Errorf("pid %d still alive", pid)
	}
}

func TestEvalTerminateLeavesNoProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := LaunchEval(ctx, EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.Info().PID
	// A child the code started in the background goes with the sandbox.
	res := execEval(t, s, "import subprocess\np = subprocess.Popen(['sleep', '60'])\np.pid", 10*time.Second, nil)
	child, err := strconv.Atoi(strings.TrimSpace(outputText(res.Outputs)))
	if err != nil {
		t.Fatalf("child pid: %v (%+v)", err, res)
	}
	if !processAlive(pid) || !processAlive(child) {
		t.Fatalf("pid %d / child %d not running before terminate", pid, child)
	}
	var states []string
	var mu sync.Mutex
	s.onState = func(st string) { mu.Lock(); states = append(states, st); mu.Unlock() }
	if err := s.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Terminate(ctx); err != nil {
		t.Fatalf("second Terminate: %v", err)
	}
	if processAlive(pid) {
		t.Errorf("interpreter pid %d alive after Terminate", pid)
	}
	deadline := time.Now().Add(3 * time.Second)
	for processAlive(child) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if processAlive(child) {
		t.Errorf("child pid %d alive after Terminate", child)
	}
	if st := s.State(); st != StateTerminated {
		t.Errorf("State = %q", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(states) != 1 || states[0] != StateTerminated {
		t.Errorf("state changes = %q, want [terminated]", states)
	}
}

func TestEvalMissingPython(t *testing.T) {
	t.Parallel()
	_, err := LaunchEval(context.Background(), EvalOptions{Python: "/nonexistent/python3"})
	if !IsRefusal(err) {
		t.Fatalf("err = %v, want a refusal", err)
	}
}

// TestEvalDiesWithServer runs a server stand-in (this test binary, in
// helper mode) that launches an eval sandbox running code, kills the stand-in with
// SIGKILL (no cleanup runs), and checks that the interpreter died with it.
func TestEvalDiesWithServer(t *testing.T) {
	t.Parallel()
	if os.Getenv("SANDBOX_HELPER_SERVER") == "1" {
		t.Skip("helper mode")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServer$", "-test.v")
	cmd.Env = append(os.Environ(), "SANDBOX_HELPER_SERVER=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := 0
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "SANDBOX_PID="); ok {
			pid, _ = strconv.Atoi(rest)
			break
		}
	}
	if pid == 0 || !processAlive(pid) {
		t.Fatalf("the helper did not report a live sandbox pid (%d)", pid)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if processAlive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("sandbox pid %d outlived its server", pid)
	}
}

// TestHelperServer is the server stand-in of TestEvalDiesWithServer.
func TestHelperServer(t *testing.T) {
	if os.Getenv("SANDBOX_HELPER_SERVER") != "1" {
		t.Skip("only run by TestEvalDiesWithServer")
	}
	s, err := LaunchEval(context.Background(), EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Busy code: the driver does not see its request pipe close, so only
	// the death signal can end it.
	go func() {
		_, _ = s.Execute(context.Background(), Request{Code: "import time\ntime.sleep(60)", Timeout: time.Minute})
	}()
	for s.State() != StateBusy {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("SANDBOX_PID=%d\n", s.Info().PID)
	time.Sleep(time.Minute) // killed long before
}
