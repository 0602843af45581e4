package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// JupyterOptions configure a jupyter-server sandbox.
type JupyterOptions struct {
	Client *jupyter.Client // the server the kernel runs on
	// KernelName is the kernel spec to start ("" = the server's default).
	KernelName string
	// KernelID attaches to a running kernel instead of starting one; such
	// a kernel is left running on Terminate, since this sandbox did not
	// start it.
	KernelID string
	// OnState, when set, is called (it must not block) as the kernel turns
	// busy, idle or failed.
	OnState func(state string)
	Logger  *slog.Logger
}

// JupyterSandbox is a kernel of its own on a Jupyter server, attached to no
// notebook.
type JupyterSandbox struct {
	client  *jupyter.Client
	conn    *jupyter.KernelConn
	info    Info
	owned   bool // this sandbox started the kernel and shuts it down
	onState func(string)
	log     *slog.Logger

	mu         sync.Mutex
	state      string
	terminated bool
}

// LaunchJupyter starts (or attaches to) a kernel and opens its channel.
func LaunchJupyter(ctx context.Context, opts JupyterOptions) (*JupyterSandbox, error) {
	if opts.Client == nil {
		return nil, errors.New("jupyter-server sandbox: no Jupyter client")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := opts.Client
	var k *jupyter.Kernel
	var err error
	owned := opts.KernelID == ""
	if owned && opts.KernelName != "" {
		if err := checkKernelSpec(ctx, c, opts.KernelName); err != nil {
			return nil, err
		}
	}
	if owned {
		k, err = c.StartKernel(ctx, opts.KernelName)
		if err != nil {
			return nil, fmt.Errorf("starting a kernel for the sandbox on %s: %w", c.BaseURL(), err)
		}
	} else {
		k, err = c.GetKernel(ctx, opts.KernelID)
		if err != nil {
			if jupyter.IsNotFound(err) {
				return nil, &NoKernelError{KernelID: opts.KernelID, Server: c.BaseURL()}
			}
			return nil, err
		}
	}
	conn, err := c.ConnectKernel(ctx, k.ID)
	if err != nil {
		if owned {
			shutdownKernel(c, k.ID, log)
		}
		return nil, fmt.Errorf("connecting to the sandbox kernel %s on %s: %w", k.ID, c.BaseURL(), err)
	}
	s := &JupyterSandbox{
		client:  c,
		conn:    conn,
		info:    Info{Variant: JupyterServer, URL: c.BaseURL(), KernelID: k.ID},
		owned:   owned,
		onState: opts.OnState,
		log:     log,
		state:   StateIdle,
	}
	conn.OnState(s.kernelState)
	if st := conn.State(); st == "busy" {
		s.kernelState(st)
	}
	return s, nil
}

// checkKernelSpec refuses a kernel spec the server does not have, naming
// the ones it has: the server's own answer (a 500 with a traceback) says
// less.
func checkKernelSpec(ctx context.Context, c *jupyter.Client, name string) error {
	specs, err := c.KernelSpecs(ctx)
	if err != nil {
		return err
	}
	if _, ok := specs.Kernelspecs[name]; ok {
		return nil
	}
	names := make([]string, 0, len(specs.Kernelspecs))
	for n := range specs.Kernelspecs {
		names = append(names, n)
	}
	sort.Strings(names)
	return &NoKernelSpecError{Server: c.BaseURL(), Spec: name, Specs: names}
}

func shutdownKernel(c *jupyter.Client, id string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.ShutdownKernel(ctx, id); err != nil && !jupyter.IsNotFound(err) {
		log.Warn("shutting down sandbox kernel", "kernel", id, "err", err)
	}
}

// kernelState maps the kernel's execution state onto the sandbox's.
func (s *JupyterSandbox) kernelState(st string) {
	switch st {
	case "busy":
		s.setState(StateBusy)
	case "idle":
		s.setState(StateIdle)
	case "dead":
		s.setState(StateFailed)
	}
}

func (s *JupyterSandbox) setState(st string) {
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

// Info describes the sandbox.
func (s *JupyterSandbox) Info() Info { return s.info }

// State is idle, busy, terminated or failed.
func (s *JupyterSandbox) State() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Execute runs code on the kernel. When the timeout passes the code keeps
// running: Execute returns what arrived so far with StillRunning, and the
// rest keeps arriving through req.OnOutput until req.OnFinish. When ctx is
// done the kernel is interrupted.
func (s *JupyterSandbox) Execute(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	if req.Timeout <= 0 {
		return Result{}, fmt.Errorf("jupyter-server sandbox: timeout must be positive, got %s", req.Timeout)
	}
	if st := s.State(); st == StateTerminated || st == StateFailed {
		return Result{}, ErrNotRunning
	}
	// stop_on_error would make ipykernel abort requests that arrive just
	// after an error (its abort window), and a sandbox's requests are
	// independent of each other: the next one must run.
	run, err := s.conn.Execute(context.WithoutCancel(ctx), jupyter.ExecuteRequest{Code: req.Code, StoreHistory: true, StopOnError: false})
	if err != nil {
		return Result{}, fmt.Errorf("sending the code to the sandbox kernel %s: %w", s.info.KernelID, err)
	}
	var mu sync.Mutex // guards outs: the drain goroutine may outlive Execute
	var outs outputList
	handle := func(m jupyter.Message) {
		if m.Header.MsgType == "clear_output" {
			mu.Lock()
			outs.clear()
			mu.Unlock()
			if req.OnClear != nil {
				req.OnClear()
			}
			return
		}
		o, _, ok := output.FromMessage(m)
		if !ok {
			return
		}
		mu.Lock()
		outs.add(o)
		mu.Unlock()
		if req.OnOutput != nil {
			req.OnOutput(o)
		}
	}
	msgs := run.Messages()
	timer := time.NewTimer(req.Timeout)
	defer timer.Stop()
	var grace <-chan time.Time
	ctxDone := ctx.Done()
	interrupted := false
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				res := s.finalResult(run, &mu, &outs)
				res.Elapsed, res.Interrupted = time.Since(start), interrupted
				return res, nil
			}
			handle(m)
			continue
		case <-ctxDone:
			// A cancelled call stops its code; the kernel gets a moment
			// to answer the interrupt before the call returns.
			ctxDone = nil
			interrupted = true
			ictx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := s.client.InterruptKernel(ictx, s.info.KernelID); err != nil {
				s.log.Warn("interrupting sandbox kernel", "kernel", s.info.KernelID, "err", err)
			}
			cancel()
			grace = time.After(interruptGrace)
			continue
		case <-timer.C:
		case <-grace:
		}
		break
	}
	// Still running: hand the rest of the run to a goroutine that keeps
	// delivering its outputs, and answer with what arrived so far.
	mu.Lock()
	res := Result{Outputs: outs.snapshot(), Status: "ok", StillRunning: true, Interrupted: interrupted, Elapsed: time.Since(start)}
	mu.Unlock()
	go func() {
		for m := range msgs {
			handle(m)
		}
		final := s.finalResult(run, &mu, &outs)
		if req.OnFinish != nil {
			req.OnFinish(final.Status)
		}
	}()
	return res, nil
}

// finalResult builds the result of a finished run from its reply.
func (s *JupyterSandbox) finalResult(run *jupyter.Run, mu *sync.Mutex, outs *outputList) Result {
	reply, err := run.Wait(context.Background())
	mu.Lock()
	defer mu.Unlock()
	res := Result{Status: "ok"}
	switch {
	case err != nil:
		msg := fmt.Sprintf("the sandbox kernel %s stopped answering while the code ran (%v)", s.info.KernelID, err)
		if errors.Is(err, jupyter.ErrKernelDied) {
			msg = fmt.Sprintf("the sandbox kernel %s died while the code ran; its state is lost", s.info.KernelID)
		}
		outs.add(notebook.Output{OutputType: notebook.Error, EName: ErrSandboxDied, EValue: msg, Traceback: []string{ErrSandboxDied + ": " + msg}})
		res.Status = "aborted"
	case reply != nil:
		if reply.Status != "" {
			res.Status = reply.Status
		}
		n := reply.ExecutionCount
		res.ExecutionCount = &n
	}
	res.Outputs = outs.snapshot()
	return res
}

// Interrupt interrupts the kernel.
func (s *JupyterSandbox) Interrupt(ctx context.Context) error {
	return s.client.InterruptKernel(ctx, s.info.KernelID)
}

// Terminate closes the channel and shuts the kernel down (when this
// sandbox started it). It is safe to call twice.
func (s *JupyterSandbox) Terminate(ctx context.Context) error {
	s.mu.Lock()
	already := s.terminated
	s.terminated = true
	s.mu.Unlock()
	if already {
		return nil
	}
	_ = s.conn.Close()
	var err error
	if s.owned {
		if err = s.client.ShutdownKernel(ctx, s.info.KernelID); jupyter.IsNotFound(err) {
			err = nil
		}
	}
	s.setState(StateTerminated)
	if err != nil {
		return fmt.Errorf("shutting down the sandbox kernel %s: %w", s.info.KernelID, err)
	}
	return nil
}
