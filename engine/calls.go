package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/secret"
)

// Approval modes: which calls are held for a person to allow or deny.
const (
	ApproveOff         = "off"
	ApproveDestructive = "destructive"
	ApproveExecute     = "execute" // only calls that run code
	ApproveAll         = "all"
)

// CallStart describes a tool call as it arrives.
type CallStart struct {
	ID          string // unique per call (the observer makes one)
	Session     string
	Tool        string
	Args        json.RawMessage
	Destructive bool
	// Ask, when set, asks the person at the calling client to allow the
	// call. It is used when the call needs approval and no workbench is
	// attached; without it such a call is refused at once.
	Ask AskClient
	// RunsCode marks a call that runs code in a kernel or a sandbox: the
	// calls ApproveExecute holds.
	RunsCode bool
	// Preview, when set, describes what the call would do in the engine's
	// terms; it is asked only when the call is held, and the engine then
	// computes the preview (preview.go) and publishes it on EvCallHeld.
	Preview func() PreviewRequest
	// Check, when set, checks arguments a person edited while the call was
	// held (against the tool's input schema) and returns them as the call
	// should get them; without it the call's arguments cannot be edited.
	Check func(args json.RawMessage) (json.RawMessage, error)
	// ResendOf, on a call of the WorkbenchSession, is the id of the call
	// the person resent with it (resend.go).
	ResendOf string
}

// AskClient asks the person using the calling client, through that client
// (MCP elicitation), whether a call held for approval may run, showing what
// it would do (preview, nil when the call has none). mcp makes one per call
// when the client can be asked. It returns when the person answered, or
// with an error when ctx ended or the client failed.
type AskClient func(ctx context.Context, preview *CallPreview) (ClientAnswer, error)

// ClientAnswer is what the person using the client answered.
type ClientAnswer struct {
	Allow     bool
	Dismissed bool   // closed the request without choosing
	Reason    string // their words, when they gave any
}

// CallOutcome describes how a call ended. It is published as EvCallFinished.
type CallOutcome struct {
	Status        CallStatus
	Text          string
	Structured    json.RawMessage
	Meta          json.RawMessage
	IsError       bool
	Error         string
	SchemaOK      *bool
	SchemaProblem string
	CellID        string
	Notebook      string
	Images        int
	CellError     string // see CallEvent.CellError

	// Wire sizes of the result's parts (see CallEvent.TextBytes).
	TextBytes, StructuredBytes, ImageBytes int
}

// DefaultApprovalTimeout is how long a held call waits for a decision
// before it is denied.
const DefaultApprovalTimeout = 2 * time.Minute

// errCancelledInWorkbench is the cause of a call context cancelled by
// CancelCall, so that whoever runs the call can tell the agent why.
var errCancelledInWorkbench = &UserError{Msg: "the call was cancelled in the workbench by the person supervising this server"}

// errNoWorkbench refuses a call that needs approval when no one can give it.
var errNoWorkbench = &UserError{Msg: "this call needs approval in the workbench, and no workbench is attached; start with --approve off or attach one"}

// errNoApprover refuses a call that needs approval when no workbench is
// attached and the calling client cannot be asked either.
var errNoApprover = &UserError{Msg: errNoWorkbench.Msg + " (this MCP client does not support elicitation, so its user cannot be asked instead)"}

// maxReasonBytes bounds the reason a person gives with a denial, which goes
// into the agent's result and the workbench.
const maxReasonBytes = 500

// callRegistry tracks running and held calls, pause and approval state.
type callRegistry struct {
	bus *Bus

	// jupyterURL, when set, fills ServerEvent.JupyterURL in the state
	// events the registry publishes.
	jupyterURL func() string
	// jupyterState, when set, fills the managed Jupyter server's state in
	// those events.
	jupyterState func(*ServerEvent)
	// undoable, when set, says whether a call's changes are kept for
	// undo (undo.go), for EvCallFinished.
	undoable func(id string) bool

	mu      sync.Mutex
	calls   map[string]*call
	paused  bool
	resumed chan struct{} // closed when admission resumes; nil when not paused
	mode    string
	timeout time.Duration
	uis     int
	allowed map[AllowedTool]bool // tools allowed per session (Verdict.ForSession)
}

// call is one registered tool call.
type call struct {
	info     CallEvent // as it started
	ctx      context.Context
	cancel   context.CancelCauseFunc
	status   CallStatus
	approval chan decision // set while held for approval
	ask      AskClient     // asks the person at the client (CallStart.Ask)
	client   string        // the calling client's name, for the texts
	asking   bool          // held while the client is asked, not a workbench

	runsCode bool
	preview  func(context.Context) *CallPreview // nil: no preview
	check    func(json.RawMessage) (json.RawMessage, error)
	edited   json.RawMessage // arguments a person edited and allowed
	heldAt   time.Time       // when it was first held; zero if never
}

// decision settles a call held for approval.
type decision struct {
	allow bool
	err   error           // why it was denied
	args  json.RawMessage // allow: arguments a person edited (checked)
}

// Verdict is a person's decision on a held call.
type Verdict struct {
	Allow bool `json:"allow,omitempty"`
	// ForSession (with Allow) also allows every later call to the same
	// tool from the same session, without holding it, until revoked.
	ForSession bool `json:"forSession,omitempty"`
	// Reason (without Allow) is the person's reason, which the agent is
	// given in its error text.
	Reason string `json:"reason,omitempty"`
	// Args (with Allow) are arguments the person edited: the call runs
	// with them once the call's checker accepts them; a rejected edit
	// leaves the call held and returns the checker's error.
	Args json.RawMessage `json:"args,omitempty"`
}

// AllowedTool is a tool a person allowed for one session from now on.
type AllowedTool struct {
	Session string `json:"session"`
	Tool    string `json:"tool"`
}

func newCallRegistry(bus *Bus) *callRegistry {
	return &callRegistry{
		bus:     bus,
		calls:   map[string]*call{},
		mode:    ApproveOff,
		timeout: DefaultApprovalTimeout,
		allowed: map[AllowedTool]bool{},
	}
}

// needsApproval says whether a call must be held under the current mode
// and the tools allowed for its session; r.mu must be held. An unknown mode
// holds everything: failing safe beats running a destructive call no one
// was asked about.
func (r *callRegistry) needsApproval(cl *call) bool {
	if r.allowed[AllowedTool{Session: cl.info.Session, Tool: cl.info.Tool}] {
		return false
	}
	switch r.mode {
	case ApproveOff, "":
		return false
	case ApproveDestructive:
		return cl.info.Destructive
	case ApproveExecute:
		return cl.runsCode
	default:
		return true
	}
}

func (r *callRegistry) publishCall(t EventType, ce CallEvent) {
	r.bus.Publish(Event{Type: t, Call: &ce})
}

// stateLocked is the server state; r.mu must be held.
func (r *callRegistry) stateLocked() ServerEvent {
	st := ServerEvent{Paused: r.paused, ApprovalMode: r.mode}
	for a := range r.allowed {
		st.Allowed = append(st.Allowed, a)
	}
	slices.SortFunc(st.Allowed, func(a, b AllowedTool) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Session, b.Session))
	})
	if r.jupyterURL != nil {
		st.JupyterURL = r.jupyterURL()
	}
	if r.jupyterState != nil {
		r.jupyterState(&st)
	}
	return st
}

func (r *callRegistry) publishState() {
	r.mu.Lock()
	st := r.stateLocked()
	r.mu.Unlock()
	r.bus.Publish(Event{Type: EvServerState, Server: &st})
}

// BeginCall registers a call: it publishes EvCallStarted, waits while new
// calls are paused or while the call is held for approval (publishing
// EvCallHeld), and returns a context that CancelCall cancels, and a finish
// function to call exactly once with the outcome. A denied call (or one whose
// approval timed out, or that needs approval with no workbench attached)
// returns an error (a *UserError saying so) and must not run.
//
// When a held call is let through, EvCallProgress with status running says
// so. When BeginCall returns an error, the call has already been finished
// (EvCallFinished with status denied or cancelled) and the returned finish
// does nothing. A call cancelled by CancelCall while it runs has a context
// whose cause (context.Cause) is a *UserError saying so.
func (e *Engine) BeginCall(ctx context.Context, c CallStart) (context.Context, func(CallOutcome), error) {
	r := e.calls
	if c.ID == "" {
		return ctx, func(CallOutcome) {}, errors.New("BeginCall: the call has no id")
	}
	started := time.Now()
	// The call's changes to notebooks are kept under its id, to be
	// undone (undo.go).
	cctx, cancel := context.WithCancelCause(withCallIdentity(ctx, &callIdentity{id: c.ID, tool: c.Tool, session: c.Session, at: started}))
	cl := &call{
		info: CallEvent{
			ID:          c.ID,
			Session:     c.Session,
			Tool:        c.Tool,
			Args:        c.Args,
			Destructive: c.Destructive,
			Editable:    c.Check != nil,
			ResendOf:    c.ResendOf,
			Status:      CallRunning,
			Started:     started,
		},
		ctx:      cctx,
		cancel:   cancel,
		status:   CallRunning,
		ask:      c.Ask,
		runsCode: c.RunsCode,
		check:    c.Check,
	}
	if c.Preview != nil {
		req, session := c.Preview, c.Session
		cl.preview = func(ctx context.Context) *CallPreview {
			p := e.Preview(ctx, session, req())
			return &p
		}
	}
	if c.Ask != nil {
		cl.client = e.clientOf(c.Session)
	}
	r.mu.Lock()
	if _, dup := r.calls[c.ID]; dup {
		r.mu.Unlock()
		cancel(nil)
		return ctx, func(CallOutcome) {}, fmt.Errorf("BeginCall: a call with id %q is already registered", c.ID)
	}
	r.calls[c.ID] = cl
	r.mu.Unlock()
	r.publishCall(EvCallStarted, cl.info)

	var once sync.Once
	finish := func(o CallOutcome) {
		once.Do(func() { r.finish(cl, o) })
	}
	err := r.admit(cctx, cl)
	r.mu.Lock()
	if !cl.heldAt.IsZero() {
		cl.info.Held = time.Since(cl.heldAt)
	}
	r.mu.Unlock()
	if err != nil {
		st := CallDenied
		if !errors.Is(err, errNoWorkbench) && !errors.Is(err, errNoApprover) && cctx.Err() != nil {
			st = CallCancelled
		}
		finish(CallOutcome{Status: st, Error: err.Error()})
		return cctx, func(CallOutcome) {}, err
	}
	r.mu.Lock()
	edited := cl.edited
	r.mu.Unlock()
	if edited != nil {
		return context.WithValue(cctx, editedKey{}, edited), finish, nil
	}
	return cctx, finish, nil
}

type editedKey struct{}

// EditedArgs returns the arguments a person edited before allowing the
// call whose context (from BeginCall) is ctx, as the call's checker
// returned them; ok is false when the call runs as it came.
func EditedArgs(ctx context.Context) (args json.RawMessage, ok bool) {
	args, ok = ctx.Value(editedKey{}).(json.RawMessage)
	return args, ok
}

// admit waits while admission is paused, then while the call is held for
// approval. It returns nil when the call may run.
func (r *callRegistry) admit(ctx context.Context, cl *call) error {
	if cl.info.Session == WorkbenchSession {
		// The person at the workbench made this call: pausing and
		// approval are theirs, about the agents' calls.
		return nil
	}
	held := false
	for {
		r.mu.Lock()
		if !r.paused {
			break
		}
		wait := r.resumed
		first := !held
		held = true
		cl.status = CallHeld
		r.mu.Unlock()
		if first {
			r.hold(cl, "paused: waiting for new calls to be resumed")
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return cancelError(ctx)
		}
	}
	// r.mu is held here.
	if !r.needsApproval(cl) {
		cl.status = CallRunning
		r.mu.Unlock()
		if held {
			r.progress(cl, "resumed")
		}
		return nil
	}
	viaClient := r.uis == 0
	if viaClient && cl.ask == nil {
		r.mu.Unlock()
		return errNoApprover
	}
	ch := make(chan decision, 1)
	cl.approval = ch
	cl.status = CallHeld
	cl.asking = viaClient
	timeout := r.timeout
	r.mu.Unlock()

	var preview *CallPreview
	if cl.preview != nil {
		preview = cl.preview(ctx)
	}
	// A workbench that attaches while the client is asked may decide too:
	// whichever answers first settles the call.
	var answered <-chan decision
	if viaClient {
		r.holdWith(cl, "waiting for approval from "+cl.person()+", asked through their MCP client", preview)
		askCtx, stop := context.WithCancel(ctx)
		defer stop()
		answered = askThrough(askCtx, cl, preview)
	} else {
		r.holdWith(cl, "waiting for approval in the workbench", preview)
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var d decision
	select {
	case d = <-ch:
	case d = <-answered:
	case <-timer.C:
		if viaClient {
			d = decision{err: Userf("%s did not answer the request to approve this call to %s within %s, so it was not run", cl.person(), cl.info.Tool, timeout)}
		} else {
			d = decision{err: Userf("no one approved this call to %s in the workbench within %s, so it was not run", cl.info.Tool, timeout)}
		}
	case <-ctx.Done():
		d = decision{err: cancelError(ctx)}
	}
	r.mu.Lock()
	cl.approval = nil
	cl.asking = false
	if d.allow {
		cl.status = CallRunning
		cl.edited = d.args
		if d.args != nil {
			// The timeline and a recording show what runs, not what the
			// agent sent: the edited arguments, redacted like any. With
			// no one watching, arguments are not carried at all.
			cl.info.Edited = true
			if cl.info.Args != nil {
				cl.info.Args = secret.RedactArgs(d.args)
			}
		}
	}
	r.mu.Unlock()
	if !d.allow {
		return d.err
	}
	if d.args != nil {
		r.progress(cl, "allowed with arguments edited by the person")
	} else {
		r.progress(cl, "allowed")
	}
	return nil
}

// person names who is asked through the client: "the person using
// claude-code 1.0".
func (cl *call) person() string {
	if cl.client == "" {
		return "the person using the MCP client"
	}
	return "the person using " + cl.client
}

// askThrough asks the person at the client and delivers the decision on the
// returned channel, which is buffered so that an answer nobody waits for
// any more (the workbench decided, the timeout struck) is dropped.
func askThrough(ctx context.Context, cl *call, preview *CallPreview) <-chan decision {
	out := make(chan decision, 1)
	go func() {
		a, err := cl.ask(ctx, preview)
		out <- clientDecision(ctx, cl, a, err)
	}()
	return out
}

// clientDecision turns the person's answer through their client into a
// decision, with the text the agent reads when it is a denial.
func clientDecision(ctx context.Context, cl *call, a ClientAnswer, err error) decision {
	switch {
	case ctx.Err() != nil:
		return decision{err: cancelError(ctx)}
	case err != nil:
		return decision{err: Userf("asking %s to approve this call to %s failed (%v), so it was not run", cl.person(), cl.info.Tool, err)}
	case a.Allow:
		return decision{allow: true}
	case a.Dismissed:
		return decision{err: Userf("%s dismissed the request to approve this call to %s without allowing it, so it was not run", cl.person(), cl.info.Tool)}
	}
	reason := strings.Join(strings.Fields(a.Reason), " ")
	if len(reason) > maxReasonBytes {
		reason = strings.ToValidUTF8(reason[:maxReasonBytes], "") + "..."
	}
	if reason == "" {
		return decision{err: Userf("%s declined this call to %s; it was not run", cl.person(), cl.info.Tool)}
	}
	return decision{err: Userf("%s declined this call: %s (the call to %s was not run)", cl.person(), reason, cl.info.Tool)}
}

// cancelError says why a held call's context ended: the workbench's
// cancellation, or the client's.
func cancelError(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, errCancelledInWorkbench) {
		return cause
	}
	return ctx.Err()
}

func (r *callRegistry) hold(cl *call, why string) { r.holdWith(cl, why, nil) }

// holdWith publishes EvCallHeld with what the call would do.
func (r *callRegistry) holdWith(cl *call, why string, p *CallPreview) {
	r.mu.Lock()
	if cl.heldAt.IsZero() {
		cl.heldAt = time.Now() // the person's time starts (CallEvent.Held)
	}
	ce := cl.info
	r.mu.Unlock()
	ce.Status = CallHeld
	ce.Progress = why
	ce.Preview = p
	r.publishCall(EvCallHeld, ce)
}

func (r *callRegistry) progress(cl *call, note string) {
	ce := cl.info
	r.mu.Lock()
	ce.Status = cl.status
	r.mu.Unlock()
	ce.Progress = note
	r.publishCall(EvCallProgress, ce)
}

// finish publishes the outcome and forgets the call.
func (r *callRegistry) finish(cl *call, o CallOutcome) {
	r.mu.Lock()
	delete(r.calls, cl.info.ID)
	r.mu.Unlock()
	cancelled := errors.Is(context.Cause(cl.ctx), errCancelledInWorkbench)
	cl.cancel(nil)

	ce := cl.info
	ce.Duration = time.Since(ce.Started)
	ce.Status = o.Status
	if ce.Status == "" {
		switch {
		case cancelled:
			ce.Status = CallCancelled
		case o.IsError || o.Error != "":
			ce.Status = CallError
		default:
			ce.Status = CallOK
		}
	}
	ce.Text = o.Text
	ce.Structured = o.Structured
	ce.Meta = o.Meta
	ce.IsError = o.IsError
	ce.Error = o.Error
	ce.SchemaOK = o.SchemaOK
	ce.SchemaProblem = o.SchemaProblem
	ce.CellID = o.CellID
	ce.Notebook = o.Notebook
	ce.Images = o.Images
	ce.CellError = o.CellError
	ce.TextBytes, ce.StructuredBytes, ce.ImageBytes = o.TextBytes, o.StructuredBytes, o.ImageBytes
	if r.undoable != nil {
		ce.Undoable = r.undoable(ce.ID)
	}
	r.publishCall(EvCallFinished, ce)
}

// CallProgress publishes a progress note for a running call.
func (e *Engine) CallProgress(id, note string) {
	r := e.calls
	r.mu.Lock()
	cl, ok := r.calls[id]
	r.mu.Unlock()
	if ok {
		r.progress(cl, note)
	}
}

// CancelCall cancels a running or held call (a human action).
func (e *Engine) CancelCall(id string) error {
	r := e.calls
	r.mu.Lock()
	cl, ok := r.calls[id]
	r.mu.Unlock()
	if !ok {
		return Userf("no running or held call has id %q; it may have finished already", id)
	}
	cl.cancel(errCancelledInWorkbench)
	return nil
}

// SetPaused pauses or resumes admission of new calls. Calls already
// running are not affected.
func (e *Engine) SetPaused(paused bool) {
	r := e.calls
	r.mu.Lock()
	if paused == r.paused {
		r.mu.Unlock()
		return
	}
	r.paused = paused
	if paused {
		r.resumed = make(chan struct{})
	} else {
		close(r.resumed)
		r.resumed = nil
	}
	r.mu.Unlock()
	r.publishState()
}

// SetApproval sets the approval mode and how long a held call waits before
// it is denied (a timeout of 0 means DefaultApprovalTimeout). Calls held for
// approval that the new mode would not hold are let through.
func (e *Engine) SetApproval(mode string, timeout time.Duration) {
	r := e.calls
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	r.mu.Lock()
	r.mode = mode
	r.timeout = timeout
	for _, cl := range r.calls {
		if cl.approval != nil && !r.needsApproval(cl) {
			select {
			case cl.approval <- decision{allow: true}:
			default:
			}
		}
	}
	r.mu.Unlock()
	r.publishState()
}

// Decide allows or denies a held call.
func (e *Engine) Decide(id string, allow bool) error {
	return e.Settle(id, Verdict{Allow: allow})
}

// maxReason bounds a person's reason for a denial.
const maxReason = 1000

// Settle decides a held call as v says (see Verdict). Edited arguments are
// checked before anything is decided: when the checker rejects them the
// call stays held and the error says why.
func (e *Engine) Settle(id string, v Verdict) error {
	r := e.calls
	r.mu.Lock()
	cl, ok := r.calls[id]
	if !ok || cl.approval == nil {
		r.mu.Unlock()
		return Userf("no call with id %q is waiting for approval", id)
	}
	check := cl.check
	r.mu.Unlock()

	d := decision{allow: v.Allow}
	switch {
	case v.Allow && v.Args != nil:
		if check == nil {
			return Userf("the arguments of this call to %s cannot be edited", cl.info.Tool)
		}
		args, err := check(v.Args)
		if err != nil {
			return Userf("the edited arguments were not accepted, and the call is still held: %v", err)
		}
		d.args = args
	case !v.Allow:
		msg := fmt.Sprintf("the person supervising this server denied this call to %s in the workbench; it was not run", cl.info.Tool)
		if reason := strings.TrimSpace(v.Reason); reason != "" {
			msg += ". Their reason: " + excerpt(reason, maxReason)
		}
		d.err = &UserError{Msg: msg}
	}

	r.mu.Lock()
	if cl.approval == nil {
		r.mu.Unlock()
		return Userf("the call %q has already been decided", id)
	}
	select {
	case cl.approval <- d:
	default:
		r.mu.Unlock()
		return Userf("the call %q has already been decided", id)
	}
	allowed := false
	if v.Allow && v.ForSession {
		a := AllowedTool{Session: cl.info.Session, Tool: cl.info.Tool}
		allowed = !r.allowed[a]
		r.allowed[a] = true
		// The same tool's other held calls from that session go too.
		for _, o := range r.calls {
			if o != cl && o.approval != nil && !r.needsApproval(o) {
				select {
				case o.approval <- decision{allow: true}:
				default:
				}
			}
		}
	}
	r.mu.Unlock()
	if allowed {
		r.publishState()
	}
	return nil
}

// RevokeAllowed forgets every tool allowed for a session (Verdict.ForSession):
// their next calls are held again as the mode says.
func (e *Engine) RevokeAllowed() {
	r := e.calls
	r.mu.Lock()
	n := len(r.allowed)
	clear(r.allowed)
	r.mu.Unlock()
	if n > 0 {
		r.publishState()
	}
}

// AttachUI records that a workbench is watching (approval needs one); the
// returned function detaches it. When the last workbench detaches, calls
// held for approval are denied since no one is left to decide.
func (e *Engine) AttachUI() (detach func()) {
	r := e.calls
	r.mu.Lock()
	r.uis++
	r.mu.Unlock()
	// The workbench may have subscribed after the approval mode was set
	// (the server sets it before the screen starts): it learns the state
	// now rather than at the next change.
	r.publishState()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.uis--
			if r.uis > 0 {
				return
			}
			for _, cl := range r.calls {
				// A call whose client is being asked still has someone
				// to decide it.
				if cl.approval != nil && !cl.asking {
					select {
					case cl.approval <- decision{err: errNoWorkbench}:
					default:
					}
				}
			}
		})
	}
}

// SessionOpened puts the session on the notebook most recently activated
// (sessions.go) and publishes EvSessionOpened.
func (e *Engine) SessionOpened(id, client string) {
	e.sessionStarted(id, client)
	e.calls.bus.Publish(Event{Type: EvSessionOpened, Session: &SessionEvent{ID: id, Client: client}})
}

// ServerState returns the pause and approval state as last published in
// EvServerState, for a workbench that starts watching late.
func (e *Engine) ServerState() ServerEvent {
	r := e.calls
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stateLocked()
}

// ApprovalTimeout returns how long a held call waits for a decision.
func (e *Engine) ApprovalTimeout() time.Duration {
	r := e.calls
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.timeout
}
