package observe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/secret"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/undo"
)

// The feed protocol, one JSON object per websocket text message.
//
// Server to workbench: first {"type":"hello","info":{...}}, then the state
// as events ({"type":"event","event":{...}}) that rebuild it, then every
// engine event as it happens, and {"type":"result","ref":N,"error":"..."}
// answering an action.
//
// Workbench to server: {"action":"interrupt","kernelID":...},
// {"action":"cancel","id":...}, {"action":"pause"}, {"action":"resume"},
// {"action":"decide","id":...,"allow":true},
// {"action":"settle","id":...,"verdict":{...}}, {"action":"revoke"},
// {"action":"undo","id":...}, each with a "ref" that its result carries back.

// feedMessage is a message from the feed server.
type feedMessage struct {
	Type  string       `json:"type"` // hello, event, result
	Info  *HeaderInfo  `json:"info,omitempty"`
	Event *event.Event `json:"event,omitempty"`
	Ref   int64        `json:"ref,omitempty"`
	Error string       `json:"error,omitempty"`
}

// feedAction is a human action sent by an attached workbench.
type feedAction struct {
	Action   string `json:"action"` // interrupt, cancel, pause, resume, decide, settle, revoke, undo
	ID       string `json:"id,omitempty"`
	Allow    bool   `json:"allow,omitempty"`
	KernelID string `json:"kernelID,omitempty"`
	Ref      int64  `json:"ref,omitempty"`

	Verdict *calls.Verdict `json:"verdict,omitempty"` // settle
}

// feedEngine is what the feed server needs of the engine; *engine.Engine
// has it.
type feedEngine interface {
	InterruptKernel(ctx context.Context, kernelID string) error
	CancelCall(id string) error
	SetPaused(paused bool)
	Decide(id string, v calls.Verdict) error
	RevokeAllowed()
	Undo(ctx context.Context, callID string) (undo.Result, error)
	AttachWorkbench() (detach func())
}

// feedClientBuffer bounds what is queued for one attached workbench; past
// it events are dropped and counted, like on the bus, so a stalled client
// slows nothing.
const feedClientBuffer = 4096

// Feed serves the engine's live feed to workbenches attached from other
// processes (`jupyter-mcp-server attach`). It keeps a bounded copy of the
// state so a workbench attaching late starts with what happened before.
type Feed struct {
	eng      feedEngine
	info     HeaderInfo
	token    string
	upgrader websocket.Upgrader
	stop     func()

	mu      sync.Mutex
	st      *State
	clients map[*feedClient]struct{}
	closed  bool
}

// feedClient is one attached workbench's outgoing queue.
type feedClient struct {
	out    chan event.Event
	missed uint64 // events dropped since the last delivered one (under Feed.mu)
	gone   chan struct{}
}

// ServeFeed returns the feed of e as an http.Handler (a websocket
// endpoint; it does not look at the request path, so mount it where you
// like). A workbench must present token (Authorization: Bearer, or
// ?token=): the feed carries notebook contents and lets its holder
// interrupt kernels. An empty token disables the check, for feeds served on
// a unix socket in a private directory. The header info, MCP token
// included, is sent to every workbench that attaches.
func ServeFeed(e Engine, info HeaderInfo, token string) *Feed {
	sub := e.Bus().SubscribeBatched(subscriptionBuffer, observerBatchWindow)
	return newFeed(sub.C(), sub.Close, engineActions{e}, info, token)
}

// engineActions is an in-process engine as the feed's actions need it:
// the call registry's, and the core's own.
type engineActions struct{ e Engine }

func (a engineActions) InterruptKernel(ctx context.Context, kernelID string) error {
	return a.e.InterruptKernel(ctx, kernelID)
}
func (a engineActions) CancelCall(id string) error              { return a.e.Calls().Cancel(id) }
func (a engineActions) SetPaused(paused bool)                   { a.e.Calls().SetPaused(paused) }
func (a engineActions) Decide(id string, v calls.Verdict) error { return a.e.Calls().Decide(id, v) }
func (a engineActions) RevokeAllowed()                          { a.e.Calls().RevokeAllowed() }
func (a engineActions) AttachWorkbench() (detach func())        { return a.e.Calls().AttachWorkbench() }
func (a engineActions) Undo(ctx context.Context, callID string) (undo.Result, error) {
	return a.e.Undo(ctx, callID)
}

func newFeed(events <-chan event.Event, stop func(), eng feedEngine, info HeaderInfo, token string) *Feed {
	f := &Feed{
		eng:     eng,
		info:    info,
		token:   token,
		stop:    stop,
		st:      NewState(nil),
		clients: map[*feedClient]struct{}{},
	}
	go f.keep(events)
	return f
}

// keep folds every event into the state and fans it out, under one lock,
// so that a workbench attaching gets the snapshot and then exactly the
// events after it.
func (f *Feed) keep(events <-chan event.Event) {
	for ev := range events {
		f.mu.Lock()
		f.st.Apply(ev)
		for c := range f.clients {
			f.deliver(c, ev)
		}
		f.mu.Unlock()
	}
	f.Close()
}

// deliver queues ev for c without blocking (f.mu held).
func (f *Feed) deliver(c *feedClient, ev event.Event) {
	if c.missed > 0 {
		select {
		case c.out <- event.Event{Type: event.EvMissed, Missed: c.missed, Time: ev.Time}:
			c.missed = 0
		default:
			c.missed++
			return
		}
	}
	select {
	case c.out <- ev:
	default:
		c.missed++
	}
}

// Close disconnects every workbench and stops following the engine.
func (f *Feed) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	for c := range f.clients {
		close(c.out)
		delete(f.clients, c)
	}
	if f.stop != nil {
		go f.stop()
	}
}

// ServeHTTP upgrades to a websocket and serves one workbench.
func (f *Feed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !f.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="jupyter-mcp-server feed"`)
		http.Error(w, "the live feed needs its token (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
		return
	}
	conn, err := f.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the request.
	}
	defer conn.Close()

	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	snap := f.st.Snapshot()
	c := &feedClient{out: make(chan event.Event, feedClientBuffer), gone: make(chan struct{})}
	f.clients[c] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		if _, ok := f.clients[c]; ok {
			delete(f.clients, c)
			close(c.out)
		}
		f.mu.Unlock()
	}()

	detach := f.eng.AttachWorkbench()
	defer detach()

	// One writer: gorilla connections take one concurrent writer.
	results := make(chan feedMessage, 16)
	stopped := make(chan struct{})
	defer close(stopped)
	go f.readActions(conn, results, c.gone, stopped)

	info := f.info
	if err := conn.WriteJSON(feedMessage{Type: "hello", Info: &info}); err != nil {
		return
	}
	for i := range snap {
		if err := conn.WriteJSON(feedMessage{Type: "event", Event: &snap[i]}); err != nil {
			return
		}
	}
	for {
		select {
		case ev, ok := <-c.out:
			if !ok {
				_ = conn.WriteControl(websocket.CloseMessage,
					websocket.FormatCloseMessage(websocket.CloseGoingAway, "server closing"), time.Now().Add(time.Second))
				return
			}
			if err := conn.WriteJSON(feedMessage{Type: "event", Event: &ev}); err != nil {
				return
			}
		case res := <-results:
			if err := conn.WriteJSON(res); err != nil {
				return
			}
		case <-c.gone:
			return
		}
	}
}

// authorized checks the request's token in constant time.
func (f *Feed) authorized(r *http.Request) bool {
	if f.token == "" {
		return true
	}
	return secret.Authorized(r, f.token, "token")
}

// readActions runs the actions a workbench sends, answering each.
func (f *Feed) readActions(conn *websocket.Conn, results chan<- feedMessage, gone chan<- struct{}, stopped <-chan struct{}) {
	defer close(gone)
	for {
		var a feedAction
		if err := conn.ReadJSON(&a); err != nil {
			return
		}
		res := feedMessage{Type: "result", Ref: a.Ref}
		if err := f.act(a); err != nil {
			res.Error = err.Error()
		}
		select {
		case results <- res:
		case <-stopped:
			return
		}
	}
}

// act calls the engine for one action.
func (f *Feed) act(a feedAction) error {
	switch a.Action {
	case "interrupt":
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return f.eng.InterruptKernel(ctx, a.KernelID)
	case "cancel":
		return f.eng.CancelCall(a.ID)
	case "pause", "resume":
		f.eng.SetPaused(a.Action == "pause")
		return nil
	case "decide":
		return f.eng.Decide(a.ID, calls.Verdict{Allow: a.Allow})
	case "settle":
		if a.Verdict == nil {
			return fmt.Errorf("settle without a verdict")
		}
		return f.eng.Decide(a.ID, *a.Verdict)
	case "revoke":
		f.eng.RevokeAllowed()
		return nil
	case "undo":
		ctx, cancel := context.WithTimeout(context.Background(), undoTimeout)
		defer cancel()
		_, err := f.eng.Undo(ctx, a.ID)
		return err
	}
	return fmt.Errorf("unknown action %q", a.Action)
}

// RemoteSource is the events and actions of another process's engine,
// attached to through its feed.
type RemoteSource struct {
	conn   *websocket.Conn
	info   HeaderInfo
	events chan event.Event

	writeMu sync.Mutex
	mu      sync.Mutex
	ref     int64
	waiting map[int64]chan error
	done    chan struct{}
	once    sync.Once
}

// Dial attaches to the feed at addr: a ws:// or http:// URL, or
// unix:/path/to.sock for a feed served on a unix socket, presenting token.
// It waits for the server's hello, so Info is known when it returns.
func Dial(ctx context.Context, addr, token string) (*RemoteSource, error) {
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	target := addr
	switch {
	case strings.HasPrefix(addr, "unix:"):
		sock := strings.TrimPrefix(strings.TrimPrefix(addr, "unix:"), "//")
		d.NetDialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var nd net.Dialer
			return nd.DialContext(ctx, "unix", sock)
		}
		target = "ws://localhost/"
	case strings.HasPrefix(addr, "http://"), strings.HasPrefix(addr, "https://"):
		u, err := url.Parse(addr)
		if err != nil {
			return nil, err
		}
		u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
		target = u.String()
	}
	var hdr http.Header
	if token != "" {
		hdr = http.Header{"Authorization": {"Bearer " + token}}
	}
	conn, resp, err := d.DialContext(ctx, target, hdr)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnauthorized {
			err = errors.New("the feed refused the token")
		}
		return nil, fmt.Errorf("attach to %s: %w", addr, err)
	}
	var hello feedMessage
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := conn.ReadJSON(&hello); err != nil || hello.Type != "hello" || hello.Info == nil {
		conn.Close()
		if err == nil {
			err = fmt.Errorf("expected a hello, got %q", hello.Type)
		}
		return nil, fmt.Errorf("attach to %s: %w", addr, err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	r := &RemoteSource{
		conn:    conn,
		info:    *hello.Info,
		events:  make(chan event.Event, subscriptionBuffer),
		waiting: map[int64]chan error{},
		done:    make(chan struct{}),
	}
	r.info.Mode = "attached"
	if hello.Info.Mode != "" {
		r.info.Mode = "attached to " + hello.Info.Mode
	}
	go r.read()
	return r, nil
}

// read delivers events and routes action results until the connection
// ends; then it closes the event stream and fails waiting actions.
func (r *RemoteSource) read() {
	defer func() {
		close(r.events)
		r.mu.Lock()
		for ref, ch := range r.waiting {
			ch <- errors.New("feed closed")
			delete(r.waiting, ref)
		}
		r.mu.Unlock()
	}()
	for {
		var msg feedMessage
		if err := r.conn.ReadJSON(&msg); err != nil {
			return
		}
		switch msg.Type {
		case "event":
			if msg.Event == nil {
				continue
			}
			select {
			case r.events <- *msg.Event:
			case <-r.done:
				return
			}
		case "result":
			r.mu.Lock()
			ch := r.waiting[msg.Ref]
			delete(r.waiting, msg.Ref)
			r.mu.Unlock()
			if ch != nil {
				if msg.Error != "" {
					ch <- errors.New(msg.Error)
				} else {
					ch <- nil
				}
			}
		}
	}
}

func (r *RemoteSource) Subscribe() (<-chan event.Event, func()) {
	return r.events, func() {
		r.once.Do(func() {
			close(r.done)
			r.writeMu.Lock()
			_ = r.conn.WriteControl(websocket.CloseMessage,
				websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
			r.writeMu.Unlock()
			r.conn.Close()
		})
	}
}

func (r *RemoteSource) Info() HeaderInfo { return r.info }

// do sends an action and waits for its result.
func (r *RemoteSource) do(ctx context.Context, a feedAction) error {
	ch := make(chan error, 1)
	r.mu.Lock()
	r.ref++
	a.Ref = r.ref
	r.waiting[a.Ref] = ch
	r.mu.Unlock()
	r.writeMu.Lock()
	err := r.conn.WriteJSON(a)
	r.writeMu.Unlock()
	if err != nil {
		r.mu.Lock()
		delete(r.waiting, a.Ref)
		r.mu.Unlock()
		return err
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *RemoteSource) InterruptKernel(ctx context.Context, kernelID string) error {
	return r.do(ctx, feedAction{Action: "interrupt", KernelID: kernelID})
}

func (r *RemoteSource) CancelCall(id string) error {
	return r.doTimeout(feedAction{Action: "cancel", ID: id})
}

func (r *RemoteSource) SetPaused(paused bool) error {
	a := feedAction{Action: "resume"}
	if paused {
		a.Action = "pause"
	}
	return r.doTimeout(a)
}

// Decide sends a plain allow or deny as "decide", anything more as
// "settle" with the verdict.
func (r *RemoteSource) Decide(id string, v calls.Verdict) error {
	if v.Plain() {
		return r.doTimeout(feedAction{Action: "decide", ID: id, Allow: v.Allow})
	}
	return r.doTimeout(feedAction{Action: "settle", ID: id, Verdict: &v})
}

func (r *RemoteSource) CanResend() error { return ErrResendAttached }

func (r *RemoteSource) Resend(calls.Resend) error { return ErrResendAttached }

func (r *RemoteSource) RevokeAllowed() error {
	return r.doTimeout(feedAction{Action: "revoke"})
}

// undoTimeout bounds an undo: it saves the notebook, under its save lock.
const undoTimeout = time.Minute

func (r *RemoteSource) Undo(callID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), undoTimeout)
	defer cancel()
	return r.do(ctx, feedAction{Action: "undo", ID: callID})
}

func (r *RemoteSource) doTimeout(a feedAction) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.do(ctx, a)
}
