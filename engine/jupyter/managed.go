package jupyter

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/procgroup"
)

// ErrJupyterNotInstalled says that no jupyter-server could be found to start.
var ErrJupyterNotInstalled = errors.New("jupyter-server is not installed")

// ManagedOptions configure a managed jupyter-server.
type ManagedOptions struct {
	RootDir string    // notebook root; default the working directory
	Log     io.Writer // the server's own output (stderr); nil discards it
	// Extra command-line arguments for jupyter-server (tests use
	// --ServerApp.base_url=/user/alice/).
	ExtraArgs []string
	// Python is the interpreter that has jupyter_server and ipykernel
	// installed (--python). Default: the one FindPython finds.
	Python string
	// StartTimeout bounds the wait for the server to answer; default 60s.
	StartTimeout time.Duration
	pythonFrom   string // where Python was found
	asked        string // Python as the caller gave it, before the search
	// Restart makes the server come back when it dies: started again on
	// the same port with the same token (so the URL, and the notebooks on
	// it, keep working), after 0.5 s, then 1 s, 2 s, ... up to 30 s between
	// attempts; the delay starts over once a server has stayed up for
	// restartReset. OnState hears of each change.
	Restart bool
}

// Managed is a jupyter-server process this program started: on a free
// loopback port, with a random token, TCP_NODELAY on kernel websockets and the
// IOPub rate limits raised. It dies with this process. With
// ManagedOptions.Restart, a server that dies is started again at the same
// address.
type Managed struct {
	URL   string // base URL, ending in "/"
	Token string
	// RootDir is the absolute notebook root the server serves.
	RootDir string
	// RuntimeDir is the server's private Jupyter runtime directory: kernel
	// connection files live there as kernel-<id>.json.
	RuntimeDir string
	// Python is the interpreter that runs the server, and PythonFrom where
	// it was found (see FindPython).
	Python     string
	PythonFrom string

	port int
	opts ManagedOptions
	tail *lineTail

	mu      sync.Mutex
	cur     *serverProc // the process running now (or the last one)
	state   ServerState
	onState []func(ServerState)
	// tellMu keeps the calls of the onState functions in order, the
	// first one (OnState's own) included.
	tellMu    sync.Mutex
	stopping  chan struct{} // closed by Stop
	superDone chan struct{} // closed when the start and the supervisor have returned
	// ready is closed when a launch from LaunchManaged has ended, startErr
	// then saying why it failed (nil: up). nil for StartManaged's.
	ready    chan struct{}
	startErr error

	stopOnce sync.Once
	stopErr  error
}

// serverProc is one run of the jupyter-server process.
type serverProc struct {
	cmd     *exec.Cmd
	group   *procgroup.Group // the process and what it started
	exited  chan struct{}    // closed when the process has been reaped
	waitErr error
}

// nodelayPatch, run before serverLaunch, patches jupyter-server's kernel
// websocket handler to set TCP_NODELAY: tornado leaves Nagle on, so every
// small reply frame after the first waits for the client's delayed ACK
// (~40 ms per round trip). The patch is best effort: if the handler moved
// (jupyter-server 2.x renamed it), the server starts unpatched.
//
// The token travels in an environment variable that the bootstrap removes
// before anything starts: on the command line every local user could read
// it in ps, and left in the environment every kernel (and so any notebook
// printing os.environ) would inherit it.
const nodelayPatch = `
import sys
def _patch(cls):
    orig = cls.open
    def open(self, *args, **kwargs):
        try:
            self.set_nodelay(True)
        except Exception:
            pass
        return orig(self, *args, **kwargs)
    cls.open = open
for _mod, _name in (("jupyter_server.services.kernels.handlers", "ZMQChannelsHandler"),
                    ("jupyter_server.services.kernels.websocket", "KernelWebsocketHandler")):
    try:
        _m = __import__(_mod, fromlist=[_name])
        _patch(getattr(_m, _name))
        print("jupyter-mcp: TCP_NODELAY on kernel websockets (%s.%s)" % (_mod, _name), file=sys.stderr)
    except Exception:
        pass
`

// serverLaunch moves the token from the environment to the server's
// arguments and runs jupyter-server in this interpreter.
const serverLaunch = `
import os, sys, importlib.util
if importlib.util.find_spec("ipykernel") is None:
    print("jupyter-mcp: this Python has no ipykernel to run kernels with", file=sys.stderr)
    sys.exit(86)
_token = os.environ.pop("JUPYTER_MCP_SERVER_TOKEN", None)
if _token is not None:
    sys.argv.append("--ServerApp.token=" + _token)
from jupyter_server.serverapp import main
sys.argv[0] = "jupyter-server"
sys.exit(main())
`

// errExitedEarly is a server process that ended before it answered.
var errExitedEarly = errors.New("jupyter-server exited before it was ready")

// plainServer skips the nodelay patch (the Nagle benchmark compares a
// stock server against ours).
var plainServer bool

// StartManaged starts jupyter-server and waits until api/ answers.
func StartManaged(ctx context.Context, opts ManagedOptions) (*Managed, error) {
	python, err := FindPython(opts.Python)
	if err != nil {
		return nil, err
	}
	root, err := managedRoot(opts.RootDir)
	if err != nil {
		return nil, err
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	opts.Python = python.Path
	opts.pythonFrom = python.From
	// A port taken between our probe and the server's bind makes the
	// server exit at once; a couple of fresh ports cure that.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		m, err := startOnce(ctx, root, opts)
		if err == nil {
			if opts.Restart {
				m.superDone = make(chan struct{})
				go func() {
					defer close(m.superDone)
					m.supervise()
				}()
			}
			return m, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "already in use") {
			break
		}
	}
	return nil, lastErr
}

func startOnce(ctx context.Context, root string, opts ManagedOptions) (*Managed, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("finding a free port for jupyter-server: %w", err)
	}
	m, err := newManaged(root, port, opts)
	if err != nil {
		return nil, err
	}
	if _, err := m.launch(ctx); err != nil {
		if m.cur != nil {
			_ = m.Stop()
		} else {
			os.RemoveAll(m.RuntimeDir)
		}
		return nil, err
	}
	return m, nil
}

// newManaged is a server not yet launched, on port, with a fresh token and
// runtime directory, in PhaseUp (LaunchManaged says otherwise).
func newManaged(root string, port int, opts ManagedOptions) (*Managed, error) {
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	runtimeDir, err := os.MkdirTemp("", "jupyter-mcp-runtime-")
	if err != nil {
		return nil, err
	}
	m := &Managed{
		URL:        fmt.Sprintf("http://127.0.0.1:%d/", port),
		Token:      token,
		RootDir:    root,
		RuntimeDir: runtimeDir,
		Python:     opts.Python,
		PythonFrom: opts.pythonFrom,
		port:       port,
		opts:       opts,
		tail:       &lineTail{max: 30},
		state:      ServerState{Phase: PhaseUp},
		stopping:   make(chan struct{}),
	}
	if base := strings.Trim(baseURLArg(opts.ExtraArgs), "/"); base != "" {
		m.URL += base + "/"
	}
	return m, nil
}

// launch starts the server process on m's port with m's token and waits
// until it answers. The process is returned (and current) once started,
// even when it then fails to answer.
func (m *Managed) launch(ctx context.Context) (*serverProc, error) {
	bootstrap := nodelayPatch + serverLaunch
	if plainServer {
		bootstrap = serverLaunch
	}
	// Where no parent-death signal exists, the server watches for our death
	// itself and SIGTERMs its group, so that it shuts its kernels down.
	bootstrap = procgroup.WatchParent(syscall.SIGTERM) + bootstrap
	args := []string{"-c", bootstrap,
		"--no-browser",
		"--ServerApp.open_browser=False",
		"--ServerApp.ip=127.0.0.1",
		"--ServerApp.port=" + strconv.Itoa(m.port),
		"--ServerApp.port_retries=0",
		"--ServerApp.root_dir=" + m.RootDir,
		"--ServerApp.iopub_data_rate_limit=1e10",
		"--ServerApp.iopub_msg_rate_limit=1e10",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-root")
	}
	args = append(args, m.opts.ExtraArgs...)
	cmd := exec.Command(m.Python, args...)
	cmd.Dir = m.RootDir
	cmd.Env = append(os.Environ(),
		"PYDEVD_DISABLE_FILE_VALIDATION=1",
		// A private runtime dir keeps connection files and the cookie
		// secret of this server apart from any other Jupyter on the
		// machine, and tells the benchmark where kernel files are.
		"JUPYTER_RUNTIME_DIR="+m.RuntimeDir,
		"PYTHONUNBUFFERED=1",
		"JUPYTER_MCP_SERVER_TOKEN="+m.Token,
	)
	// A process group (or Job Object) of its own, SIGTERMed on Linux when
	// we die: a crash of ours leaves no server and kernels behind.
	cmd.SysProcAttr = procgroup.Attr(syscall.SIGTERM)
	// Our own pipe rather than an io.Writer: exec would otherwise wait in
	// Wait for every holder of the pipe (the kernels inherit stderr).
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("starting %s for jupyter-server: %w", m.Python, err)
	}
	pw.Close()
	group, err := procgroup.Adopt(cmd.Process)
	if err != nil && m.opts.Log != nil {
		fmt.Fprintln(m.opts.Log, "jupyter-mcp:", err)
	}
	p := &serverProc{cmd: cmd, group: group, exited: make(chan struct{})}
	m.mu.Lock()
	m.cur = p
	m.mu.Unlock()
	go m.copyLog(pr, m.opts.Log)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, m.waitReady(ctx, p, m.opts.StartTimeout)
}

// waitReady polls api/ with the token until the server answers, the
// process exits, or the timeout passes.
func (m *Managed) waitReady(ctx context.Context, p *serverProc, timeout time.Duration) error {
	c, err := NewClient(m.URL, m.Token, Options{Timeout: 2 * time.Second})
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	// A refused connection costs next to nothing on either side, and every
	// tick of the poll is time a start can lose: 10 ms loses 5 on average.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("%w (%v); its last output:\n%s", errExitedEarly, p.waitErr, m.tail.String())
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("jupyter-server did not answer at %s within %s (last error: %v); its last output:\n%s", m.URL, timeout, lastErr, m.tail.String())
		case <-tick.C:
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			lastErr = c.answers(pctx)
			cancel()
			if lastErr == nil {
				return nil
			}
		}
	}
}

// Stop shuts the server and all its kernels down (and ends its
// supervision).
func (m *Managed) Stop() error {
	m.stopOnce.Do(func() {
		close(m.stopping)
		if m.superDone != nil {
			<-m.superDone
		}
		m.stopErr = m.stopProc()
		os.RemoveAll(m.RuntimeDir)
	})
	return m.stopErr
}

// stopProc stops the current process and every kernel it left.
func (m *Managed) stopProc() error {
	m.mu.Lock()
	p := m.cur
	m.mu.Unlock()
	if p == nil {
		return nil
	}
	pid := p.cmd.Process.Pid
	// Kernels run in sessions of their own, so killing the server's
	// process group does not reach them; remember them now to clean up
	// whatever the server fails to shut down. Kernels orphaned earlier (the
	// server crashed) are found by their connection file, which lives in
	// our private runtime dir.
	kids := append(descendants(pid), processesMentioning(m.RuntimeDir)...)
	select {
	case <-p.exited:
	default:
		// SIGTERM lets the server shut its kernels down cleanly (Windows
		// has no such request: the kill below takes the whole job).
		if p.group.Terminate() {
			select {
			case <-p.exited:
			case <-time.After(5 * time.Second):
			}
		}
	}
	p.group.Kill()
	<-p.exited
	for _, k := range kids {
		k.kill()
	}
	return nil
}

// PID is the id of the server process running now.
func (m *Managed) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur.cmd.Process.Pid
}

// Exited is closed when the server process running now has ended.
func (m *Managed) Exited() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur.exited
}

// LastOutput is the server's last few lines of output (for error reports).
func (m *Managed) LastOutput() string { return m.tail.String() }

func (m *Managed) copyLog(r io.ReadCloser, log io.Writer) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		m.tail.add(line)
		if log != nil {
			fmt.Fprintln(log, line)
		}
	}
}

// baseURLArg extracts --ServerApp.base_url from extra arguments so that the
// managed URL carries it.
func baseURLArg(args []string) string {
	for i, a := range args {
		for _, key := range []string{"--ServerApp.base_url", "--NotebookApp.base_url", "--base-url", "--base_url"} {
			if v, ok := strings.CutPrefix(a, key+"="); ok {
				return v
			}
			if a == key && i+1 < len(args) {
				return args[i+1]
			}
		}
	}
	return ""
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomToken() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// lineTail keeps the last max lines written to it.
type lineTail struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *lineTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *lineTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
