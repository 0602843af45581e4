package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A run is one tools/call executing apart from the request that started it.
// On 2026-07-28 a server cannot ask its client anything in the middle of a
// call: a call held for approval answers the request with input_required,
// and the client's user answers in a new request (the retry). So the call
// must outlive its first request, held in the engine exactly as a legacy
// client's call is held while its user reads the elicitation form, with the
// workbench still free to decide first. The run is that call: the observer
// and the handler (observeCall) run inside it, under a context that keeps
// the request's values but not its cancellation; whichever request waits
// for it gets its progress and its result, and passes its own cancellation
// on while the run is running (not while it waits for its retry).
//
// Tasks (a handle to poll instead of a request that waits) are runs too: a
// run knows its state, its open question and its result, and can be waited
// for without being cancelled (wait's keep).

type runState int

const (
	runRunning runState = iota // admitted, or held where no one asks the client
	runAsking                  // held: a question waits for the client's answer
	runDone
)

// runKeep is how long a finished run stays findable: a retry that raced the
// workbench's decision (or a poll) still gets its result.
const runKeep = time.Minute

// errClientCancelled is the cause of a run cancelled because the request
// waiting for it ended: the client cancelled (stdio), or closed the stream
// (HTTP), which is how a 2026-07-28 client cancels.
var errClientCancelled = errors.New("the client cancelled the request")

// question is what a run asks its client's user: one input request, keyed
// uniquely over the run's life ("approval-1", then "approval-2" when the
// call is held again because what it would do changed: engine/bound.go).
type question struct {
	key    string
	form   *sdk.ElicitParams
	answer chan *sdk.ElicitResult // buffered 1: the first answer wins
}

// progressSink is where a run's progress goes: the request that waits for
// it now. A retry is a new request (on stateless HTTP, a new SDK session)
// with its own progress token, so the sink moves with the waiter.
type progressSink struct {
	ss    *sdk.ServerSession
	token any
	ctx   context.Context
}

// sinkOf is the sink of a request.
func sinkOf(ctx context.Context, req *sdk.CallToolRequest) progressSink {
	sk := progressSink{ss: req.Session, ctx: ctx}
	if req.Params != nil {
		sk.token = req.Params.GetProgressToken()
	}
	return sk
}

// run is one call executing apart from its request.
type run struct {
	id    string // the call's id, as the engine and the workbench know it
	req   *sdk.CallToolRequest
	tool  string
	args  string // argsHash of the arguments it was called with
	owner caller

	cancel context.CancelCauseFunc // ends the run's context, with a cause

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every change of state
	state   runState
	ask     *question // the open question, while runAsking
	asked   int       // questions asked so far
	sink    progressSink
	res     sdk.Result
	err     error
	ended   time.Time

	// What a task's poll reads (tasks.go): the newest progress message of
	// its execution, when its state or progress last changed, and who
	// cancelled it ("" if no one did).
	progress    string
	started     time.Time
	updated     time.Time
	cancelledBy string
}

// runTable holds the runs that can still be answered or waited for.
type runTable struct {
	mu   sync.Mutex
	runs map[string]*run
}

func (t *runTable) get(id string) *run {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.runs[id]
}

// startRun starts body for req apart from the request. Its context keeps
// the request's values (the SDK routes what the call sends by the request
// id it carries) but not its cancellation, which the waiter passes on
// (wait). The owner stays leased while the run lasts.
func (s *Server) startRun(ctx context.Context, req *sdk.CallToolRequest, owner caller, body func(context.Context, *run) (sdk.Result, error)) *run {
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r := &run{
		id:      newCallID(),
		req:     req,
		tool:    req.Params.Name,
		args:    argsHash(req.Params.Arguments),
		owner:   owner,
		cancel:  cancel,
		changed: make(chan struct{}),
		started: time.Now(),
	}
	t := &s.runs
	t.mu.Lock()
	if t.runs == nil {
		t.runs = map[string]*run{}
	}
	t.runs[r.id] = r
	t.mu.Unlock()
	release := func() {}
	if owner.stateless {
		release = s.hold(owner)
	}
	go func() {
		defer release()
		res, err := s.runBody(rctx, r, body)
		r.mu.Lock()
		r.res, r.err, r.state, r.ask = res, err, runDone, nil
		// A finished run (a task's, kept an hour) keeps its result, not
		// its request.
		r.req, r.cancel = nil, nil
		r.ended = time.Now()
		r.changeLocked()
		r.mu.Unlock()
		cancel(nil)
		time.AfterFunc(runKeep, func() {
			t.mu.Lock()
			delete(t.runs, r.id)
			t.mu.Unlock()
		})
	}()
	return r
}

// runBody runs body under safely, so that a panic in it fails the call
// instead of killing the process: a run's goroutine is ours, not the SDK's,
// and nothing else would catch it.
func (s *Server) runBody(ctx context.Context, r *run, body func(context.Context, *run) (sdk.Result, error)) (sdk.Result, error) {
	return s.safely(func(ctx context.Context, _ string, _ sdk.Request) (sdk.Result, error) {
		return body(ctx, r)
	}, ctx, "tools/call", r.req)
}

// stop cancels the run's context with cause, unless it has ended.
func (r *run) stop(cause error) {
	r.mu.Lock()
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

func (r *run) changeLocked() {
	r.updated = time.Now()
	close(r.changed)
	r.changed = make(chan struct{})
}

// snapshot is the run's state, its open question, and a channel closed at
// its next change.
func (r *run) snapshot() (runState, *question, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state, r.ask, r.changed
}

// result is what the run ended with (valid once runDone).
func (r *run) result() (sdk.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.res, r.err
}

// attach makes sk where the run's progress goes; detach stops it.
func (r *run) attach(sk progressSink) {
	r.mu.Lock()
	r.sink = sk
	r.mu.Unlock()
}

func (r *run) detach(sk progressSink) {
	r.mu.Lock()
	if r.sink.ctx == sk.ctx {
		r.sink = progressSink{}
	}
	r.mu.Unlock()
}

// noteProgress keeps msg as the run's newest progress (a task's
// statusMessage).
func (r *run) noteProgress(msg string) {
	r.mu.Lock()
	r.progress, r.updated = msg, time.Now()
	r.mu.Unlock()
}

// markCancelled records who cancelled the run, the first to do so.
func (r *run) markCancelled(by string) {
	r.mu.Lock()
	if r.cancelledBy == "" && r.state != runDone {
		r.cancelledBy = by
	}
	r.mu.Unlock()
}

// progressTo is where progress goes now.
func (r *run) progressTo() progressSink {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sink
}

// wait blocks until the run asks a question or is done, until deadline
// fires (timedOut), or until ctx ends. A waiter whose ctx ends while the run
// is running cancels it (the client cancelled the request: the kernel is
// interrupted) and waits for it to stop, unless keep says the run is not
// the waiter's to cancel (a task's poll). A run that asks is never
// cancelled by its waiter: it waits for its retry under the engine's
// approval timeout.
func (r *run) wait(ctx context.Context, deadline <-chan time.Time, keep bool) (st runState, q *question, timedOut bool) {
	for {
		st, q, ch := r.snapshot()
		if st != runRunning {
			return st, q, false
		}
		select {
		case <-ch:
		case <-deadline:
			return st, q, true
		case <-ctx.Done():
			if keep {
				return st, q, false
			}
			r.stop(errClientCancelled)
			for {
				st, q, ch := r.snapshot()
				if st != runRunning {
					return st, q, false
				}
				<-ch
			}
		}
	}
}

// askClient puts a question to the run's client and waits for the answer
// that a retry (or a task's update) delivers, or for ctx: the engine's
// approval race ends it when the workbench decides or the time is up.
func (r *run) askClient(ctx context.Context, form *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	r.mu.Lock()
	r.asked++
	q := &question{key: fmt.Sprintf("approval-%d", r.asked), form: form, answer: make(chan *sdk.ElicitResult, 1)}
	r.ask, r.state = q, runAsking
	r.changeLocked()
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.ask == q {
			r.ask = nil
			if r.state == runAsking {
				r.state = runRunning
			}
			r.changeLocked()
		}
		r.mu.Unlock()
	}()
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// answer delivers the client's answer to the open question key. It reports
// false when key is not the open question (answered already, withdrawn when
// the workbench decided, never asked): an answer counts once.
func (r *run) answer(key string, a *sdk.ElicitResult) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ask == nil || r.ask.key != key {
		return false
	}
	select {
	case r.ask.answer <- a:
	default:
		return false
	}
	r.ask = nil
	r.state = runRunning
	r.changeLocked()
	return true
}

type runKey struct{}

// withRun is ctx for the call that runs as r.
func withRun(ctx context.Context, r *run) context.Context {
	return context.WithValue(ctx, runKey{}, r)
}

// runFrom is the run ctx's call runs as (nil: served within its request).
func runFrom(ctx context.Context) *run {
	r, _ := ctx.Value(runKey{}).(*run)
	return r
}
