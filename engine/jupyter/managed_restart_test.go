//go:build unix

// These tests kill the server with POSIX signals and read how it died.

package jupyter_test

import (
	"errors"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// stateLog keeps every state a supervisor reported and lets a test wait
// for one.
type stateLog struct {
	mu     sync.Mutex
	states []jupyter.ServerState
	change chan struct{}
}

func newStateLog() *stateLog { return &stateLog{change: make(chan struct{}, 1)} }

func (l *stateLog) add(st jupyter.ServerState) {
	l.mu.Lock()
	l.states = append(l.states, st)
	l.mu.Unlock()
	select {
	case l.change <- struct{}{}:
	default:
	}
}

// waitFor waits for a state, after the first `from` ones, that ok accepts.
func (l *stateLog) waitFor(t *testing.T, from int, what string, ok func(jupyter.ServerState) bool) (int, jupyter.ServerState) {
	t.Helper()
	deadline := time.After(120 * time.Second)
	for {
		l.mu.Lock()
		for i := from; i < len(l.states); i++ {
			if ok(l.states[i]) {
				st := l.states[i]
				l.mu.Unlock()
				return i, st
			}
		}
		all := append([]jupyter.ServerState(nil), l.states...)
		l.mu.Unlock()
		select {
		case <-l.change:
		case <-deadline:
			t.Fatalf("no %s state; states so far: %+v", what, all)
		}
	}
}

// A managed server killed with SIGKILL comes back at the same URL with the
// same token; meanwhile a client told the state fails at once saying the
// server is being restarted; a port taken by another program in the
// meantime is named as the reason it cannot come back, and once the port is
// free again it does.
func TestManagedRestartsAtTheSameAddress(t *testing.T) {
	t.Parallel()
	m := startManaged(t, jupyter.ManagedOptions{Restart: true})
	log := newStateLog()
	c, err := jupyter.NewClient(m.URL, m.Token, jupyter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.OnState(func(st jupyter.ServerState) { c.SetServerState(st); log.add(st) })
	if _, err := c.StartKernel(testCtx(t), ""); err != nil {
		t.Fatal(err)
	}
	first := m.PID()

	// Hold the port the moment the server is gone, as another program
	// might: the restart must say the port is taken.
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var squatter net.Listener
	if !waitUntil(30*time.Second, func() bool {
		var err error
		squatter, err = net.Listen("tcp", strings.TrimSuffix(strings.TrimPrefix(m.URL, "http://"), "/"))
		return err == nil
	}) {
		t.Fatal("the port never became free after the kill")
	}
	i, st := log.waitFor(t, 0, "restarting", func(st jupyter.ServerState) bool { return st.Phase == jupyter.PhaseRestarting })
	t.Logf("state after the kill: %+v", st)
	if !strings.Contains(st.Cause, "SIGKILL") {
		t.Errorf("cause %q does not say the server was killed", st.Cause)
	}
	start := time.Now()
	_, err = c.ListKernels(testCtx(t))
	took := time.Since(start)
	var ue *jupyter.UnreachableError
	if !errors.As(err, &ue) || ue.State == nil || !ue.Managed || !errors.Is(err, jupyter.ErrUnreachable) {
		t.Fatalf("a request while restarting: %v, want an UnreachableError with the state", err)
	}
	t.Logf("a request while restarting took %v: %v", took, err)
	if !strings.Contains(err.Error(), m.URL) || strings.Contains(err.Error(), m.Token) {
		t.Errorf("error %q should name %s and not carry the token", err, m.URL)
	}
	_, st = log.waitFor(t, i, "port taken", func(st jupyter.ServerState) bool {
		return strings.Contains(st.Problem, "taken by another program")
	})
	t.Logf("state with the port taken: %+v", st)
	if st.Attempt < 1 || st.Phase != jupyter.PhaseRestarting {
		t.Errorf("state %+v", st)
	}
	squatter.Close()

	_, st = log.waitFor(t, i, "up", func(st jupyter.ServerState) bool { return st.Phase == jupyter.PhaseUp })
	if m.PID() == first {
		t.Fatal("up again with the same process")
	}
	// The same client (same URL, same token) works again, and the kernel
	// from before is gone with the old server.
	ks, err := c.ListKernels(testCtx(t))
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if len(ks) != 0 {
		t.Errorf("kernels after the restart: %+v", ks)
	}
	if _, err := c.StartKernel(testCtx(t), ""); err != nil {
		t.Fatalf("starting a kernel after the restart: %v", err)
	}
}

func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
