// Package calls is the call registry: every tool call as it arrives, its
// admission (pause, approval modes, the tools allowed for a session), the
// calls held for a person to decide and the decisions, cancellation, and
// the calls the person at the workbench resends. It reaches the rest of the
// engine only through the funcs of Options and the bus; the engine holds
// one Registry (Engine.Calls).
package calls

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/secret"
)

// Approval modes: which calls are held for a person to allow or deny.
const (
	ApproveOff         = "off"
	ApproveDestructive = "destructive"
	ApproveExecute     = "execute" // calls that run code or decide where it runs (Start.RunsCode)
	ApproveAll         = "all"
)

// Start describes a tool call as it arrives.
type Start struct {
	ID          string // unique per call (the observer makes one)
	Session     string
	Tool        string
	Args        json.RawMessage
	Destructive bool
	// Ask, when set, asks the person at the calling client to allow the
	// call. It is used when the call needs approval and no workbench is
	// attached; without it such a call is refused at once, saying why
	// (Unasked, or that the client cannot be asked).
	Ask AskClient
	// Unasked says why the calling client's user is not asked, when it
	// is not for want of elicitation (their answer would not count).
	Unasked string
	// RunsCode marks a call that runs code in a kernel or a sandbox, or
	// decides where code runs (a sandbox, another server): the calls
	// ApproveExecute holds.
	RunsCode bool
	// Preview, when set, computes what the call would do (the engine's
	// Preview); it is asked only when the call is held, and the preview
	// is published on EvCallHeld.
	Preview func(ctx context.Context) *event.CallPreview
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
type AskClient func(ctx context.Context, preview *event.CallPreview) (ClientAnswer, error)

// ClientAnswer is what the person using the client answered.
type ClientAnswer struct {
	Allow     bool
	Dismissed bool   // closed the request without choosing
	Reason    string // their words, when they gave any
}

// Outcome describes how a call ended. It is published as EvCallFinished.
type Outcome struct {
	Status        event.CallStatus
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
// Cancel, so that whoever runs the call can tell the agent why.
var errCancelledInWorkbench = &Refusal{Msg: "the call was cancelled in the workbench by the person supervising this server"}

// errNoWorkbench refuses a call that needs approval when no one can give it.
var errNoWorkbench = &Refusal{Msg: "this call needs approval in the workbench, and no workbench is attached; start with --approve off or attach one"}

// errNoApprover refuses a call that needs approval when no workbench is
// attached and the calling client cannot be asked either.
var errNoApprover = &Refusal{Msg: errNoWorkbench.Msg + " (this MCP client does not support elicitation, so its user cannot be asked instead)"}

// maxReasonBytes bounds the reason a person gives with a denial, which goes
// into the agent's result and the workbench.
const maxReasonBytes = 500

// Options are what the registry asks of the rest of the engine. Every
// func may be nil.
type Options struct {
	// FillServer fills what the header shows about the Jupyter server in
	// use (its URL, a managed server's state) into the state events the
	// registry publishes.
	FillServer func(*event.ServerEvent)
	// Undoable reports whether a call's changes are kept for undo, for
	// EvCallFinished.
	Undoable func(id string) bool
	// ClientOf is the name a session's client introduced itself with, for
	// the texts of a call asked through that client ("" when unknown).
	ClientOf func(session string) string
	// Log receives what goes wrong with a resent call.
	Log *slog.Logger
}

// Registry tracks running and held calls, pause and approval state, and
// the workbench's resent calls.
type Registry struct {
	bus  *event.Bus
	opts Options
	log  *slog.Logger

	resend resender    // resend.go
	closed atomic.Bool // Close was called

	mu      sync.Mutex
	calls   map[string]*call
	paused  bool
	resumed chan struct{} // closed when admission resumes; nil when not paused
	mode    string
	timeout time.Duration
	uis     int // workbenches that may decide (AttachWorkbench)
	// watchers are attached workbenches that only watch (AttachWatcher).
	watchers int
	allowed  map[event.AllowedTool]bool // tools allowed per session (Verdict.ForSession)
	// allowedBy says who set each allow rule, for the calls it lets by.
	allowedBy map[event.AllowedTool]string
}

// call is one registered tool call.
type call struct {
	info     event.CallEvent // as it started
	ctx      context.Context
	cancel   context.CancelCauseFunc
	status   event.CallStatus
	approval chan decision // set while held for approval
	ask      AskClient     // asks the person at the client (Start.Ask)
	unasked  string        // why the client is not asked (Start.Unasked)
	client   string        // the calling client's name, for the texts
	asking   bool          // held while the client is asked, not a workbench

	runsCode bool
	preview  func(context.Context) *event.CallPreview // nil: no preview
	check    func(json.RawMessage) (json.RawMessage, error)
	edited   json.RawMessage // arguments a person edited and allowed
	heldAt   time.Time       // when it was first held; zero if never

	// shown is the preview the call was last held with (ShownOf): what
	// the person decided on. The engine checks it as the call runs.
	shown atomic.Pointer[event.CallPreview]
	// reheld counts the times the call was held again (Rehold); denied
	// says a person denied it then, for its outcome.
	reheld int
	denied bool
}

// decision settles a call held for approval.
type decision struct {
	allow bool
	err   error           // why it was denied
	args  json.RawMessage // allow: arguments a person edited (checked)
	by    string          // who decided (CallEvent.DecidedBy)
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
	// By names who decides (CallEvent.DecidedBy): set by the source that
	// knows it (the attach feed names the workbench it serves), never
	// read from what a workbench sends.
	By string `json:"-"`
}

// Plain reports whether v only allows or denies, with nothing more to say.
func (v Verdict) Plain() bool { return !v.ForSession && v.Reason == "" && v.Args == nil }

// New returns an empty registry publishing on bus.
func New(bus *event.Bus, opts Options) *Registry {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{
		bus:       bus,
		opts:      opts,
		log:       log,
		calls:     map[string]*call{},
		mode:      ApproveOff,
		timeout:   DefaultApprovalTimeout,
		allowed:   map[event.AllowedTool]bool{},
		allowedBy: map[event.AllowedTool]string{},
	}
}

// needsApproval says whether a call must be held under the current mode
// and the tools allowed for its session; r.mu must be held. An unknown mode
// holds everything: failing safe beats running a destructive call no one
// was asked about.
func (r *Registry) needsApproval(cl *call) bool {
	if r.allowed[event.AllowedTool{Session: cl.info.Session, Tool: cl.info.Tool}] {
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

func (r *Registry) publishCall(t event.EventType, ce event.CallEvent) {
	r.bus.Publish(event.Event{Type: t, Call: &ce})
}

// stateLocked is the server state; r.mu must be held.
func (r *Registry) stateLocked() event.ServerEvent {
	st := event.ServerEvent{Paused: r.paused, ApprovalMode: r.mode, Workbenches: r.uis, Watchers: r.watchers}
	for a := range r.allowed {
		st.Allowed = append(st.Allowed, a)
	}
	slices.SortFunc(st.Allowed, func(a, b event.AllowedTool) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Session, b.Session))
	})
	if r.opts.FillServer != nil {
		r.opts.FillServer(&st)
	}
	return st
}

func (r *Registry) publishState() {
	r.mu.Lock()
	st := r.stateLocked()
	r.mu.Unlock()
	r.bus.Publish(event.Event{Type: event.EvServerState, Server: &st})
}

// Begin registers a call: it publishes EvCallStarted, waits while new
// calls are paused or while the call is held for approval (publishing
// EvCallHeld), and returns a context that Cancel cancels, and a finish
// function to call exactly once with the outcome. A denied call (or one whose
// approval timed out, or that needs approval with no workbench attached)
// returns an error (a *UserError saying so) and must not run.
//
// When a held call is let through, EvCallProgress with status running says
// so. When Begin returns an error, the call has already been finished
// (EvCallFinished with status denied or cancelled) and the returned finish
// does nothing. A call cancelled by Cancel while it runs has a context
// whose cause (context.Cause) is a *UserError saying so.
func (r *Registry) Begin(ctx context.Context, c Start) (context.Context, func(Outcome), error) {
	if c.ID == "" {
		return ctx, func(Outcome) {}, errors.New("calls.Begin: the call has no id")
	}
	started := time.Now()
	// The call's changes to notebooks are kept under its identity, to be
	// undone.
	cctx, cancel := context.WithCancelCause(context.WithValue(ctx, identityKey{}, Identity{ID: c.ID, Tool: c.Tool, Session: c.Session, Started: started}))
	cl := &call{
		info: event.CallEvent{
			ID:          c.ID,
			Session:     c.Session,
			Tool:        c.Tool,
			Args:        c.Args,
			Destructive: c.Destructive,
			Editable:    c.Check != nil,
			ResendOf:    c.ResendOf,
			Status:      event.CallRunning,
			Started:     started,
		},
		ctx:      cctx,
		cancel:   cancel,
		status:   event.CallRunning,
		ask:      c.Ask,
		unasked:  c.Unasked,
		runsCode: c.RunsCode,
		check:    c.Check,
	}
	cl.preview = c.Preview
	cctx = context.WithValue(cctx, heldKey{}, cl)
	if c.Ask != nil && r.opts.ClientOf != nil {
		cl.client = r.opts.ClientOf(c.Session)
	}
	r.mu.Lock()
	if _, dup := r.calls[c.ID]; dup {
		r.mu.Unlock()
		cancel(nil)
		return ctx, func(Outcome) {}, fmt.Errorf("calls.Begin: a call with id %q is already registered", c.ID)
	}
	r.calls[c.ID] = cl
	r.mu.Unlock()
	r.publishCall(event.EvCallStarted, cl.info)

	var once sync.Once
	finish := func(o Outcome) {
		once.Do(func() { r.finish(cl, o) })
	}
	err := r.admit(cctx, cl)
	r.mu.Lock()
	if !cl.heldAt.IsZero() {
		cl.info.Held = time.Since(cl.heldAt)
	}
	r.mu.Unlock()
	if err != nil {
		st := event.CallDenied
		if !errors.Is(err, errNoWorkbench) && !errors.Is(err, errNoApprover) && cctx.Err() != nil {
			st = event.CallCancelled
		}
		finish(Outcome{Status: st, Error: err.Error()})
		return cctx, func(Outcome) {}, err
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

// heldKey keys a call's *call into its context, for ShownOf and Rehold.
type heldKey struct{}

// ShownOf returns the preview that the call whose context (from Begin) is
// ctx was held with when a person let it run: what they were shown, which
// the call must still do as it runs (the engine checks it). It is nil when
// the call was not held for approval, or had no preview.
func ShownOf(ctx context.Context) *event.CallPreview {
	if cl, ok := ctx.Value(heldKey{}).(*call); ok {
		return cl.shown.Load()
	}
	return nil
}

// MaxReholds is how many times one call is held again (Rehold) before it
// is refused: what it would do keeps changing under the person's eyes.
const MaxReholds = 3

// Rehold holds again the call whose context (from Begin) is ctx: it was
// allowed on a preview (ShownOf) that is no longer what it would do, and
// changed says what changed, in words for the person. A fresh preview is
// made and shown with changed, and Rehold waits for a new decision as
// Begin does; it returns nil when the call may run (allowed again, or the
// approval mode no longer holds it), else why it must not (denied, timed
// out, cancelled, or changed too often). Edits are not offered: the call
// is already running with its arguments.
func (r *Registry) Rehold(ctx context.Context, changed string) error {
	cl, ok := ctx.Value(heldKey{}).(*call)
	if !ok {
		return errors.New("calls.Rehold: the context is not a call's from Begin")
	}
	r.mu.Lock()
	if r.calls[cl.info.ID] != cl {
		r.mu.Unlock()
		return fmt.Errorf("calls.Rehold: call %q has finished", cl.info.ID)
	}
	if !r.needsApproval(cl) {
		// No one is to be asked any more: it runs as it now is, and who
		// decided says so (an allow rule, or no one).
		if by := r.ruleDecidedLocked(cl); by != "" {
			cl.info.DecidedBy = by
		} else {
			cl.info.DecidedBy = "no one: what it would do changed after it was allowed (" + changed + "), and approval was off by then"
		}
		r.mu.Unlock()
		cl.shown.Store(nil)
		return nil
	}
	if cl.reheld >= MaxReholds {
		cl.info.DecidedBy = "no one: what it would do kept changing after it was shown"
		cl.denied = true
		r.mu.Unlock()
		return refusef("what this call to %s would do changed %d times after the person supervising this server was shown it (last: %s), so it was not run; make the call again once the notebook stops changing", cl.info.Tool, cl.reheld+1, changed)
	}
	cl.reheld++
	cl.check = nil
	cl.info.Editable = false
	err := r.approveLocked(ctx, cl, changed)
	if err != nil && ctx.Err() == nil {
		r.mu.Lock()
		cl.denied = true
		r.mu.Unlock()
	}
	return err
}

// EditedArgs returns the arguments a person edited before allowing the
// call whose context (from Begin) is ctx, as the call's checker
// returned them; ok is false when the call runs as it came.
func EditedArgs(ctx context.Context) (args json.RawMessage, ok bool) {
	args, ok = ctx.Value(editedKey{}).(json.RawMessage)
	return args, ok
}

// admit waits while admission is paused, then while the call is held for
// approval. It returns nil when the call may run.
func (r *Registry) admit(ctx context.Context, cl *call) error {
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
		cl.status = event.CallHeld
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
		cl.status = event.CallRunning
		cl.info.DecidedBy = r.ruleDecidedLocked(cl)
		r.mu.Unlock()
		if held {
			r.progress(cl, "resumed")
		}
		return nil
	}
	return r.approveLocked(ctx, cl, "")
}

// approveLocked holds cl until a person decides it, showing its preview
// and, when it is held again, what changed since it was last shown. It
// returns nil when the call may run. r.mu is held on entry and released.
func (r *Registry) approveLocked(ctx context.Context, cl *call, changed string) error {
	viaClient := r.uis == 0
	if viaClient && cl.ask == nil {
		r.mu.Unlock()
		if cl.unasked != "" {
			return &Refusal{Msg: errNoWorkbench.Msg + " (" + cl.unasked + ")"}
		}
		return errNoApprover
	}
	ch := make(chan decision, 1)
	cl.approval = ch
	cl.status = event.CallHeld
	cl.asking = viaClient
	timeout := r.timeout
	r.mu.Unlock()

	var preview *event.CallPreview
	if cl.preview != nil {
		preview = cl.preview(ctx)
	}
	if preview != nil && changed != "" {
		preview.Changed = changed
	}
	cl.shown.Store(preview)
	why := "waiting for approval"
	if changed != "" {
		why = "held again, since what it would do changed after it was shown (" + changed + "): " + why
	}
	// A workbench that attaches while the client is asked may decide too:
	// whichever answers first settles the call.
	var answered <-chan decision
	// The workbench counts down to the denial: it is told when.
	deadline := time.Now().Add(timeout)
	if viaClient {
		r.holdWith(cl, why+" from "+cl.person()+", asked through their MCP client", preview, deadline)
		askCtx, stop := context.WithCancel(ctx)
		defer stop()
		answered = askThrough(askCtx, cl, preview)
	} else {
		r.holdWith(cl, why+" in the workbench", preview, deadline)
	}

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var d decision
	select {
	case d = <-ch:
	case d = <-answered:
	case <-timer.C:
		if viaClient {
			d = decision{err: refusef("%s did not answer the request to approve this call to %s within %s, so it was not run", cl.person(), cl.info.Tool, timeout)}
		} else {
			d = decision{err: refusef("no one approved this call to %s in the workbench within %s, so it was not run", cl.info.Tool, timeout)}
		}
		d.by = fmt.Sprintf("no one: the approval timed out after %s", timeout)
	case <-ctx.Done():
		d = decision{err: cancelError(ctx)}
	}
	r.mu.Lock()
	cl.approval = nil
	cl.asking = false
	cl.info.DecidedBy = d.by
	if d.allow {
		cl.status = event.CallRunning
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
func askThrough(ctx context.Context, cl *call, preview *event.CallPreview) <-chan decision {
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
	by := cl.person() + ", through their MCP client"
	switch {
	case ctx.Err() != nil:
		return decision{err: cancelError(ctx)}
	case err != nil:
		return decision{err: refusef("asking %s to approve this call to %s failed (%v), so it was not run", cl.person(), cl.info.Tool, err),
			by: "no one: asking " + cl.person() + " failed"}
	case a.Allow:
		return decision{allow: true, by: by}
	case a.Dismissed:
		return decision{err: refusef("%s dismissed the request to approve this call to %s without allowing it, so it was not run", cl.person(), cl.info.Tool), by: by}
	}
	reason := strings.Join(strings.Fields(a.Reason), " ")
	if len(reason) > maxReasonBytes {
		reason = strings.ToValidUTF8(reason[:maxReasonBytes], "") + "..."
	}
	if reason == "" {
		return decision{err: refusef("%s declined this call to %s; it was not run", cl.person(), cl.info.Tool), by: by}
	}
	return decision{err: refusef("%s declined this call: %s (the call to %s was not run)", cl.person(), reason, cl.info.Tool), by: by}
}

// cancelError says why a held call's context ended: the workbench's
// cancellation, or the client's.
func cancelError(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, errCancelledInWorkbench) {
		return cause
	}
	return ctx.Err()
}

func (r *Registry) hold(cl *call, why string) { r.holdWith(cl, why, nil, time.Time{}) }

// holdWith publishes EvCallHeld with what the call would do and when it is
// denied undecided (zero: not held for approval).
func (r *Registry) holdWith(cl *call, why string, p *event.CallPreview, until time.Time) {
	r.mu.Lock()
	if cl.heldAt.IsZero() {
		cl.heldAt = time.Now() // the person's time starts (CallEvent.Held)
	}
	ce := cl.info
	r.mu.Unlock()
	ce.Status = event.CallHeld
	ce.Progress = why
	ce.Preview = p
	ce.HeldUntil = until
	r.publishCall(event.EvCallHeld, ce)
}

func (r *Registry) progress(cl *call, note string) {
	ce := cl.info
	r.mu.Lock()
	ce.Status = cl.status
	r.mu.Unlock()
	ce.Progress = note
	r.publishCall(event.EvCallProgress, ce)
}

// finish publishes the outcome and forgets the call.
func (r *Registry) finish(cl *call, o Outcome) {
	r.mu.Lock()
	delete(r.calls, cl.info.ID)
	denied := cl.denied
	r.mu.Unlock()
	cancelled := errors.Is(context.Cause(cl.ctx), errCancelledInWorkbench)
	cl.cancel(nil)

	ce := cl.info
	ce.Duration = time.Since(ce.Started)
	ce.Status = o.Status
	if denied && (ce.Status == "" || ce.Status == event.CallError) {
		// Held again and denied: the caller's error is that refusal.
		ce.Status = event.CallDenied
	}
	if ce.Status == "" {
		switch {
		case cancelled:
			ce.Status = event.CallCancelled
		case o.IsError || o.Error != "":
			ce.Status = event.CallError
		default:
			ce.Status = event.CallOK
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
	if r.opts.Undoable != nil {
		ce.Undoable = r.opts.Undoable(ce.ID)
	}
	r.publishCall(event.EvCallFinished, ce)
}

// CallProgress publishes a progress note for a running call.
func (r *Registry) Progress(id, note string) {
	r.mu.Lock()
	cl, ok := r.calls[id]
	r.mu.Unlock()
	if ok {
		r.progress(cl, note)
	}
}

// Task publishes what the call's client does with it as a task. The call
// may have finished: its client polls on after that.
func (r *Registry) Task(id string, t event.CallTask) {
	r.publishCall(event.EvCallTask, event.CallEvent{ID: id, Task: &t})
}

// Cancel cancels a running or held call (a human action).
func (r *Registry) Cancel(id string) error {
	r.mu.Lock()
	cl, ok := r.calls[id]
	r.mu.Unlock()
	if !ok {
		return refusef("no running or held call has id %q; it may have finished already", id)
	}
	cl.cancel(errCancelledInWorkbench)
	return nil
}

// SetPaused pauses or resumes admission of new calls. Calls already
// running are not affected.
func (r *Registry) SetPaused(paused bool) {
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
func (r *Registry) SetApproval(mode string, timeout time.Duration) {
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	r.mu.Lock()
	r.mode = mode
	r.timeout = timeout
	for _, cl := range r.calls {
		if cl.approval != nil && !r.needsApproval(cl) {
			select {
			case cl.approval <- decision{allow: true, by: "the approval mode, changed to " + mode}:
			default:
			}
		}
	}
	r.mu.Unlock()
	r.publishState()
}

// maxReason bounds a person's reason for a denial.
const maxReason = 1000

// Decide decides a held call as v says: allow or deny it, and with it
// allow the tool for the session, give the person's reason, or run it with
// arguments the person edited (see Verdict). Edited arguments are checked
// before anything is decided: when the checker rejects them the call stays
// held and the error says why.
func (r *Registry) Decide(id string, v Verdict) error {
	r.mu.Lock()
	cl, ok := r.calls[id]
	if !ok || cl.approval == nil {
		r.mu.Unlock()
		return refusef("no call with id %q is waiting for approval", id)
	}
	check := cl.check
	r.mu.Unlock()

	by := v.By
	if by == "" {
		by = "a workbench"
	}
	d := decision{allow: v.Allow, by: by}
	switch {
	case v.Allow && v.Args != nil:
		if check == nil {
			return refusef("the arguments of this call to %s cannot be edited", cl.info.Tool)
		}
		args, err := check(v.Args)
		if err != nil {
			return refusef("the edited arguments were not accepted, and the call is still held: %v", err)
		}
		d.args = args
	case !v.Allow:
		msg := fmt.Sprintf("the person supervising this server denied this call to %s in the workbench; it was not run", cl.info.Tool)
		if reason := strings.TrimSpace(v.Reason); reason != "" {
			msg += ". Their reason: " + cut(reason, maxReason)
		}
		d.err = &Refusal{Msg: msg}
	}

	r.mu.Lock()
	if cl.approval == nil {
		r.mu.Unlock()
		return refusef("the call %q has already been decided", id)
	}
	select {
	case cl.approval <- d:
	default:
		r.mu.Unlock()
		return refusef("the call %q has already been decided", id)
	}
	allowed := false
	if v.Allow && v.ForSession {
		a := event.AllowedTool{Session: cl.info.Session, Tool: cl.info.Tool}
		allowed = !r.allowed[a]
		r.allowed[a] = true
		r.allowedBy[a] = by
		// The same tool's other held calls from that session go too.
		for _, o := range r.calls {
			if o != cl && o.approval != nil && !r.needsApproval(o) {
				select {
				case o.approval <- decision{allow: true, by: r.ruleDecidedLocked(o)}:
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
func (r *Registry) RevokeAllowed() {
	r.mu.Lock()
	n := len(r.allowed)
	clear(r.allowed)
	clear(r.allowedBy)
	r.mu.Unlock()
	if n > 0 {
		r.publishState()
	}
}

// AttachWorkbench records that a workbench is watching (approval needs one); the
// returned function detaches it. When the last workbench detaches, calls
// held for approval are denied since no one is left to decide.
func (r *Registry) AttachWorkbench() (detach func()) {
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
			r.detachUI()
			r.publishState()
		})
	}
}

// State returns the pause and approval state as last published in
// EvServerState, for a workbench that starts watching late.
func (r *Registry) State() event.ServerEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stateLocked()
}

// ApprovalTimeout returns how long a held call waits for a decision.
func (r *Registry) ApprovalTimeout() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.timeout
}

// Running reports whether call id has begun and not yet finished.
func (r *Registry) Running(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.calls[id]
	return ok
}

// Held reports whether call id waits for a decision (approval, or the
// end of a pause).
func (r *Registry) Held(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	cl, ok := r.calls[id]
	return ok && cl.status == event.CallHeld
}

// PublishState publishes the server state (EvServerState): what the
// options fill in changed (the Jupyter server in use, its state).
func (r *Registry) PublishState() { r.publishState() }
