package jupyter

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LaunchManaged starts jupyter-server and returns at once, before the server
// answers: its URL and token are chosen here, so a client can be made for it
// straight away. The state is PhaseStarting until the server answers
// (PhaseUp), or PhaseFailed with the reason when it cannot start: its
// process exited (the reason is the last line of its output), no Python can
// run it, or it did not answer within StartTimeout. OnState hears of the
// change; Ready waits for it. With Restart, a server that dies once up is
// started again as with StartManaged.
//
// The interpreter is not checked beforehand (that check imports
// jupyter_server in a Python of its own, costing as much as the server's own
// start): the first candidate FindPython would try is launched at once, and
// only when its server exits before answering is the full search run, which
// either names a better candidate (launched then) or says why none works.
func LaunchManaged(ctx context.Context, opts ManagedOptions) (*Managed, error) {
	root, err := managedRoot(opts.RootDir)
	if err != nil {
		return nil, err
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	opts.asked = opts.Python
	py, found := quickPython(opts.Python)
	opts.Python, opts.pythonFrom = py.Path, py.From
	// Unlike StartManaged, a port taken before the server binds it cannot
	// be cured with another port: the URL is already out. A port outside
	// the range the system hands out to others (kernels take five each)
	// makes that most unlikely.
	port, err := quietPort()
	if err != nil {
		return nil, fmt.Errorf("finding a free port for jupyter-server: %w", err)
	}
	m, err := newManaged(root, port, opts)
	if err != nil {
		return nil, err
	}
	m.state = ServerState{Phase: PhaseStarting}
	m.ready = make(chan struct{})
	m.superDone = make(chan struct{})
	go func() {
		defer close(m.superDone)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-m.stopping:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := m.startFirst(ctx, found)
		m.startErr = err
		if err != nil {
			m.setState(ServerState{Phase: PhaseFailed, Problem: err.Error()})
			close(m.ready)
			return
		}
		m.setState(ServerState{Phase: PhaseUp})
		close(m.ready)
		if opts.Restart {
			m.supervise()
		}
	}()
	return m, nil
}

// startFirst launches the server the first time and waits for it to
// answer; found says whether quickPython found a candidate at all.
func (m *Managed) startFirst(ctx context.Context, found bool) error {
	if !found {
		// Nothing to launch: the full search says why.
		_, err := FindPython(m.opts.asked)
		if err == nil {
			err = errors.New("no Python was found to run jupyter-server")
		}
		return err
	}
	p, err := m.launch(ctx)
	if err == nil {
		markPythonOK(m.Python)
		return nil
	}
	m.discard(p)
	if ctx.Err() != nil || (p != nil && !errors.Is(err, errExitedEarly)) {
		return m.startProblem(err)
	}
	// The server exited before it answered: was the interpreter the right
	// one? The search FindPython does, with its check, tells.
	py, ferr := FindPython(m.opts.asked)
	if ferr != nil {
		return ferr
	}
	if py.Path == m.Python {
		return m.startProblem(err) // the interpreter is fine: the server is not
	}
	m.Python, m.PythonFrom = py.Path, py.From
	m.opts.Python, m.opts.pythonFrom = py.Path, py.From
	p, err = m.launch(ctx)
	if err != nil {
		m.discard(p)
		return m.startProblem(err)
	}
	return nil
}

// discard kills a server process that failed to start.
func (m *Managed) discard(p *serverProc) {
	if p == nil {
		return
	}
	p.group.Kill()
	<-p.exited
}

// startProblem turns a failed launch into the reason given for it: the
// server's own last word when it exited (the last line of a traceback or of
// its critical log line says the most), else the error.
func (m *Managed) startProblem(err error) error {
	if !errors.Is(err, errExitedEarly) {
		return firstLine(err)
	}
	m.mu.Lock()
	p := m.cur
	m.mu.Unlock()
	cause := exitCause(p.waitErr)
	if last := m.tail.lastWord(); last != "" {
		return fmt.Errorf("%s (%s)", last, cause)
	}
	return fmt.Errorf("jupyter-server %s before it was ready, saying nothing", cause)
}

// Ready waits until the server answers (nil) or has failed to start (why),
// or ctx ends. A server from StartManaged is ready already.
func (m *Managed) Ready(ctx context.Context) error {
	if m.ready == nil {
		return nil
	}
	select {
	case <-m.ready:
		return m.startErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// managedRoot is the absolute notebook root, which must be a directory.
func managedRoot(root string) (string, error) {
	var err error
	if root == "" {
		if root, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	if root, err = filepath.Abs(root); err != nil {
		return "", err
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return "", fmt.Errorf("the notebook root %s is not a directory", root)
	}
	return root, nil
}

// lastWord is the last line of the output that is the server's (not one of
// our bootstrap's notes), trimmed; "" when there is none.
func (t *lineTail) lastWord() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(t.lines[i])
		if l != "" && !strings.HasPrefix(l, "jupyter-mcp:") {
			return l
		}
	}
	return ""
}

// quietPort is a free loopback port outside the range the system hands out
// for port 0 (where kernels take theirs), so that no other program is
// likely to take it before the server binds it.
func quietPort() (int, error) {
	for i := 0; i < 50; i++ {
		port := 20000 + mrand.IntN(12000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			l.Close()
			return port, nil
		}
	}
	return freePort()
}
