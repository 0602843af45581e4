package sandbox

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/procgroup"
)

//go:embed driver.py
var driverSource string

// bootstrap is the interpreter's -c program: it reads the driver's source
// as the first line of fd 3 and runs it, so that ps shows a short command
// line rather than the whole driver.
const bootstrap = `import json,os;REQ=os.fdopen(3,"r",encoding="utf-8",newline="\n");exec(compile(json.loads(REQ.readline()),"<sandbox-driver>","exec"))`

const (
	evalStartTimeout = 30 * time.Second
	// interruptGrace is how long an interrupted run has to stop before the
	// interpreter is killed.
	interruptGrace = 5 * time.Second
	// ErrSandboxDied is the ename of the error output that tells of a
	// sandbox that died while it ran the code.
	ErrSandboxDied = "SandboxDied"
)

// ErrNotRunning is returned by Execute on a sandbox that was terminated or
// whose process or kernel died.
var ErrNotRunning = errors.New("the sandbox is not running")

// EvalOptions configure an eval sandbox.
type EvalOptions struct {
	Python string   // interpreter (--python); "" = the one jupyter.FindPython finds
	Dir    string   // working directory; "" = this process's
	Env    []string // extra environment (KEY=value) on top of this process's
	// OnState, when set, is called (it must not block) as the sandbox turns
	// busy, idle or failed.
	OnState func(state string)
	Logger  *slog.Logger
}

// EvalSandbox is a persistent local Python interpreter running the driver.
type EvalSandbox struct {
	info    Info
	cmd     *exec.Cmd
	group   *procgroup.Group // the interpreter and what the code started
	reqW    *os.File
	onState func(string)
	log     *slog.Logger

	turn   chan struct{} // holds one token while a run is in progress
	exited chan struct{} // closed when the interpreter has exited
	eof    chan struct{} // closed when the event pipe reached EOF
	ready  chan readyEvent

	mu         sync.Mutex
	state      string
	run        *evalRun
	nextID     int64
	terminated bool
	exitErr    error
	stderrTail []byte // the last bytes of raw stderr, for launch failures
}

type readyEvent struct {
	PID        int    `json:"pid"`
	Python     string `json:"python"`
	Executable string `json:"executable"`
}

// evalRun is one request in flight.
type evalRun struct {
	id       int64
	onOutput func(notebook.Output)
	// reason, when set, is why the run was interrupted; it becomes the
	// message of the KeyboardInterrupt the interruption raises.
	reason string

	mu     sync.Mutex // orders outputs (events and raw output race)
	out    outputList
	count  *int
	status string
	failed bool // failRun took it
	once   sync.Once
	done   chan struct{}
	// rawSynced receives one value per raw stream (stdout, stderr) when
	// its end-of-request marker has been read.
	rawSynced chan struct{}
}

// rawSync is the marker the driver writes on its real stdout and stderr at
// the end of every request (driver.py RAW_SYNC).
var rawSync = []byte("\x1ejms-raw-sync\x1e")

// rawSyncWait bounds how long a finished run waits for its raw output.
const rawSyncWait = 2 * time.Second

func (r *evalRun) finish(status string, count *int) {
	r.once.Do(func() {
		r.mu.Lock()
		r.status, r.count = status, count
		r.mu.Unlock()
		close(r.done)
	})
}

func (r *evalRun) add(o notebook.Output) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o.OutputType == notebook.Error && o.EName == "KeyboardInterrupt" && o.EValue == "" && r.reason != "" {
		o.EValue = r.reason
		if n := len(o.Traceback); n > 0 && strings.TrimSpace(o.Traceback[n-1]) == "KeyboardInterrupt" {
			o.Traceback = append(append([]string(nil), o.Traceback[:n-1]...), "KeyboardInterrupt: "+r.reason)
		}
	}
	r.out.add(o)
	if r.onOutput != nil {
		r.onOutput(o)
	}
}

// LaunchEval starts an interpreter running the driver and waits until it
// says it is ready.
func LaunchEval(ctx context.Context, opts EvalOptions) (*EvalSandbox, error) {
	if evalUnsupported != nil {
		return nil, evalUnsupported
	}
	python, err := findPython(opts.Python)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Four pipes: requests (fd 3) and events (fd 4) carry the protocol;
	// the real stdout and stderr carry what bypasses sys.stdout (C code,
	// subprocesses) and are forwarded as streams.
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	evtR, evtW, err := os.Pipe()
	if err != nil {
		closeAll(reqR, reqW)
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(reqR, reqW, evtR, evtW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(reqR, reqW, evtR, evtW, outR, outW)
		return nil, err
	}
	// Where no parent-death signal exists, the interpreter watches for our
	// death itself and kills its group.
	cmd := exec.Command(python, "-u", "-c", procgroup.WatchParent(syscall.SIGKILL)+bootstrap)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1", "PYTHONIOENCODING=utf-8")
	if os.Getenv("MPLBACKEND") == "" {
		// No display: matplotlib must draw off screen for the driver to
		// send figures as images.
		cmd.Env = append(cmd.Env, "MPLBACKEND=Agg")
	}
	cmd.Env = append(cmd.Env, opts.Env...)
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.ExtraFiles = []*os.File{reqR, evtW}
	// Its own process group, so that Terminate takes the processes the code
	// started with it; and killed if this server dies without cleaning up.
	cmd.SysProcAttr = procgroup.Attr(syscall.SIGKILL)
	if err := cmd.Start(); err != nil {
		closeAll(reqR, reqW, evtR, evtW, outR, outW, errR, errW)
		return nil, fmt.Errorf("starting %s for the eval sandbox: %w", python, err)
	}
	// The child holds its own copies of these ends.
	closeAll(reqR, evtW, outW, errW)
	group, err := procgroup.Adopt(cmd.Process)
	if err != nil {
		log.Warn("eval sandbox", "err", err)
	}

	s := &EvalSandbox{
		info:    Info{Variant: Eval, PID: cmd.Process.Pid},
		cmd:     cmd,
		group:   group,
		reqW:    reqW,
		onState: opts.OnState,
		log:     log,
		turn:    make(chan struct{}, 1),
		exited:  make(chan struct{}),
		eof:     make(chan struct{}),
		ready:   make(chan readyEvent, 1),
		state:   "starting",
	}
	go s.readEvents(evtR)
	go s.readRaw(outR, "stdout")
	go s.readRaw(errR, "stderr")
	go s.wait()

	src, _ := json.Marshal(driverSource)
	if _, err := reqW.Write(append(src, '\n')); err != nil {
		s.kill()
		<-s.exited
		return nil, fmt.Errorf("the eval sandbox's interpreter (%s) did not start: %s", python, s.exitReason())
	}
	timer := time.NewTimer(evalStartTimeout)
	defer timer.Stop()
	select {
	case r := <-s.ready:
		s.mu.Lock()
		s.info.Python = r.Python
		s.mu.Unlock()
		s.setState(StateIdle)
		log.Debug("eval sandbox ready", "pid", r.PID, "python", r.Python, "executable", r.Executable)
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("the eval sandbox's interpreter (%s) exited while starting: %s", python, s.exitReason())
	case <-timer.C:
		s.kill()
		<-s.exited
		return nil, fmt.Errorf("the eval sandbox's interpreter (%s) did not get ready within %s", python, evalStartTimeout)
	case <-ctx.Done():
		s.kill()
		<-s.exited
		return nil, ctx.Err()
	}
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// Info describes the sandbox.
func (s *EvalSandbox) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// State is idle, busy, terminated or failed.
func (s *EvalSandbox) State() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

func (s *EvalSandbox) setState(st string) {
	s.mu.Lock()
	if s.state == st || s.state == StateTerminated || (s.state == StateFailed && st != StateTerminated) {
		s.mu.Unlock()
		return
	}
	s.state = st
	s.mu.Unlock()
	if s.onState != nil {
		s.onState(st)
	}
}

// exitReason says how the interpreter ended, with the end of what it wrote
// on stderr (a traceback at startup says more than an exit status).
func (s *EvalSandbox) exitReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	why := "it exited"
	if s.exitErr != nil {
		why = s.exitErr.Error()
	}
	if tail := strings.TrimSpace(string(s.stderrTail)); tail != "" {
		why += ": " + tail
	}
	return why
}

// wait reaps the interpreter and fails the run in progress, if any.
func (s *EvalSandbox) wait() {
	err := s.cmd.Wait()
	// Let the event reader deliver what the driver wrote before it died.
	select {
	case <-s.eof:
	case <-time.After(time.Second):
	}
	s.mu.Lock()
	s.exitErr = err
	if err == nil {
		s.exitErr = errors.New("exit status 0")
	}
	run := s.run
	terminated := s.terminated
	s.mu.Unlock()
	// Failed before exited closes: whoever wakes on exited must find the
	// sandbox failed, not idle.
	if !terminated {
		s.setState(StateFailed)
		s.log.Warn("eval sandbox interpreter exited", "pid", s.info.PID, "err", err)
	}
	close(s.exited)
	_ = s.reqW.Close()
	if run != nil {
		s.failRun(run)
	}
}

// failRun ends a run whose interpreter is gone, saying so in an error
// output: the outputs so far are kept, and the caller learns the state is
// lost.
func (s *EvalSandbox) failRun(run *evalRun) {
	run.mu.Lock()
	already := run.failed
	run.failed = true
	run.mu.Unlock()
	select {
	case <-run.done:
		return
	default:
	}
	if already {
		return
	}
	s.mu.Lock()
	terminated := s.terminated
	s.mu.Unlock()
	msg := "the eval sandbox's Python process exited (" + s.exitReason() + "); its state is lost: terminate it and launch a new one"
	if terminated {
		msg = "the eval sandbox was terminated while the code ran"
	}
	run.add(notebook.Output{OutputType: notebook.Error, EName: ErrSandboxDied, EValue: msg,
		Traceback: []string{ErrSandboxDied + ": " + msg}})
	run.finish("aborted", nil)
}

// driverEvent is one line the driver writes on fd 4.
type driverEvent struct {
	Type      string                     `json:"type"`
	ID        int64                      `json:"id"`
	Name      string                     `json:"name"`
	Text      string                     `json:"text"`
	Data      map[string]json.RawMessage `json:"data"`
	Count     int                        `json:"count"`
	Status    string                     `json:"status"`
	EName     string                     `json:"ename"`
	EValue    string                     `json:"evalue"`
	Traceback []string                   `json:"traceback"`

	PID        int    `json:"pid"`
	Python     string `json:"python"`
	Executable string `json:"executable"`
}

func (s *EvalSandbox) readEvents(r io.ReadCloser) {
	defer close(s.eof)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			s.handleEvent(line)
		}
		if err != nil {
			return
		}
	}
}

func (s *EvalSandbox) handleEvent(line []byte) {
	var ev driverEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		s.log.Warn("eval sandbox: unreadable driver event", "err", err)
		return
	}
	if ev.Type == "ready" {
		s.ready <- readyEvent{PID: ev.PID, Python: ev.Python, Executable: ev.Executable}
		return
	}
	s.mu.Lock()
	run := s.run
	s.mu.Unlock()
	if run == nil || run.id != ev.ID {
		s.log.Debug("eval sandbox: event of no current run", "type", ev.Type, "id", ev.ID)
		return
	}
	switch ev.Type {
	case "stream", "execute_result", "display_data", "error":
		// The driver's events carry the fields of the kernel messages of
		// the same names, so one conversion serves both.
		n := ev.Count
		c := output.Content{Name: ev.Name, Text: ev.Text, Data: ev.Data, EName: ev.EName, EValue: ev.EValue, Traceback: ev.Traceback}
		if ev.Type == "execute_result" {
			c.ExecutionCount = &n
		}
		if o, _, ok := output.FromContent(ev.Type, c); ok {
			run.add(o)
		}
	case "done":
		n := ev.Count
		// Raw output (subprocesses) arrives on other pipes: wait until
		// both have delivered this request's part before finishing.
		timeout := time.NewTimer(rawSyncWait)
		for i := 0; i < 2; i++ {
			select {
			case <-run.rawSynced:
			case <-timeout.C:
				i = 2
			}
		}
		timeout.Stop()
		run.finish(ev.Status, &n)
	}
}

// readRaw forwards what bypassed sys.stdout/sys.stderr to the current run,
// and signals the run when the driver's end-of-request marker comes by.
func (s *EvalSandbox) readRaw(r io.ReadCloser, name string) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	var pending []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			pending = append(pending, buf[:n]...)
			for {
				i := bytes.Index(pending, rawSync)
				if i < 0 {
					break
				}
				s.forwardRaw(name, pending[:i])
				pending = pending[i+len(rawSync):]
				s.mu.Lock()
				run := s.run
				s.mu.Unlock()
				if run != nil {
					select {
					case run.rawSynced <- struct{}{}:
					default:
					}
				}
			}
			// Keep back only a tail that could be the start of a marker
			// split across reads; everything else streams at once.
			keep := 0
			for k := min(len(rawSync)-1, len(pending)); k > 0; k-- {
				if bytes.HasSuffix(pending, rawSync[:k]) {
					keep = k
					break
				}
			}
			s.forwardRaw(name, pending[:len(pending)-keep])
			pending = append(pending[:0], pending[len(pending)-keep:]...)
		}
		if err != nil {
			s.forwardRaw(name, pending)
			return
		}
	}
}

// forwardRaw hands raw output to the current run (and keeps a stderr tail
// for crash reports).
func (s *EvalSandbox) forwardRaw(name string, data []byte) {
	if len(data) == 0 {
		return
	}
	text := string(data)
	s.mu.Lock()
	run := s.run
	if name == "stderr" {
		s.stderrTail = append(s.stderrTail, data...)
		if len(s.stderrTail) > 2048 {
			s.stderrTail = s.stderrTail[len(s.stderrTail)-2048:]
		}
	}
	s.mu.Unlock()
	if run != nil {
		run.add(notebook.Output{OutputType: notebook.Stream, Name: name, Text: text})
	} else {
		s.log.Debug("eval sandbox output outside a run", "stream", name, "text", text)
	}
}

// Execute runs code in the interpreter's namespace. When the timeout
// passes or ctx is done the code is interrupted (KeyboardInterrupt, its
// message saying why); if it does not stop within a few seconds the
// interpreter is killed and the sandbox fails.
func (s *EvalSandbox) Execute(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	if req.Timeout <= 0 {
		return Result{}, fmt.Errorf("eval sandbox: timeout must be positive, got %s", req.Timeout)
	}
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	case <-s.exited:
		return Result{}, ErrNotRunning
	}
	defer func() { <-s.turn }()

	s.mu.Lock()
	if s.state == StateTerminated || s.state == StateFailed {
		s.mu.Unlock()
		return Result{}, ErrNotRunning
	}
	s.nextID++
	run := &evalRun{id: s.nextID, onOutput: req.OnOutput, done: make(chan struct{}), rawSynced: make(chan struct{}, 2)}
	s.run = run
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.run == run {
			s.run = nil
		}
		s.mu.Unlock()
	}()

	s.setState(StateBusy)
	line, err := json.Marshal(struct {
		ID   int64  `json:"id"`
		Code string `json:"code"`
	}{run.id, req.Code})
	if err != nil {
		return Result{}, err
	}
	if _, err := s.reqW.Write(append(line, '\n')); err != nil {
		// The interpreter is gone; wait reports it on the run.
		<-s.exited
	}

	timer := time.NewTimer(req.Timeout)
	defer timer.Stop()
	interrupted := false
	select {
	case <-run.done:
	case <-timer.C:
		interrupted = true
		s.interruptRun(run, fmt.Sprintf("the execution ran past its %s timeout and was interrupted", req.Timeout))
	case <-ctx.Done():
		interrupted = true
		s.interruptRun(run, "the call was cancelled and the execution was interrupted")
	case <-s.exited:
		// wait may have looked for a run before this one was registered.
		s.failRun(run)
	}
	<-run.done
	s.setState(StateIdle)

	run.mu.Lock()
	res := Result{
		Outputs:        run.out.snapshot(),
		ExecutionCount: run.count,
		Status:         run.status,
		Interrupted:    interrupted,
		Elapsed:        time.Since(start),
	}
	run.mu.Unlock()
	if res.Status == "" {
		res.Status = "error"
	}
	return res, nil
}

// interruptRun sends SIGINT until the run ends, and kills the interpreter
// if it has not ended after interruptGrace. It returns once the run ended.
func (s *EvalSandbox) interruptRun(run *evalRun, reason string) {
	run.mu.Lock()
	run.reason = reason
	run.mu.Unlock()
	deadline := time.NewTimer(interruptGrace)
	defer deadline.Stop()
	// The driver ignores a SIGINT that lands while it is between user
	// statements (reading the request, compiling); sending it again makes
	// sure the code itself gets one.
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	_ = s.interrupt()
	for {
		select {
		case <-run.done:
			return
		case <-tick.C:
			_ = s.interrupt()
		case <-deadline.C:
			s.log.Warn("eval sandbox did not stop on interrupt; killing it", "pid", s.info.PID)
			s.kill()
			<-s.exited
			s.failRun(run)
			return
		}
	}
}

// interrupt sends the interpreter SIGINT.
func (s *EvalSandbox) interrupt() error {
	select {
	case <-s.exited:
		return ErrNotRunning
	default:
	}
	return s.group.Interrupt()
}

// kill kills the interpreter's whole process group.
func (s *EvalSandbox) kill() { s.group.Kill() }

// Interrupt raises KeyboardInterrupt in the running code. With no code
// running it does nothing.
func (s *EvalSandbox) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	running := s.run != nil
	s.mu.Unlock()
	if !running {
		return nil
	}
	return s.interrupt()
}

// Terminate kills the interpreter and the processes it started, and waits
// until it is gone.
func (s *EvalSandbox) Terminate(ctx context.Context) error {
	s.mu.Lock()
	already := s.terminated
	s.terminated = true
	s.mu.Unlock()
	if !already {
		s.kill()
	}
	select {
	case <-s.exited:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.setState(StateTerminated)
	return nil
}
