package calls

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/secret"
)

// Resend: the person at the workbench runs a call again, its arguments
// edited, as the workbench's own MCP session. The engine names no tool and
// speaks no MCP: mcp/ gives it a WorkbenchCaller (main wires it), which
// checks arguments with the same checker a held call's edit goes through and
// makes the call through the MCP server, so it is observed like any call.

// WorkbenchSession is the session id of the calls the person at the
// workbench makes. mcp/ gives it to its in-process session only; no client
// session is ever named so (HTTP sessions have random ids, stdio ones are
// "stdio", "stdio-2", ...).
const WorkbenchSession = "workbench"

// WorkbenchCaller makes tool calls as the workbench's own MCP session.
type WorkbenchCaller interface {
	// Checker returns the checker of arguments for tool (against its input
	// schema), of the same kind as Start.Check: it returns the
	// arguments as the call gets them, or why they are refused. It
	// returns nil when there is no such tool.
	Checker(tool string) func(args json.RawMessage) (json.RawMessage, error)
	// Call makes the call and returns when it is over; of is the id of
	// the call it resends, which the call's events carry (ResendOf). A
	// tool's own error is no error here: it is in the call's outcome.
	Call(ctx context.Context, tool string, args json.RawMessage, of string) error
}

// Resend asks for a call to be run again.
type Resend struct {
	Of   string          `json:"of"`   // the id of the call resent
	Tool string          `json:"tool"` // its tool
	Args json.RawMessage `json:"args"` // the arguments, as the person edited them
}

// resender is the engine's part of resend: the caller, and the resent calls
// still running (Close waits a moment for none).
type resender struct {
	mu      sync.Mutex
	caller  WorkbenchCaller
	running sync.WaitGroup
	ctx     context.Context
	stop    context.CancelFunc
}

// errNoCaller says why a resend cannot be made: nothing was wired to make
// calls (a test's engine, a headless server).
var errNoCaller = &Refusal{Msg: "resend is not available: this server has no workbench session to make calls with"}

// SetWorkbenchCaller gives the engine what makes the workbench's calls.
func (r *Registry) SetWorkbenchCaller(c WorkbenchCaller) {
	rs := &r.resend
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.caller = c
	if rs.ctx == nil {
		rs.ctx, rs.stop = context.WithCancel(context.Background())
	}
}

// CanResend says whether Resend can be used: nil, or why not.
func (r *Registry) CanResend() error {
	rs := &r.resend
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.caller == nil || r.closed.Load() {
		return errNoCaller
	}
	return nil
}

// Resend checks the arguments against the tool's input schema and, when
// they are accepted, starts the call as the workbench's session; it does
// not wait for the call to end (its events tell). Arguments in which a
// secret was redacted (the workbench only ever sees them so) are refused:
// the call cannot be resent as it was.
func (r *Registry) Resend(req Resend) error {
	rs := &r.resend
	rs.mu.Lock()
	caller, ctx := rs.caller, rs.ctx
	rs.mu.Unlock()
	if caller == nil || r.closed.Load() {
		return errNoCaller
	}
	if HoldsRedacted(req.Args) {
		return refusef("this call cannot be resent as is: a secret in its arguments was redacted (%s), and the workbench never sees it; put the value in its place", secret.Redacted)
	}
	check := caller.Checker(req.Tool)
	if check == nil {
		return refusef("there is no tool named %q to resend to", req.Tool)
	}
	args, err := check(req.Args)
	if err != nil {
		return refusef("the arguments were not accepted, and nothing was sent: %v", err)
	}
	rs.running.Add(1)
	go func() {
		defer rs.running.Done()
		if err := caller.Call(ctx, req.Tool, args, req.Of); err != nil && ctx.Err() == nil {
			r.log.Warn("a resend from the workbench failed", "tool", req.Tool, "of", req.Of, "err", secret.Redact(err.Error()))
		}
	}()
	return nil
}

// HoldsRedacted reports whether arguments hold a value that was redacted
// where secret.RedactArgs redacts: secret.Redacted as the value of a
// secret-named argument, or in a URL argument. The same words in code are
// code.
func HoldsRedacted(args json.RawMessage) bool {
	if !bytes.Contains(args, []byte(secret.Redacted)) {
		return false
	}
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return false
	}
	for k, v := range m {
		s, ok := v.(string)
		switch {
		case !ok:
		case secret.IsSecretName(k) && s == secret.Redacted:
			return true
		case strings.Contains(strings.ToLower(k), "url") && strings.Contains(s, secret.Redacted):
			return true
		}
	}
	return false
}

// Close refuses resends from now on, cancels the resent calls still
// running and waits a moment for them to finish.
func (r *Registry) Close() {
	r.closed.Store(true)
	rs := &r.resend
	rs.mu.Lock()
	stop := rs.stop
	rs.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	done := make(chan struct{})
	go func() { rs.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		r.log.Warn("resent calls still running at close")
	}
}
