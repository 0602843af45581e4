package jupyter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Phase is where a managed server is in its life.
type Phase string

// Phases of a managed server.
const (
	PhaseUp         Phase = "up"
	PhaseRestarting Phase = "restarting" // it died; attempts to start it again are under way
	// PhaseStarting is a server from LaunchManaged that has not answered
	// yet: requests wait for it.
	PhaseStarting Phase = "starting"
	// PhaseFailed is a server from LaunchManaged that could not start
	// (Problem says why): requests fail at once saying so.
	PhaseFailed Phase = "failed"
)

// ServerState is what the supervisor of a managed server knows of it.
type ServerState struct {
	Phase Phase
	// Attempt counts the restarts tried since the server last went down
	// (1 for the first); 0 when up.
	Attempt int
	// Cause is how the server went down ("killed by SIGKILL", "exited
	// with status 1").
	Cause string
	// Problem is why the last attempt failed ("" while the first is under
	// way): the port taken by another program, the interpreter gone, the
	// server's own complaint.
	Problem string
	// Retry is when the next attempt starts, when one is waiting.
	Retry time.Time
}

// Backoff between restart attempts.
const (
	restartFirst = 500 * time.Millisecond
	restartMax   = 30 * time.Second
	// restartReset is how long a restarted server must stay up for the
	// next death to start again from restartFirst.
	restartReset = time.Minute
)

// OnState registers f to hear of every change of the server's state (from
// the supervisor's goroutine; f must not block). It is called once at once
// with the current state.
func (m *Managed) OnState(f func(ServerState)) {
	m.tellMu.Lock()
	defer m.tellMu.Unlock()
	m.mu.Lock()
	m.onState = append(m.onState, f)
	st := m.state
	m.mu.Unlock()
	f(st)
}

// State is the server's state now.
func (m *Managed) State() ServerState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

func (m *Managed) setState(st ServerState) {
	m.tellMu.Lock()
	defer m.tellMu.Unlock()
	m.mu.Lock()
	m.state = st
	fs := append([]func(ServerState){}, m.onState...)
	m.mu.Unlock()
	for _, f := range fs {
		f(st)
	}
}

// supervise waits for the server to die and starts it again, until Stop.
func (m *Managed) supervise() {
	delay := restartFirst
	for {
		m.mu.Lock()
		p := m.cur
		m.mu.Unlock()
		upSince := time.Now()
		select {
		case <-m.stopping:
			return
		case <-p.exited:
		}
		if time.Since(upSince) >= restartReset {
			delay = restartFirst
		}
		cause := exitCause(p.waitErr)
		// Its kernels outlive it (they run in sessions of their own); the
		// server that comes back will not know them, so they would only
		// hold memory.
		for _, k := range processesMentioning(m.RuntimeDir) {
			k.kill()
		}
		st := ServerState{Phase: PhaseRestarting, Cause: cause}
		for attempt := 1; ; attempt++ {
			st.Attempt = attempt
			st.Retry = time.Now().Add(delay)
			m.setState(st)
			select {
			case <-m.stopping:
				return
			case <-time.After(delay):
			}
			delay = min(delay*2, restartMax)
			st.Retry = time.Time{}
			m.setState(st)
			err := m.relaunch()
			if err == nil {
				break
			}
			select {
			case <-m.stopping:
				return
			default:
			}
			st.Problem = err.Error()
		}
		m.setState(ServerState{Phase: PhaseUp})
	}
}

// errPortTaken says another program listens where the server was.
var errPortTaken = errors.New("taken by another program")

// relaunch starts the server again at its address, or says why it cannot.
func (m *Managed) relaunch() error {
	// A port someone else took since is not ours to knock on: the server
	// would fail to bind anyway, and saying so beats its traceback.
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(m.port))
	if err != nil {
		if isAddrInUse(err) {
			return fmt.Errorf("port %d is %w", m.port, errPortTaken)
		}
		return fmt.Errorf("port %d: %w", m.port, err)
	}
	l.Close()
	if err := canImportJupyterServer(m.Python); err != nil {
		return fmt.Errorf("%w: %s cannot import jupyter_server any more (%v)", ErrJupyterNotInstalled, m.Python, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-m.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	p, err := m.launch(ctx)
	if err != nil {
		if p == nil {
			return err
		}
		// Leave nothing half-started behind: the next attempt starts clean.
		p.group.Kill()
		<-p.exited
		if strings.Contains(err.Error(), "already in use") {
			return fmt.Errorf("port %d is %w", m.port, errPortTaken)
		}
		return firstLine(err)
	}
	return nil
}

// exitCause says how a server process ended.
func exitCause(err error) string {
	var ee interface{ Sys() any }
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Signaled():
				if name, ok := signalNames[ws.Signal()]; ok {
					return "killed by " + name
				}
				return fmt.Sprintf("killed by signal %d", int(ws.Signal()))
			case ws.Exited():
				return fmt.Sprintf("exited with status %d", ws.ExitStatus())
			}
		}
	}
	if err == nil {
		return "exited"
	}
	return err.Error()
}

// signalNames name the signals that end servers in practice.
var signalNames = map[syscall.Signal]string{
	syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT",
	syscall.SIGHUP: "SIGHUP", syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS",
}

// firstLine keeps the first line of err: the server's output that follows
// belongs in the log, not in every call's error.
func firstLine(err error) error {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return errors.New(strings.TrimSuffix(msg, "; its last output:"))
}
