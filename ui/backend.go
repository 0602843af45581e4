// Package ui is the workbench: a bubbletea TUI that shows every tool call,
// the notebooks in use, running executions, kernels and sandboxes live, and
// lets a person interrupt, cancel, pause and approve. It observes the engine
// through the narrow Backend interface declared here, so the same screens run
// in-process (observe.Local), attached to another process's feed
// (observe.Dial) or over a recording (observe.Replay).
package ui

import (
	"context"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// Backend is everything the workbench needs from the engine: a stream of
// events and the human actions. The UI never knows which implementation it
// talks to.
type Backend interface {
	// Subscribe starts the event stream. The channel is closed when the
	// stream ends (stop called, feed closed, recording over).
	Subscribe() (events <-chan event.Event, stop func())
	// Info is what the header shows about the server.
	Info() observe.HeaderInfo
	// InterruptKernel interrupts a kernel.
	InterruptKernel(ctx context.Context, kernelID string) error
	// CancelCall cancels a running or held tool call.
	CancelCall(id string) error
	// SetPaused pauses or resumes admission of new calls.
	SetPaused(paused bool) error
	// Decide allows or denies a held call, with more to say when the
	// verdict has it: allow for the session, deny with a reason, allow
	// with edited arguments.
	Decide(id string, v calls.Verdict) error
	// RevokeAllowed forgets the tools allowed for a session.
	RevokeAllowed() error
	// Undo reverts what a finished call changed in a notebook; the error
	// says why not (a later change to the same cells, names it).
	Undo(callID string) error
	// CanResend says whether calls can be resent here: nil, or why not
	// (a replay, an attached workbench).
	CanResend() error
	// Resend checks edited arguments against the tool's input schema
	// and runs the call again as the workbench's own session; the error
	// says why it was refused. It does not wait for the call.
	Resend(r calls.Resend) error
}

// The sources of package observe are backends.
var (
	_ Backend = (*observe.LocalSource)(nil)
	_ Backend = (*observe.RemoteSource)(nil)
	_ Backend = (*observe.ReplaySource)(nil)
)
