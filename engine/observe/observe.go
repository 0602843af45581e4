// Package observe is how the engine is watched from outside a tool call:
// the bounded projection of its events (State), the live feed that serves
// them to workbenches in other processes (Feed) and the client that attaches
// to it (Dial), and the recorder and replay of a session (Recorder, Replay).
// It speaks engine events and draws nothing: a headless server serves
// `attach` without linking any screen code.
//
// LocalSource, RemoteSource and ReplaySource are three sources of the same
// shape: a stream of events, what the header shows about the server, and
// the human actions. The workbench declares the interface they satisfy.
package observe

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/undo"
)

// HeaderInfo is what the workbench's header shows about the server it
// watches; the feed sends it to every workbench that attaches.
type HeaderInfo struct {
	Endpoint   string `json:"endpoint,omitempty"`   // MCP endpoint, e.g. http://127.0.0.1:4040/mcp
	Token      string `json:"token,omitempty"`      // bearer token: shown masked, copied on request
	JupyterURL string `json:"jupyterURL,omitempty"` // Jupyter server base URL (no token)
	Mode       string `json:"mode,omitempty"`       // workbench, stdio, streamable-http, attach, replay
	Version    string `json:"version,omitempty"`    // the server's version
}

// ErrReadOnly is returned by actions on a source that cannot act (a replay).
var ErrReadOnly = errors.New("this workbench is read-only (replay)")

// Why a source cannot resend a call (calls.Registry.Resend): a replay has no
// server to call, and the feed an attached workbench reads carries events
// and the person's actions on the engine, not tool calls.
var (
	ErrResendReplay   = errors.New("resend is not available in a replay: there is no server to run the call on")
	ErrResendAttached = errors.New("resend is not available in an attached workbench: its feed carries events and actions, not tool calls; resend from the workbench of the process that serves MCP")
)

// subscriptionBuffer is the bus buffer of a workbench subscription. The
// buffer absorbs bursts while the UI draws; beyond it the bus drops events
// and tells us how many (EvMissed), so a slow screen never slows a tool call.
const subscriptionBuffer = 4096

// observerBatchWindow is how long the workbench, its feed and recordings let
// engine events gather before taking them: well under a frame (the screen
// draws at most 30 times a second), and long enough that the events of one
// tool call wake them once rather than a dozen times while the call runs.
const observerBatchWindow = 8 * time.Millisecond

// Engine is what observe needs of an in-process engine (*engine.Engine
// has it): its bus, its call registry, and the person's two actions that
// are the core's own. observe imports no engine state beyond these.
type Engine interface {
	Bus() *event.Bus
	Calls() *calls.Registry
	InterruptKernel(ctx context.Context, kernelID string) error
	Undo(ctx context.Context, callID string) (undo.Result, error)
}

// LocalSource is the engine of the workbench's own process.
type LocalSource struct {
	e    Engine
	info HeaderInfo
}

// Local returns a source on an in-process engine.
func Local(e Engine, info HeaderInfo) *LocalSource {
	return &LocalSource{e: e, info: info}
}

// Subscribe subscribes to the engine bus and records that a workbench is
// watching (approval of held calls needs one) until stop is called.
func (l *LocalSource) Subscribe() (<-chan event.Event, func()) {
	return subscribeEngine(l.e)
}

// ServerState is the server state now: it may have been published before
// the workbench subscribed (the managed Jupyter server starting).
func (l *LocalSource) ServerState() event.ServerEvent { return l.e.Calls().State() }

// subscribeEngine subscribes to e's bus and attaches a workbench for the
// subscription's lifetime.
func subscribeEngine(e Engine) (<-chan event.Event, func()) {
	sub := e.Bus().SubscribeBatched(subscriptionBuffer, observerBatchWindow)
	detach := e.Calls().AttachWorkbench()
	var once sync.Once
	return sub.C(), func() {
		once.Do(func() {
			detach()
			sub.Close()
		})
	}
}

func (l *LocalSource) Info() HeaderInfo { return l.info }

func (l *LocalSource) InterruptKernel(ctx context.Context, kernelID string) error {
	return l.e.InterruptKernel(ctx, kernelID)
}

func (l *LocalSource) CancelCall(id string) error { return l.e.Calls().Cancel(id) }

func (l *LocalSource) SetPaused(paused bool) error {
	l.e.Calls().SetPaused(paused)
	return nil
}

// localDecider names the in-process workbench on the calls it decides.
const localDecider = "the workbench in the server's terminal"

func (l *LocalSource) Decide(id string, v calls.Verdict) error {
	v.By = localDecider
	return l.e.Calls().Decide(id, v)
}

func (l *LocalSource) CanResend() error { return l.e.Calls().CanResend() }

func (l *LocalSource) Resend(r calls.Resend) error { return l.e.Calls().Resend(r) }

func (l *LocalSource) RevokeAllowed() error {
	l.e.Calls().RevokeAllowed()
	return nil
}

func (l *LocalSource) Undo(callID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), undoTimeout)
	defer cancel()
	_, err := l.e.Undo(ctx, callID)
	return err
}
