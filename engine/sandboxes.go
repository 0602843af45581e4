package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/sandbox"
)

// SandboxSpec is what launch_sandbox asks for.
//
// Which arguments a variant takes follows the reference: gpu only for the
// variants that have one, environment_version and snapshot_name only for
// datalayer; anything else is refused rather than ignored. For the
// jupyter-server variant, Environment names the kernel spec to start
// ("" = the server's default), ServerURL and Token name another Jupyter
// server than the connected one, and KernelID attaches to a running kernel
// (left running on terminate) instead of starting one. The eval variant
// takes none of these and ignores them, as the reference does for the
// arguments of other variants.
type SandboxSpec struct {
	Name               string
	Variant            string        // "" = the configured default
	Timeout            time.Duration // default execution timeout; 0 = 60 s
	Environment        string
	EnvironmentVersion string // number or uid, "" = unset
	GPU                string
	ServerURL          string
	KernelID           string
	ProxyToken         string
	ChannelsURL        string
	Token              string
	PythonVersion      string
	SnapshotName       string
}

// defaultSandboxTimeout is launch_sandbox's default timeout.
const defaultSandboxTimeout = 60 * time.Second

// SandboxInfo describes a launched sandbox (the object launch_sandbox
// answers with and list_sandboxes lists).
type SandboxInfo struct {
	Name           string        `json:"name"`
	ID             string        `json:"id"`
	Variant        string        `json:"variant"`
	State          string        `json:"state"` // idle, busy, failed
	URL            string        `json:"url,omitempty"`
	KernelID       string        `json:"kernel_id,omitempty"`
	PID            int           `json:"pid,omitempty"`    // eval: the interpreter's process
	Python         string        `json:"python,omitempty"` // eval: its version
	Timeout        time.Duration `json:"-"`
	TimeoutSeconds int           `json:"timeout"` // default execution timeout
	Created        time.Time     `json:"created"`
	Active         bool          `json:"active"` // the asking session's execute_code target
}

// sandboxRegistry holds the launched sandboxes and which one each session
// routes execute_code to.
type sandboxRegistry struct {
	publish        func(event.Event)
	client         func() *jupyter.Client
	defaultVariant string // SANDBOX_VARIANT as configured
	python         string // --python, for the eval variant
	maxTimeout     time.Duration
	log            *slog.Logger

	mu      sync.Mutex
	byName  map[string]*sandboxEntry
	pending map[string]bool   // names being launched, reserved
	active  map[string]string // session -> sandbox name
	closed  bool
}

// sandboxEntry is one launched sandbox.
type sandboxEntry struct {
	name    string
	id      string
	variant string
	timeout time.Duration
	created time.Time
	sb      sandbox.Sandbox
}

// newSandboxRegistry returns an empty registry. client returns the REST
// client of the Jupyter server in use (the jupyter-server variant starts
// its kernels there unless a launch names another server); defaultVariant
// is SANDBOX_VARIANT; maxTimeout (0 = none) caps execution timeouts. bus
// may be nil (nothing is published).
func newSandboxRegistry(bus *event.Bus, client func() *jupyter.Client, defaultVariant string, maxTimeout time.Duration, log *slog.Logger) *sandboxRegistry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &sandboxRegistry{
		client:         client,
		defaultVariant: defaultVariant,
		maxTimeout:     maxTimeout,
		log:            log,
		byName:         map[string]*sandboxEntry{},
		pending:        map[string]bool{},
		active:         map[string]string{},
		publish:        func(event.Event) {},
	}
	if bus != nil {
		r.publish = bus.Publish
	}
	return r
}

func (r *sandboxRegistry) publishState(name, id, variant, state string) {
	r.publish(event.Event{Type: event.EvSandboxStatus, Sandbox: &event.SandboxEvent{Name: name, ID: id, Variant: variant, State: state}})
}

func (en *sandboxEntry) info(active bool) SandboxInfo {
	si := en.sb.Info()
	return SandboxInfo{
		Name:           en.name,
		ID:             en.id,
		Variant:        en.variant,
		State:          en.sb.State(),
		URL:            si.URL,
		KernelID:       si.KernelID,
		PID:            si.PID,
		Python:         si.Python,
		Timeout:        en.timeout,
		TimeoutSeconds: int(en.timeout / time.Second),
		Created:        en.created,
		Active:         active,
	}
}

// namesLocked lists the sandbox names, sorted, for error messages.
func (r *sandboxRegistry) namesLocked() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func newSandboxID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "sbx-" + hex.EncodeToString(b[:])
}

// LaunchSandbox launches a sandbox. Refusals (unknown or unavailable variant,
// arguments a variant does not take, a duplicate name) are user errors.
func (e *Engine) LaunchSandbox(ctx context.Context, session string, spec SandboxSpec) (SandboxInfo, error) {
	r := e.sandboxes
	name := strings.TrimSpace(spec.Name)
	if name == "" {
		return SandboxInfo{}, &RequiredError{Field: FieldSandboxName}
	}
	if err := checkName(name); err != nil {
		return SandboxInfo{}, err
	}
	variant, err := r.variantOf(spec)
	if err != nil {
		return SandboxInfo{}, err
	}
	timeout := spec.Timeout
	switch {
	case timeout == 0:
		timeout = defaultSandboxTimeout
	case timeout < time.Second:
		return SandboxInfo{}, &SandboxTimeoutError{Timeout: timeout}
	case r.maxTimeout > 0 && timeout > r.maxTimeout:
		return SandboxInfo{}, &SandboxTimeoutError{Timeout: timeout, Max: r.maxTimeout}
	}

	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return SandboxInfo{}, errClosing
	case r.byName[name] != nil:
		en := r.byName[name]
		r.mu.Unlock()
		return SandboxInfo{}, &SandboxExistsError{Name: name, Variant: en.variant, ID: en.id}
	case r.pending[name]:
		r.mu.Unlock()
		return SandboxInfo{}, &SandboxExistsError{Name: name, Launching: true}
	}
	r.pending[name] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.pending, name)
		r.mu.Unlock()
	}()

	id := newSandboxID()
	// State changes during the launch are not published: the launch
	// itself is, once the sandbox is registered.
	var launched atomic.Bool
	onState := func(state string) {
		if launched.Load() {
			r.publishState(name, id, variant, state)
		}
	}
	var sb sandbox.Sandbox
	switch variant {
	case sandbox.Eval:
		sb, err = sandbox.LaunchEval(ctx, sandbox.EvalOptions{Python: r.python, OnState: onState, Logger: r.log.With("sandbox", name)})
	case sandbox.JupyterServer:
		sb, err = r.launchJupyter(ctx, spec, onState, r.log.With("sandbox", name))
	default:
		// Check refuses every variant this build cannot launch.
		err = fmt.Errorf("sandbox variant %q has no launcher", variant)
	}
	if err != nil {
		if IsUserError(err) {
			return SandboxInfo{}, err
		}
		return SandboxInfo{}, fmt.Errorf("launching the %s sandbox %q: %w", variant, name, err)
	}
	en := &sandboxEntry{name: name, id: id, variant: variant, timeout: timeout, created: time.Now(), sb: sb}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		_ = sb.Terminate(context.WithoutCancel(ctx))
		return SandboxInfo{}, errClosing
	}
	r.byName[name] = en
	active := r.active[session] == name
	r.mu.Unlock()
	info := en.info(active)
	launched.Store(true)
	r.publishState(name, id, variant, info.State)
	r.log.Info("sandbox launched", "name", name, "id", id, "variant", variant, "kernel", info.KernelID, "pid", info.PID)
	return info, nil
}

// variantOf is the variant a launch of spec gets, checked against the
// arguments it takes (a refusal when it cannot be launched so).
func (r *sandboxRegistry) variantOf(spec SandboxSpec) (string, error) {
	variant := sandbox.Normalize(spec.Variant)
	if variant == "" {
		variant = sandbox.DefaultVariant(r.defaultVariant)
	}
	err := sandbox.Check(variant, sandbox.Args{
		GPU:                strings.TrimSpace(spec.GPU),
		EnvironmentVersion: strings.TrimSpace(spec.EnvironmentVersion),
		SnapshotName:       strings.TrimSpace(spec.SnapshotName),
	})
	return variant, err
}

// launchJupyter starts the kernel of a jupyter-server sandbox, on the
// connected server or on the one spec names.
func (r *sandboxRegistry) launchJupyter(ctx context.Context, spec SandboxSpec, onState func(string), log *slog.Logger) (sandbox.Sandbox, error) {
	var client *jupyter.Client
	if u := strings.TrimSpace(spec.ServerURL); u != "" {
		c, err := jupyter.NewClient(u, spec.Token, jupyter.Options{})
		if err != nil {
			return nil, &SandboxServerError{Err: err}
		}
		if _, err := c.Status(ctx); err != nil {
			return nil, &SandboxServerError{Err: err}
		}
		client = c
	} else if r.client != nil {
		client = r.client()
	}
	if client == nil {
		return nil, &SandboxServerError{}
	}
	return sandbox.LaunchJupyter(ctx, sandbox.JupyterOptions{
		Client:     client,
		KernelName: strings.TrimSpace(spec.Environment),
		KernelID:   strings.TrimSpace(spec.KernelID),
		OnState:    onState,
		Logger:     log,
	})
}

// UseSandbox makes execute_code of the session run on the named sandbox; ""
// returns it to kernels. It answers the sandbox in use ("" for kernels).
func (e *Engine) UseSandbox(session, name string) (string, error) {
	r := e.sandboxes
	name = strings.TrimSpace(name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" {
		delete(r.active, session)
		return "", nil
	}
	en := r.byName[name]
	if en == nil {
		return "", &UnknownSandboxError{Name: name, Names: r.namesLocked()}
	}
	if st := en.sb.State(); st == sandbox.StateFailed {
		return "", &SandboxDownError{Name: name, Variant: en.variant, Failed: true}
	}
	r.active[session] = name
	return name, nil
}

func deadPart(variant string) string {
	if variant == sandbox.JupyterServer {
		return "kernel"
	}
	return "Python process"
}

// ListSandboxes lists the launched sandboxes in launch order, marking the
// session's active one.
func (e *Engine) ListSandboxes(session string) []SandboxInfo {
	r := e.sandboxes
	r.mu.Lock()
	entries := make([]*sandboxEntry, 0, len(r.byName))
	for _, en := range r.byName {
		entries = append(entries, en)
	}
	active := r.active[session]
	r.mu.Unlock()
	sort.Slice(entries, func(i, j int) bool {
		if !entries[i].created.Equal(entries[j].created) {
			return entries[i].created.Before(entries[j].created)
		}
		return entries[i].name < entries[j].name
	})
	out := make([]SandboxInfo, len(entries))
	for i, en := range entries {
		out[i] = en.info(en.name == active)
	}
	return out
}

// TerminateSandbox stops a sandbox and unregisters it; no session routes
// execute_code to it any more.
func (e *Engine) TerminateSandbox(ctx context.Context, name string) error {
	r := e.sandboxes
	name = strings.TrimSpace(name)
	r.mu.Lock()
	en := r.byName[name]
	if en == nil {
		defer r.mu.Unlock()
		return &UnknownSandboxError{Name: name, Names: r.namesLocked()}
	}
	delete(r.byName, name)
	for s, n := range r.active {
		if n == name {
			delete(r.active, s)
		}
	}
	r.mu.Unlock()
	err := en.sb.Terminate(ctx)
	// The sandbox publishes "terminated" through its state callback; a
	// failed one does not change state any more, so say it here as well.
	if en.sb.State() != sandbox.StateTerminated {
		r.publishState(en.name, en.id, en.variant, sandbox.StateTerminated)
	}
	r.log.Info("sandbox terminated", "name", name, "id", en.id)
	if err != nil {
		return fmt.Errorf("terminating sandbox %q: %w", name, err)
	}
	return nil
}

// activeFor is the sandbox session routes execute_code to, or nil (also
// on a nil registry).
func (r *sandboxRegistry) activeFor(session string) *sandboxEntry {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byName[r.active[session]]
}

// sessionClosed forgets the session's active sandbox (Engine.SessionClosed
// calls it).
func (r *sandboxRegistry) sessionClosed(session string) {
	r.mu.Lock()
	delete(r.active, session)
	r.mu.Unlock()
}

// closeAll terminates every sandbox (Engine.Close calls it): eval
// interpreters are killed and the kernels sandboxes started are shut down.
func (r *sandboxRegistry) closeAll(ctx context.Context) {
	r.mu.Lock()
	r.closed = true
	entries := r.byName
	r.byName = map[string]*sandboxEntry{}
	r.active = map[string]string{}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, en := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := en.sb.Terminate(ctx); err != nil {
				r.log.Warn("terminating sandbox at close", "name", en.name, "err", err)
			}
			if en.sb.State() != sandbox.StateTerminated {
				r.publishState(en.name, en.id, en.variant, sandbox.StateTerminated)
			}
		}()
	}
	wg.Wait()
}

// executeOnSandbox runs code on sandbox en (the session's active one when
// ExecuteCode chose it).
//
// The timeout is opts.Timeout, or the sandbox's own when that is 0. When it
// passes, a jupyter-server sandbox's code keeps running (StillRunning; its
// later outputs and its end are published as events), while an eval
// sandbox's code is interrupted (its KeyboardInterrupt error says so). A
// cancelled call interrupts the code and returns what it produced with
// Status "aborted" and an error wrapping the cancellation, as ExecuteCode
// does for kernels.
func (e *Engine) executeOnSandbox(ctx context.Context, en *sandboxEntry, code string, opts ExecOptions) (ExecResult, error) {
	r := e.sandboxes
	name := en.name
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = en.timeout
	}
	if r.maxTimeout > 0 && timeout > r.maxTimeout {
		timeout = r.maxTimeout
	}
	info := en.sb.Info()
	execID := "x" + strconv.FormatUint(e.execSeq.Add(1), 10)
	execEvent := func(ev event.ExecEvent) *event.ExecEvent {
		ev.ID, ev.SandboxID, ev.KernelID, ev.CallID = execID, en.id, info.KernelID, opts.CallID
		return &ev
	}
	started := time.Now()
	r.publish(event.Event{Type: event.EvExecStarted, Exec: execEvent(event.ExecEvent{Code: code})})

	var (
		liveMu sync.Mutex
		live   output.Live // outputs as shown live, streams "\r"-applied across pieces
		// outs are the outputs so far as the result will hold them
		// (streams merged, cleared by clear_output), for progress reports.
		outs  []notebook.Output
		texts []*strings.Builder // the text of each stream in outs (nil for others)
	)
	req := sandbox.Request{
		Code:    code,
		Timeout: timeout,
		OnOutput: func(o notebook.Output) {
			liveMu.Lock()
			if n := len(outs); o.OutputType == notebook.Stream && n > 0 && texts[n-1] != nil && outs[n-1].Name == o.Name {
				texts[n-1].WriteString(o.Text)
			} else {
				var b *strings.Builder
				if o.OutputType == notebook.Stream {
					b = &strings.Builder{}
					b.WriteString(o.Text)
				}
				outs, texts = append(outs, o), append(texts, b)
			}
			snap := live.View(&o, e.outputOptions("", "", 0))
			liveMu.Unlock()
			r.publish(event.Event{Type: event.EvExecOutput, Exec: execEvent(event.ExecEvent{Output: &snap})})
		},
		OnClear: func() {
			liveMu.Lock()
			outs, texts = nil, nil
			live.Reset()
			liveMu.Unlock()
		},
		OnFinish: func(status string) {
			r.publish(event.Event{Type: event.EvExecFinished, Exec: execEvent(event.ExecEvent{Status: status, Elapsed: time.Since(started)})})
		},
	}

	// Progress is reported from a goroutine that is stopped, and waited
	// for, before this returns: opts.Progress is never called afterwards.
	stop := make(chan struct{})
	var progress sync.WaitGroup
	if opts.Progress != nil && opts.ProgressInterval > 0 {
		progress.Add(1)
		go func() {
			defer progress.Done()
			t := time.NewTicker(opts.ProgressInterval)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					liveMu.Lock()
					now := slices.Clone(outs)
					for i, b := range texts {
						if b != nil {
							now[i].Text = b.String()
						}
					}
					liveMu.Unlock()
					n, latest := len(now), output.Tail(now, ProgressLines, ProgressLineWidth)
					opts.Progress(ExecProgress{Elapsed: time.Since(started), Timeout: timeout, Outputs: n, Latest: latest})
				}
			}
		}()
	}
	sres, err := en.sb.Execute(ctx, req)
	close(stop)
	progress.Wait()

	if err != nil {
		r.publish(event.Event{Type: event.EvExecFinished, Exec: execEvent(event.ExecEvent{Status: "aborted", Elapsed: time.Since(started)})})
		switch {
		case errors.Is(err, sandbox.ErrNotRunning):
			return ExecResult{}, &SandboxDownError{Name: name, Variant: en.variant, State: en.sb.State()}
		case ctx.Err() != nil:
			return ExecResult{}, fmt.Errorf("the execution on sandbox %q was cancelled before it started: %w", name, context.Cause(ctx))
		}
		return ExecResult{}, fmt.Errorf("running code on sandbox %q: %w", name, err)
	}
	res := ExecResult{
		ExecID:         execID,
		SandboxName:    name,
		Outputs:        sres.Outputs,
		ExecutionCount: sres.ExecutionCount,
		Status:         sres.Status,
		StillRunning:   sres.StillRunning,
		Elapsed:        sres.Elapsed,
	}
	if en.variant == sandbox.JupyterServer {
		res.KernelID = info.KernelID
	}
	if sres.StillRunning {
		res.Timeout = timeout
	}
	if !sres.StillRunning {
		status := sres.Status
		if sres.Interrupted {
			status = "interrupted"
		}
		r.publish(event.Event{Type: event.EvExecFinished, Exec: execEvent(event.ExecEvent{Status: status, Elapsed: sres.Elapsed})})
	}
	if ctx.Err() != nil && sres.Interrupted {
		res.Status = "aborted"
		return res, fmt.Errorf("the execution was cancelled and sandbox %q was interrupted: %w", name, context.Cause(ctx))
	}
	return res, nil
}

// notebookKernel resolves a use_notebook kernel_id that names a sandbox (by
// id or name) to the Jupyter kernel behind it. ok is false when ref names no
// sandbox. A sandbox that cannot host a notebook (not a Jupyter kernel, or a
// kernel on another server than the connected one) is refused, saying why.
func (r *sandboxRegistry) notebookKernel(ref, serverURL string) (kernelID string, ok bool, err error) {
	if r == nil {
		return "", false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, en := range r.byName {
		if en.id != ref && en.name != ref {
			continue
		}
		si := en.sb.Info()
		switch {
		case en.variant != sandbox.JupyterServer || si.KernelID == "":
			return "", true, &SandboxNotKernelError{Name: en.name, Variant: en.variant}
		case strings.TrimRight(si.URL, "/") != strings.TrimRight(serverURL, "/"):
			return "", true, Userf("sandbox %q runs its kernel on %s, not on the connected Jupyter server (%s), where the notebook lives; a notebook can only attach to a kernel on its own server", en.name, si.URL, serverURL)
		}
		return si.KernelID, true, nil
	}
	return "", false, nil
}
