//go:build unix

// These tests gate the server's interpreter behind a shell script.

package jupyter_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// gatedPython is an interpreter that starts only once open is called: a
// script that waits for a file, then runs the Python that has Jupyter. The
// test decides when the server can start, so nothing depends on timing.
func gatedPython(t *testing.T) (path string, open func()) {
	t.Helper()
	py, err := jupyter.FindPython("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	path = filepath.Join(dir, "python-gated")
	script := "#!/bin/sh\nwhile [ ! -e '" + gate + "' ]; do sleep 0.05; done\nexec '" + py.Path + "' \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func launchManaged(t *testing.T, opts jupyter.ManagedOptions) *jupyter.Managed {
	t.Helper()
	if opts.RootDir == "" {
		opts.RootDir = t.TempDir()
	}
	m, err := jupyter.LaunchManaged(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	return m
}

// LaunchManaged returns before the server answers, in PhaseStarting; a
// client told so waits with its requests instead of failing, and they
// succeed once the server is up.
func TestLaunchManagedWaitsForTheServer(t *testing.T) {
	t.Parallel()
	python, open := gatedPython(t)
	m := launchManaged(t, jupyter.ManagedOptions{Python: python})
	if st := m.State(); st.Phase != jupyter.PhaseStarting {
		t.Fatalf("state right after the launch: %+v", st)
	}
	c, err := jupyter.NewClient(m.URL, m.Token, jupyter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := newStateLog()
	m.OnState(func(st jupyter.ServerState) { c.SetServerState(st); log.add(st) })
	done := make(chan error, 1)
	go func() {
		_, err := c.ListKernels(testCtx(t))
		done <- err
	}()
	// While the interpreter is held, the server cannot answer: a request
	// that returned now would have failed instead of waiting.
	select {
	case err := <-done:
		t.Fatalf("a request returned while the server could not have started: %v", err)
	default:
	}
	open()
	if err := <-done; err != nil {
		t.Fatalf("the request made during the start: %v", err)
	}
	if err := m.Ready(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	log.waitFor(t, 0, "up", func(st jupyter.ServerState) bool { return st.Phase == jupyter.PhaseUp })
	if m.Python != python {
		t.Errorf("Python %q, want %q", m.Python, python)
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, m); len(left) > 0 {
		t.Fatalf("processes left after Stop: %q", left)
	}
}

// A server that exits before answering fails the start at once with its own
// last word, and the requests waiting for it fail saying so.
func TestLaunchManagedFailsWithTheServersReason(t *testing.T) {
	t.Parallel()
	python, open := gatedPython(t)
	m := launchManaged(t, jupyter.ManagedOptions{Python: python, ExtraArgs: []string{"--ServerApp.port_retries=lots"}})
	c, err := jupyter.NewClient(m.URL, m.Token, jupyter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.OnState(c.SetServerState)
	done := make(chan error, 1)
	go func() {
		_, err := c.ListKernels(testCtx(t))
		done <- err
	}()
	open()
	err = m.Ready(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), "port_retries") {
		t.Fatalf("Ready: %v, want the server's complaint about port_retries", err)
	}
	if st := m.State(); st.Phase != jupyter.PhaseFailed || st.Problem != err.Error() {
		t.Errorf("state %+v", st)
	}
	err = <-done
	var ue *jupyter.UnreachableError
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "the managed Jupyter server failed to start: ") || !strings.Contains(err.Error(), "port_retries") {
		t.Fatalf("the waiting request: %v", err)
	}
	t.Logf("the waiting request: %v", err)
}

// An interpreter that cannot run Jupyter fails the start with the search's
// full answer (every candidate tried, how to install Jupyter), as
// StartManaged does before it launches anything.
func TestLaunchManagedWithoutJupyter(t *testing.T) {
	t.Parallel()
	for _, python := range []string{"/bin/false", "/nonexistent/python3"} {
		m := launchManaged(t, jupyter.ManagedOptions{Python: python})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := m.Ready(ctx)
		cancel()
		if !errors.Is(err, jupyter.ErrJupyterNotInstalled) || !strings.Contains(err.Error(), "--python: "+python) {
			t.Fatalf("%s: %v, want ErrJupyterNotInstalled naming it", python, err)
		}
		if st := m.State(); st.Phase != jupyter.PhaseFailed {
			t.Errorf("%s: state %+v", python, st)
		}
	}
}
