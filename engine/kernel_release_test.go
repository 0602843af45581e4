package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// The kernels this process started are shut down when they are let go of
// (kernels.go), by a release, a run's end or a server switch, but
// not under another client, and not under a notebook that takes the kernel
// up again meanwhile. Each subtest has an engine of its own on one server.
func TestKernelRelease(t *testing.T) {
	srv := jupytertest.Shared(t)
	shared := &sharedKernel{}
	run := func(name string, f func(t *testing.T, fx *fixture)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, newFixture(t, srv, shared))
		})
	}
	run("SwitchLeavesAnotherClientsKernel", testSwitchLeavesAnotherClientsKernel)
	run("SwitchRetiresKernelOfARun", testSwitchRetiresKernelOfARun)
	run("RunEndRacesUse", testRunEndRacesUse)
	run("UnuseShutdownDoesNotBlockUse", testUnuseShutdownDoesNotBlockUse)
}

// otherServerURL is the test server under another name: connecting to it
// is a server switch.
func otherServerURL(t *testing.T, f *fixture) string {
	t.Helper()
	other := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)
	if other == f.srv.URL {
		t.Fatalf("test server URL %s is not on 127.0.0.1", f.srv.URL)
	}
	return other
}

// setRetireHook sets the engine's retire hook (read under mu).
func setRetireHook(e *Engine, h func(string)) {
	e.mu.Lock()
	e.retireHook = h
	e.mu.Unlock()
}

// A switch leaves a kernel this engine started running when another
// client is connected to it, as a release does.
func testSwitchLeavesAnotherClientsKernel(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	own := f.useOwnKernel(t, "s", "own", "sw-other.ipynb", "create")
	lab, err := f.client.ConnectKernel(ctx, own.KernelID) // JupyterLab, say
	checkNoError(t, "connect another client", err)
	defer lab.Close()
	// The server counts a websocket once its handler has opened it.
	for {
		info, err := f.client.GetKernel(ctx, own.KernelID)
		checkNoError(t, "get kernel", err)
		if info.Connections >= 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the server never counted the second client: %+v", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	sw, err := f.e.ConnectJupyter(ctx, "s", otherServerURL(t, f), f.srv.Token)
	checkNoError(t, "switch", err)
	if len(sw.Closed) != 1 || sw.Closed[0].Name != "own" {
		t.Fatalf("switch: %+v", sw)
	}
	if k := sw.Closed[0].Kernel; k.ShutDown || !k.InUse || k.Attached || k.Err != nil {
		t.Errorf("fate of a kernel another client is connected to: %+v, want left running, in use", k)
	}
	if _, err := f.client.GetKernel(ctx, own.KernelID); err != nil {
		t.Fatalf("the switch shut down a kernel another client is connected to: %v", err)
	}
}

// waitFile is code that runs until the file at path exists.
func waitFile(path string) string {
	return fmt.Sprintf("import os, time\nwhile not os.path.exists(%q):\n    time.sleep(0.05)\nprint('released')", path)
}

// startHeldRun starts a run on the session's notebook that lasts until the
// returned function is called, then releases the notebook: the run is the
// kernel's last holder.
func startHeldRun(t *testing.T, f *fixture, session, file string) (release func()) {
	t.Helper()
	ctx := ctxT(t)
	flag := f.srv.Path(f.path(file + ".go"))
	res, err := f.e.InsertExecuteCell(ctx, session, "", -1, waitFile(flag), ExecOptions{Timeout: time.Second})
	checkNoError(t, "execute", err)
	if !res.StillRunning {
		t.Fatalf("the run ended before its file existed: %+v", res)
	}
	u, err := f.e.UnuseNotebook(ctx, session, "")
	checkNoError(t, "unuse", err)
	if u.KernelShutDown {
		t.Fatalf("unuse shut down a kernel a run still collects from: %+v", u)
	}
	return func() {
		if err := os.WriteFile(flag, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A switch shuts down a kernel this engine started whose notebook was
// released while a run still collected from it: the old server's kernels
// are retired against the old server's marks.
func testSwitchRetiresKernelOfARun(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	own := f.useOwnKernel(t, "s", "nb", "sw-run.ipynb", "create")
	release := startHeldRun(t, f, "s", "sw-run")
	defer release()
	sw, err := f.e.ConnectJupyter(ctx, "s", otherServerURL(t, f), f.srv.Token)
	checkNoError(t, "switch", err)
	if len(sw.Closed) != 0 {
		t.Fatalf("switch closed notebooks: %+v", sw)
	}
	if _, err := f.client.GetKernel(ctx, own.KernelID); !jupyter.IsNotFound(err) {
		t.Fatalf("kernel %s this engine started, its run cut by the switch, is still running: %v", own.KernelID, err)
	}
}

// A run's end retires its kernel; a use_notebook of the same path at that
// moment gets a running kernel: the one it found (not shut down under it),
// or, when the retirement shut that down, a new one.
func testRunEndRacesUse(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	own := f.useOwnKernel(t, "s", "nb", "race.ipynb", "create")
	release := startHeldRun(t, f, "s", "race")
	type used struct {
		info NotebookInfo
		err  error
	}
	useDone := make(chan used, 1)
	hooked := false
	setRetireHook(f.e, func(id string) {
		if id != own.KernelID || hooked {
			return
		}
		hooked = true
		// The retirement has decided to shut the kernel down: a
		// use_notebook of its path comes in now, and either finishes or
		// waits for the retirement.
		go func() {
			info, err := f.e.UseNotebook(ctx, UseRequest{Session: "s2", Name: "nb", Path: f.path("race.ipynb"), Mode: "connect"})
			useDone <- used{info, err}
		}()
		for f.e.retireWaits.Load() == 0 {
			select {
			case u := <-useDone:
				useDone <- u
				return
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	release()
	var u used
	select {
	case u = <-useDone:
	case <-ctx.Done():
		t.Fatal("use_notebook never finished")
	}
	checkNoError(t, "use during the retirement", u.err)
	f.e.execs.Wait() // the retirement is over
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		f.client.ShutdownKernel(c, u.info.KernelID)
	})
	if _, err := f.client.GetKernel(ctx, u.info.KernelID); err != nil {
		t.Fatalf("the notebook used as its kernel was retired has kernel %s (the old one: %v): %v",
			u.info.KernelID, u.info.KernelID == own.KernelID, err)
	}
}

// unuse_notebook shuts its kernel down without holding up other sessions'
// use_notebook.
func testUnuseShutdownDoesNotBlockUse(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	own := f.useOwnKernel(t, "s", "own", "unuse-slow.ipynb", "create")
	shared := f.shared.get(t, f.client)
	useDone := make(chan error, 1)
	setRetireHook(f.e, func(id string) {
		if id != own.KernelID {
			return
		}
		// The shutdown is under way: another session opens a notebook.
		go func() {
			_, err := f.e.UseNotebook(ctx, UseRequest{Session: "s2", Name: "other", Path: f.path("unuse-other.ipynb"), Mode: "create", KernelID: shared})
			useDone <- err
		}()
		select {
		case err := <-useDone:
			useDone <- err
		case <-time.After(60 * time.Second):
			t.Error("use_notebook waited for another notebook's kernel shutdown")
		}
	})
	u, err := f.e.UnuseNotebook(ctx, "s", "own")
	checkNoError(t, "unuse", err)
	if !u.KernelShutDown {
		t.Fatalf("unuse: %+v, want its kernel shut down", u)
	}
	checkNoError(t, "use during the shutdown", <-useDone)
}
