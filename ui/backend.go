// Package ui is the workbench: a bubbletea TUI that shows every tool call,
// the notebooks in use, running executions, kernels and sandboxes live, and
// lets a person interrupt, cancel, pause and approve. It observes the engine
// through the narrow Backend interface declared here, so the same screens run
// in-process (Local), attached to another process's feed (Remote) or over a
// recording (Replay).
package ui

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// Backend is everything the workbench needs from the engine: a stream of
// events and the human actions. The UI never knows which implementation it
// talks to.
type Backend interface {
	// Subscribe starts the event stream. The channel is closed when the
	// stream ends (stop called, feed closed, recording over).
	Subscribe() (events <-chan engine.Event, stop func())
	// Info is what the header shows about the server.
	Info() HeaderInfo
	// InterruptKernel interrupts a kernel.
	InterruptKernel(ctx context.Context, kernelID string) error
	// CancelCall cancels a running or held tool call.
	CancelCall(id string) error
	// SetPaused pauses or resumes admission of new calls.
	SetPaused(paused bool) error
	// Decide allows or denies a held call.
	Decide(id string, allow bool) error
}

// HeaderInfo is what the header shows about the server the workbench
// watches.
type HeaderInfo struct {
	Endpoint   string `json:"endpoint,omitempty"`   // MCP endpoint, e.g. http://127.0.0.1:4040/mcp
	Token      string `json:"token,omitempty"`      // bearer token: shown masked, copied on request
	JupyterURL string `json:"jupyterURL,omitempty"` // Jupyter server base URL (no token)
	Mode       string `json:"mode,omitempty"`       // workbench, stdio, streamable-http, attach, replay
	Version    string `json:"version,omitempty"`    // the server's version
}

// ErrReadOnly is returned by actions on a backend that cannot act (a replay).
var ErrReadOnly = errors.New("this workbench is read-only (replay)")

// subscriptionBuffer is the bus buffer of a workbench subscription. The
// buffer absorbs bursts while the UI draws; beyond it the bus drops events
// and tells us how many (EvMissed), so a slow screen never slows a tool call.
const subscriptionBuffer = 4096

// observerBatchWindow is how long the workbench, its feed and recordings let
// engine events gather before taking them: well under a frame (the screen
// draws at most 30 times a second), and long enough that the events of one
// tool call wake them once rather than a dozen times while the call runs.
const observerBatchWindow = 8 * time.Millisecond

// localBackend runs the workbench in the engine's own process.
type localBackend struct {
	e    *engine.Engine
	info HeaderInfo
}

// Local returns a Backend on an in-process engine.
func Local(e *engine.Engine, info HeaderInfo) Backend {
	return &localBackend{e: e, info: info}
}

// Subscribe subscribes to the engine bus and records that a workbench is
// watching (approval of held calls needs one) until stop is called.
func (l *localBackend) Subscribe() (<-chan engine.Event, func()) {
	return subscribeEngine(l.e)
}

// subscribeEngine subscribes to e's bus and attaches a workbench for the
// subscription's lifetime.
func subscribeEngine(e *engine.Engine) (<-chan engine.Event, func()) {
	sub := e.Bus().SubscribeBatched(subscriptionBuffer, observerBatchWindow)
	detach := e.AttachUI()
	var once sync.Once
	return sub.C(), func() {
		once.Do(func() {
			detach()
			sub.Close()
		})
	}
}

func (l *localBackend) Info() HeaderInfo { return l.info }

func (l *localBackend) InterruptKernel(ctx context.Context, kernelID string) error {
	return l.e.InterruptKernel(ctx, kernelID)
}

func (l *localBackend) CancelCall(id string) error { return l.e.CancelCall(id) }

func (l *localBackend) SetPaused(paused bool) error {
	l.e.SetPaused(paused)
	return nil
}

func (l *localBackend) Decide(id string, allow bool) error { return l.e.Decide(id, allow) }
