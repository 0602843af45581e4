package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// describe renders outputs compactly for assertions: "stream:stdout:text",
// "execute_result:text", "display_data:image/png", "error:ENAME".
func describe(outs []notebook.Output) []string {
	var d []string
	for _, o := range outs {
		switch o.OutputType {
		case notebook.Stream:
			d = append(d, "stream:"+o.Name+":"+o.Text)
		case notebook.Error:
			d = append(d, "error:"+o.EName)
		default:
			if _, ok := o.Data["image/png"]; ok {
				d = append(d, o.OutputType+":image/png")
			} else {
				d = append(d, o.OutputType+":"+notebook.DataText(o.Data["text/plain"]))
			}
		}
	}
	return d
}

func testExecuteOutputs(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "out.ipynb", "create")
	code := strings.Join([]string{
		"import sys",
		"print('one', flush=True)",
		"print('two', flush=True)",
		"sys.stderr.write('warn\\n'); sys.stderr.flush()",
		"print('three', flush=True)",
		"from IPython.display import display, update_display, clear_output",
		"h = display('first', display_id=True)",
		"h.update('updated')",
		"display('gone')",
		"clear_output(wait=True)",
		"display('after clear')",
		"41 + 1",
	}, "\n")
	res, err := e.InsertExecuteCell(ctx, "s", "", -1, code, ExecOptions{Timeout: 60 * time.Second})
	checkNoError(t, "execute", err)
	if res.Status != "ok" || res.StillRunning || res.ExecutionCount == nil || res.Notebook != "nb" || res.Cell.ID == "" {
		t.Fatalf("result: %+v", res)
	}
	want := []string{"display_data:'after clear'", "execute_result:42"}
	if got := describe(res.Outputs); !equalStrings(got, want) {
		t.Fatalf("outputs %q, want %q", got, want)
	}
	// Streams merge, display updates land in place; checked without the
	// clear_output.
	res, err = e.ExecuteCell(ctx, "s", "", CellRef{ID: res.Cell.ID}, ExecOptions{})
	checkNoError(t, "execute again", err)
	_, _, err = e.OverwriteCellSource(ctx, "s", "", CellRef{ID: res.Cell.ID}, strings.Split(code, "\nclear_output")[0]+"\n41 + 1")
	checkNoError(t, "overwrite", err)
	res, err = e.ExecuteCell(ctx, "s", "", CellRef{Index: ptr(0)}, ExecOptions{})
	checkNoError(t, "execute", err)
	want = []string{"stream:stdout:one\ntwo\n", "stream:stderr:warn\n", "stream:stdout:three\n",
		"display_data:'updated'", "display_data:'gone'", "execute_result:42"}
	if got := describe(res.Outputs); !equalStrings(got, want) {
		t.Fatalf("outputs %q, want %q", got, want)
	}
	// The notebook on disk holds the same outputs and execution count,
	// without transient keys.
	c := f.disk(t, "out.ipynb").Cells[0]
	if got := describe(c.Outputs); !equalStrings(got, want) {
		t.Fatalf("outputs on disk %q, want %q", got, want)
	}
	if c.ExecutionCount == nil || *c.ExecutionCount != *res.ExecutionCount {
		t.Fatalf("execution count on disk %v, result %v", c.ExecutionCount, *res.ExecutionCount)
	}
	if strings.Contains(string(f.file(t, "out.ipynb")), "transient") {
		t.Fatal("transient was stored")
	}
	// The cell read back matches.
	_, rc, err := e.ReadCell(ctx, "s", "", CellRef{Index: ptr(0)})
	checkNoError(t, "read", err)
	if got := describe(rc.Outputs); !equalStrings(got, want) {
		t.Fatalf("read outputs %q", got)
	}

	// An exception: status error, the error output last.
	res, err = e.InsertExecuteCell(ctx, "s", "", -1, "print('before')\n1/0", ExecOptions{})
	checkNoError(t, "execute error", err)
	if got := describe(res.Outputs); res.Status != "error" || len(got) != 2 || got[1] != "error:ZeroDivisionError" {
		t.Fatalf("error run: %s %q", res.Status, got)
	}
}

func testExecuteImage(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	f.use(t, "s", "nb", "img.ipynb", "create")
	code := "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()"
	res, err := f.e.InsertExecuteCell(ctx, "s", "", -1, code, ExecOptions{Timeout: 90 * time.Second})
	checkNoError(t, "execute", err)
	var png bool
	for _, o := range res.Outputs {
		if _, ok := o.Data["image/png"]; ok {
			png = true
		}
	}
	if !png {
		t.Fatalf("no image/png in %q", describe(res.Outputs))
	}
	c := f.disk(t, "img.ipynb").Cells[0]
	for _, o := range c.Outputs {
		if _, ok := o.Data["image/png"]; ok {
			v := output.Render(&o, output.Options{})
			if v.MimeType != "image/png" || !strings.HasPrefix(string(v.Image), "\x89PNG") {
				t.Fatalf("saved image does not decode as PNG: %+v", v)
			}
			return
		}
	}
	t.Fatalf("no image/png saved: %q", describe(c.Outputs))
}

func testExecuteTimeout(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.useOwnKernel(t, "s", "nb", "slow.ipynb", "create")
	var progress atomic.Int32
	start := time.Now()
	res, err := e.InsertExecuteCell(ctx, "s", "", -1, "import time\nprint('start', flush=True)\ntime.sleep(6)\nprint('done')", ExecOptions{
		Timeout: 2 * time.Second, ProgressInterval: 300 * time.Millisecond,
		Progress: func(ExecProgress) { progress.Add(1) },
	})
	elapsed := time.Since(start)
	checkNoError(t, "execute", err)
	if !res.StillRunning || res.Status != "running" {
		t.Fatalf("result: %+v", res)
	}
	// It answers at its timeout, not when the code ends (6 s); the bound
	// is loose so that a loaded machine cannot fail it.
	if elapsed > 5*time.Second {
		t.Fatalf("returned after %v, want about 2s (the timeout), well before the code's 6s", elapsed)
	}
	// On a loaded machine the kernel may not have printed yet.
	if got := describe(res.Outputs); len(got) > 1 || len(got) == 1 && got[0] != "stream:stdout:start\n" {
		t.Fatalf("outputs so far %q", got)
	}
	if n := progress.Load(); n < 3 {
		t.Errorf("progress called %d times in 2s at 300ms", n)
	}
	after := progress.Load()
	// Meanwhile other calls on the notebook do not wait for the run.
	t0 := time.Now()
	_, _, err = e.InsertCell(ctx, "s", "", -1, "markdown", "while running")
	checkNoError(t, "insert while running", err)
	if d := time.Since(t0); d > time.Second {
		t.Errorf("insert during a run took %v", d)
	}
	// The rest arrives in the notebook.
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, c, err := e.ReadCell(ctx, "s", "", CellRef{ID: res.Cell.ID})
		checkNoError(t, "read", err)
		if got := describe(c.Outputs); len(got) == 1 && got[0] == "stream:stdout:start\ndone\n" && c.ExecutionCount != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outputs never completed: %q", describe(c.Outputs))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := describe(f.disk(t, "slow.ipynb").Cells[0].Outputs); len(got) != 1 || got[0] != "stream:stdout:start\ndone\n" {
		t.Fatalf("saved outputs %q", got)
	}
	if progress.Load() != after {
		t.Error("progress was called after the call returned")
	}
}

func testExecuteCancel(t *testing.T, f *fixture) {
	e := f.e
	f.useOwnKernel(t, "s", "nb", "cancel.ipynb", "create")
	ctx, cancel := context.WithCancel(ctxT(t))
	time.AfterFunc(time.Second, cancel)
	start := time.Now()
	res, err := e.InsertExecuteCell(ctx, "s", "", -1, "import time\nprint('going', flush=True)\ntime.sleep(30)", ExecOptions{Timeout: 60 * time.Second})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if time.Since(start) > 8*time.Second {
		t.Fatalf("cancel took %v", time.Since(start))
	}
	if res.Status != "aborted" {
		t.Fatalf("status %q", res.Status)
	}
	got := describe(res.Outputs)
	if len(got) < 2 || got[0] != "stream:stdout:going\n" || got[len(got)-1] != "error:KeyboardInterrupt" {
		t.Fatalf("outputs %q", got)
	}
	// The kernel is free again.
	r2, err := e.ExecuteCode(ctxT(t), "s", "'free'", ExecOptions{Timeout: 10 * time.Second})
	checkNoError(t, "execute after cancel", err)
	if got := describe(r2.Outputs); len(got) != 1 || got[0] != "execute_result:'free'" {
		t.Fatalf("after cancel: %q", got)
	}
}

func testExecuteInput(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	f.use(t, "s", "nb", "input.ipynb", "create")
	start := time.Now()
	res, err := f.e.InsertExecuteCell(ctx, "s", "", -1, "x = input('name? ')", ExecOptions{Timeout: 20 * time.Second})
	checkNoError(t, "execute", err)
	if time.Since(start) > 5*time.Second || res.StillRunning {
		t.Fatalf("input() took %v (still running %v)", time.Since(start), res.StillRunning)
	}
	got := describe(res.Outputs)
	if res.Status != "error" || len(got) != 2 || got[0] != "error:StdinNotImplementedError" || !strings.Contains(got[1], "stdin") {
		t.Fatalf("outputs %q", got)
	}
	// The hint is for the caller only, not stored.
	if saved := describe(f.disk(t, "input.ipynb").Cells[0].Outputs); len(saved) != 1 {
		t.Fatalf("saved %q", saved)
	}
}

func testExecuteBigOutput(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	f.use(t, "s", "nb", "big.ipynb", "create")
	// 5 MB in 50 chunks of 100 KB.
	code := "import sys\nfor i in range(50):\n    sys.stdout.write(str(i % 10) * 100000)\n    sys.stdout.flush()"
	res, err := f.e.InsertExecuteCell(ctx, "s", "", -1, code, ExecOptions{Timeout: 100 * time.Second})
	checkNoError(t, "execute", err)
	if len(res.Outputs) != 1 || len(res.Outputs[0].Text) != 5_000_000 {
		t.Fatalf("got %d outputs, first %d bytes", len(res.Outputs), len(res.Outputs[0].Text))
	}
	saved := f.disk(t, "big.ipynb").Cells[0].Outputs
	if len(saved) != 1 || len(saved[0].Text) != 5_000_000 || saved[0].Text != res.Outputs[0].Text {
		t.Fatal("the saved output differs from the returned one")
	}
}

func testExecuteCode(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	// No notebook, no kernel id.
	_, err := e.ExecuteCode(ctx, "lonely", "1", ExecOptions{})
	if n := wantErrorAs[*NoNotebookError](t, err); n.Name != "" {
		t.Errorf("NoNotebookError = %+v, want the session's missing current notebook", n)
	}
	_, err = e.ExecuteCode(ctx, "lonely", "1", ExecOptions{KernelID: "no-such-kernel"})
	wantUserError(t, err, "not found on the Jupyter server")

	kid := f.shared.get(t, f.client)
	res, err := e.ExecuteCode(ctx, "lonely", "6 * 7", ExecOptions{KernelID: kid})
	checkNoError(t, "execute on kernel id", err)
	if got := describe(res.Outputs); res.Status != "ok" || len(got) != 1 || got[0] != "execute_result:42" || res.KernelID != kid {
		t.Fatalf("result %+v", res)
	}
	f.use(t, "s", "nb", "code.ipynb", "create")
	before := f.file(t, "code.ipynb")
	res, err = e.ExecuteCode(ctx, "s", "print('hi')", ExecOptions{})
	checkNoError(t, "execute on the notebook's kernel", err)
	if got := describe(res.Outputs); len(got) != 1 || got[0] != "stream:stdout:hi\n" || res.Notebook != "" {
		t.Fatalf("result %+v", res)
	}
	if string(before) != string(f.file(t, "code.ipynb")) {
		t.Fatal("execute_code changed the notebook")
	}
	// Round trips on the open channel keep working (their speed is the
	// bench's business: figure 1, not a timed test).
	for range 20 {
		if _, err := e.ExecuteCode(ctx, "s", "1+1", ExecOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func testKernelDeath(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.useOwnKernel(t, "s", "nb", "die.ipynb", "create")
	_, err := e.InsertExecuteCell(ctx, "s", "", -1, "print('bye', flush=True)\nimport time; time.sleep(0.5)\nimport os; os._exit(1)", ExecOptions{Timeout: 60 * time.Second})
	if lost := wantErrorAs[*KernelLostError](t, err); !lost.During || lost.Index != 0 || lost.Notebook != "nb" || lost.CellID == "" ||
		(lost.What != event.KernelRestartedAfterCrash && lost.What != event.KernelDied) {
		t.Errorf("KernelLostError = %+v, want a death during cell 0", lost)
	}
	if got := describe(f.disk(t, "die.ipynb").Cells[0].Outputs); len(got) != 1 || got[0] != "stream:stdout:bye\n" {
		t.Fatalf("saved outputs %q", got)
	}
}

func testKernelAutoRestart(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.useOwnKernel(t, "s", "nb", "auto.ipynb", "create")
	_, err := e.InsertExecuteCell(ctx, "s", "", -1, "x = 5", ExecOptions{})
	checkNoError(t, "execute", err)
	res, err := e.InsertExecuteCell(ctx, "s", "", -1, "import os; os._exit(1)", ExecOptions{Timeout: 60 * time.Second})
	checkNoError(t, "execute with auto-restart", err)
	if !res.KernelRestarted || res.Status != "died" {
		t.Fatalf("result %+v", res)
	}
	res, err = e.InsertExecuteCell(ctx, "s", "", -1, "'x' in dir()", ExecOptions{Timeout: 60 * time.Second})
	checkNoError(t, "execute after restart", err)
	if got := describe(res.Outputs); len(got) != 1 || got[0] != "execute_result:False" {
		t.Fatalf("after restart %q", got)
	}
}

func testRestartNotebook(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	info := f.useOwnKernel(t, "s", "nb", "restart.ipynb", "create")
	_, err := e.ExecuteCode(ctx, "s", "y = 1", ExecOptions{})
	checkNoError(t, "execute", err)
	// A cell still running when the kernel restarts ends as died.
	sub := e.Bus().Subscribe(1024)
	defer sub.Close()
	slow, err := e.InsertExecuteCell(ctx, "s", "", -1, "import time; time.sleep(60)", ExecOptions{Timeout: time.Second})
	checkNoError(t, "execute slow", err)
	if !slow.StillRunning {
		t.Fatalf("slow cell: %+v", slow)
	}
	got, err := e.RestartNotebook(ctx, "s", "")
	checkNoError(t, "restart", err)
	if got.KernelID != info.KernelID {
		t.Fatalf("kernel id changed: %s -> %s", info.KernelID, got.KernelID)
	}
	for finished := false; !finished; {
		select {
		case ev := <-sub.C():
			if ev.Type == event.EvExecFinished && ev.Exec.ID == slow.ExecID {
				// The old process may answer on its way out (an error
				// reply) or not at all (died).
				if ev.Exec.Status != "died" && ev.Exec.Status != "error" {
					t.Fatalf("slow cell finished as %q", ev.Exec.Status)
				}
				finished = true
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the cell running at restart never finished")
		}
	}
	res, err := e.ExecuteCode(ctx, "s", "'y' in dir()", ExecOptions{Timeout: 60 * time.Second})
	checkNoError(t, "execute after restart", err)
	if d := describe(res.Outputs); len(d) != 1 || d[0] != "execute_result:False" {
		t.Fatalf("after restart %q", d)
	}
	_, err = e.RestartNotebook(ctx, "s", "zzz")
	wantUserError(t, err, `no notebook named "zzz"`)
	checkNoError(t, "interrupt", e.InterruptKernel(ctx, info.KernelID))
	wantUserError(t, e.InterruptKernel(ctx, "nope"), "not found on the Jupyter server")
}

func testExecuteRerun(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "rerun.ipynb", "create")
	first, err := e.InsertExecuteCell(ctx, "s", "", -1, "import time\nprint('old', flush=True)\ntime.sleep(3)\nprint('old end')", ExecOptions{Timeout: time.Second})
	checkNoError(t, "first run", err)
	if !first.StillRunning {
		t.Fatalf("first run: %+v", first)
	}
	// Run the cell again with new code while the first run goes on: the
	// first run's later outputs must not land in the cell.
	_, _, err = e.OverwriteCellSource(ctx, "s", "", CellRef{ID: first.Cell.ID}, "print('new')")
	checkNoError(t, "overwrite", err)
	second, err := e.ExecuteCell(ctx, "s", "", CellRef{ID: first.Cell.ID}, ExecOptions{Timeout: 300 * time.Millisecond})
	checkNoError(t, "second run", err)
	if !second.StillRunning || len(second.Outputs) != 0 {
		t.Fatalf("second run, queued behind the first: %+v", second)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, c, err := e.ReadCell(ctx, "s", "", CellRef{ID: first.Cell.ID})
		checkNoError(t, "read", err)
		got := describe(c.Outputs)
		for _, o := range got {
			if strings.Contains(o, "old") {
				t.Fatalf("the first run wrote into the re-run cell: %q", got)
			}
		}
		if len(got) == 1 && got[0] == "stream:stdout:new\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cell outputs %q", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A call cancelled while its run waits in the kernel's queue behind
// another leaves that other run alone (interrupting the kernel would stop
// it), returns at once, and its own run is interrupted as soon as it
// starts: the rest of it never runs.
func testExecuteCancelQueued(t *testing.T, f *fixture) {
	e := f.e
	f.useOwnKernel(t, "s", "nb", "queued.ipynb", "create")
	type ran struct {
		res ExecResult
		err error
	}
	ahead := make(chan ran, 1)
	go func() {
		res, err := e.ExecuteCode(ctxT(t), "s", "import time\nprint('ahead', flush=True)\ntime.sleep(3)\nprint('ahead done')", ExecOptions{Timeout: 30 * time.Second})
		ahead <- ran{res, err}
	}()
	time.Sleep(500 * time.Millisecond) // the run ahead is on the kernel
	ctx, cancel := context.WithCancel(ctxT(t))
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	res, err := e.InsertExecuteCell(ctx, "s", "", -1, "import time\ntime.sleep(1)\nprint('queued', 'ran')", ExecOptions{Timeout: 30 * time.Second})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "queued behind another run") || res.Status != "aborted" {
		t.Fatalf("the queued call: %q %v", res.Status, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the queued call returned after %s", took)
	}
	a := <-ahead
	checkNoError(t, "the run ahead", a.err)
	if got := describe(a.res.Outputs); len(got) != 1 || got[0] != "stream:stdout:ahead\nahead done\n" {
		t.Fatalf("the run ahead: %q", got)
	}
	// The queued cell starts and is interrupted at once.
	deadline := time.Now().Add(15 * time.Second)
	for {
		outs := describe(f.disk(t, "queued.ipynb").Cells[0].Outputs)
		if strings.Contains(strings.Join(outs, "|"), "queued ran") {
			t.Fatalf("the cancelled run ran on: %q", outs)
		}
		if len(outs) > 0 && outs[len(outs)-1] == "error:KeyboardInterrupt" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queued cell: %q", outs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A run cancelled while queued, with another queued behind it, is not
// interrupted when it starts: the interrupt, landing after a short run has
// ended, would stop the run behind it, which nobody cancelled.
func testExecuteCancelQueuedSparesTheNext(t *testing.T, f *fixture) {
	e := f.e
	f.useOwnKernel(t, "s", "nb", "spares.ipynb", "create")
	type ran struct {
		res ExecResult
		err error
	}
	ahead, behind := make(chan ran, 1), make(chan ran, 1)
	go func() {
		res, err := e.ExecuteCode(ctxT(t), "s", "import time\ntime.sleep(2)\nprint('ahead done')", ExecOptions{Timeout: 30 * time.Second})
		ahead <- ran{res, err}
	}()
	time.Sleep(500 * time.Millisecond) // the run ahead is on the kernel
	ctx, cancel := context.WithCancel(ctxT(t))
	queued := make(chan error, 1)
	go func() {
		_, err := e.ExecuteCode(ctx, "s", "spared = 1", ExecOptions{Timeout: 30 * time.Second})
		queued <- err
	}()
	time.Sleep(300 * time.Millisecond)
	go func() {
		res, err := e.ExecuteCode(ctxT(t), "s", "import time\ntime.sleep(1)\nprint('behind done')", ExecOptions{Timeout: 30 * time.Second})
		behind <- ran{res, err}
	}()
	time.Sleep(300 * time.Millisecond) // both are queued
	cancel()
	if err := <-queued; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled queued run: %v", err)
	}
	a := <-ahead
	checkNoError(t, "the run ahead", a.err)
	b := <-behind
	checkNoError(t, "the run behind", b.err)
	if got := describe(b.res.Outputs); len(got) != 1 || got[0] != "stream:stdout:behind done\n" {
		t.Fatalf("the run behind the cancelled one was stopped: %q (status %s)", got, b.res.Status)
	}
}
