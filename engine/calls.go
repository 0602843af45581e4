package engine

import (
	"context"
	"encoding/json"
	"time"
)

// Approval modes: which calls are held for a person to allow or deny.
const (
	ApproveOff         = "off"
	ApproveDestructive = "destructive"
	ApproveAll         = "all"
)

// CallStart describes a tool call as it arrives.
type CallStart struct {
	ID          string // unique per call (the observer makes one)
	Session     string
	Tool        string
	Args        json.RawMessage
	Destructive bool
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
}

// BeginCall registers a call: it publishes EvCallStarted, waits while new
// calls are paused or while the call is held for approval (publishing
// EvCallHeld), and returns a context that CancelCall cancels, and a finish
// function to call exactly once with the outcome. A denied call (or one whose
// approval timed out, or that needs approval with no workbench attached)
// returns an error (a *UserError saying so) and must not run.
func (e *Engine) BeginCall(ctx context.Context, c CallStart) (context.Context, func(CallOutcome), error) {
	panic("unimplemented")
}

// CallProgress publishes a progress note for a running call.
func (e *Engine) CallProgress(id, note string) { panic("unimplemented") }

// CancelCall cancels a running or held call (a human action).
func (e *Engine) CancelCall(id string) error { panic("unimplemented") }

// SetPaused pauses or resumes admission of new calls.
func (e *Engine) SetPaused(paused bool) { panic("unimplemented") }

// SetApproval sets the approval mode and how long a held call waits before
// it is denied.
func (e *Engine) SetApproval(mode string, timeout time.Duration) { panic("unimplemented") }

// Decide allows or denies a held call.
func (e *Engine) Decide(id string, allow bool) error { panic("unimplemented") }

// AttachUI records that a workbench is watching (approval needs one); the
// returned function detaches it.
func (e *Engine) AttachUI() (detach func()) { panic("unimplemented") }

// SessionOpened publishes EvSessionOpened.
func (e *Engine) SessionOpened(id, client string) { panic("unimplemented") }

// callRegistry tracks running and held calls, pause and approval state.
type callRegistry struct{}
