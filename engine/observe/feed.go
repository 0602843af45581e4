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
// Server to workbench: first {"type":"hello","info":{...},"access":"watch",
// "pairing":"..."} (pairing says why this feed cannot pair, "" when it
// can). The workbench then may ask to be paired, {"action":"pair"}: the
// server answers {"type":"pairing","code":"K7Q4-HZ2M"}, to be shown in
// the attaching terminal, asks the person at the MCP host to type that code
// (Options.Pair), and answers {"type":"paired"} or {"type":"unpaired",
// "error":"why"}. Then {"action":"start"}: the state as events
// ({"type":"event","event":{...}}) that rebuild it, then every engine event
// as it happens, and {"type":"result","ref":N,"error":"..."} answering an
// action.
//
// Workbench to server, once started: {"action":"interrupt","kernelID":...},
// {"action":"cancel","id":...}, {"action":"pause"}, {"action":"resume"},
// {"action":"decide","id":...,"allow":true},
// {"action":"settle","id":...,"verdict":{...}}, {"action":"revoke"},
// {"action":"undo","id":...}, each with a "ref" that its result carries back.
// Only a paired workbench may send them; a watching one is answered with
// errWatchOnly.
//
// Why pairing: the feed is reachable by anything that runs as our own OS
// user, kernels included (a private socket keeps other users out, not our
// own code), and so is any token we could write down for it. What kernel
// code cannot do is see the attaching terminal and answer the host's
// question: the code travels from us to the attaching process only, and
// the answer comes back through the person at the MCP host.

// feedMessage is a message from the feed server.
type feedMessage struct {
	Type    string       `json:"type"` // hello, event, result, pairing, paired, unpaired
	Info    *HeaderInfo  `json:"info,omitempty"`
	Event   *event.Event `json:"event,omitempty"`
	Ref     int64        `json:"ref,omitempty"`
	Error   string       `json:"error,omitempty"`
	Access  string       `json:"access,omitempty"`  // hello: watch
	Pairing string       `json:"pairing,omitempty"` // hello: why pairing is not possible
	Code    string       `json:"code,omitempty"`    // pairing: the code to show
}

// feedAction is a human action sent by an attached workbench.
type feedAction struct {
	Action   string `json:"action"` // pair, start, interrupt, cancel, pause, resume, decide, settle, revoke, undo
	ID       string `json:"id,omitempty"`
	Allow    bool   `json:"allow,omitempty"`
	KernelID string `json:"kernelID,omitempty"`
	Ref      int64  `json:"ref,omitempty"`

	Verdict *calls.Verdict `json:"verdict,omitempty"` // settle
}

// feedEngine is what the feed server needs of the engine; engineActions
// has it.
type feedEngine interface {
	InterruptKernel(ctx context.Context, kernelID string) error
	CancelCall(id string) error
	SetPaused(paused bool)
	Decide(id string, v calls.Verdict) error
	RevokeAllowed()
	Undo(ctx context.Context, callID string) (undo.Result, error)
	AttachWorkbench() (detach func())
	AttachWatcher() (detach func())
}

// errWatchOnly answers the actions of a workbench that was not paired.
var errWatchOnly = errors.New("this workbench only watches: it was not paired, so it cannot decide held calls or act for the person (run jupyter-mcp-server attach again and type the code it shows into your MCP host's question)")

// feedClientBuffer bounds what is queued for one attached workbench; past
// it events are dropped and counted, like on the bus, so a stalled client
// slows nothing.
const feedClientBuffer = 4096

// FeedOptions configure a feed.
type FeedOptions struct {
	// Token, when set, must be presented by a workbench (Authorization:
	// Bearer, or ?token=): for a feed on loopback TCP, which other users
	// of the machine can reach. A feed on a unix socket in a private
	// directory needs none. Either way the token keeps out other users,
	// not our own code: acting needs pairing.
	Token string
	// Pair asks the person at the MCP host to type the code shown by the
	// workbenches in peers (their descriptions) and returns what they
	// typed; an error when they declined or could not be asked. Nil: no
	// workbench can be paired, every one only watches.
	Pair func(ctx context.Context, peers []string) (typed string, err error)
	// CanPair says why Pair cannot be asked now ("" when it can): the
	// host declared no elicitation, say.
	CanPair func() string
	// PairTimeout bounds the host's answer (default 2 minutes).
	PairTimeout time.Duration
}

// Feed serves the engine's live feed to workbenches attached from other
// processes (`jupyter-mcp-server attach`). It keeps a bounded copy of the
// state so a workbench attaching late starts with what happened before.
type Feed struct {
	eng      feedEngine
	info     HeaderInfo
	opts     FeedOptions
	upgrader websocket.Upgrader
	stop     func()

	mu      sync.Mutex
	st      *State
	clients map[*feedClient]struct{}
	closed  bool
	seq     int // workbenches that attached, for their names

	pairing pairings
}

// feedClient is one attached workbench's outgoing queue.
type feedClient struct {
	out    chan event.Event
	missed uint64 // events dropped since the last delivered one (under Feed.mu)
	gone   chan struct{}
}

// ServeFeed returns the feed of e as an http.Handler (a websocket
// endpoint; it does not look at the request path, so mount it where you
// like). The header info is sent to every workbench that attaches, without
// the MCP token.
func ServeFeed(e Engine, info HeaderInfo, opts FeedOptions) *Feed {
	sub := e.Bus().SubscribeBatched(subscriptionBuffer, observerBatchWindow)
	return newFeed(sub.C(), sub.Close, engineActions{e}, info, opts)
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
func (a engineActions) AttachWatcher() (detach func())          { return a.e.Calls().AttachWatcher() }
func (a engineActions) Undo(ctx context.Context, callID string) (undo.Result, error) {
	return a.e.Undo(ctx, callID)
}

func newFeed(events <-chan event.Event, stop func(), eng feedEngine, info HeaderInfo, opts FeedOptions) *Feed {
	if opts.PairTimeout <= 0 {
		opts.PairTimeout = 2 * time.Minute
	}
	// The token a workbench could copy is never sent: it would let
	// whatever attaches (kernel code included) call the MCP endpoint.
	info.Token = ""
	f := &Feed{
		eng:     eng,
		info:    info,
		opts:    opts,
		stop:    stop,
		st:      NewState(nil),
		clients: map[*feedClient]struct{}{},
	}
	f.pairing.feed = f
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

// Serve serves the feed on ln until Shutdown; the peer of each connection
// (its process, where the platform tells) names the workbench.
func (f *Feed) Serve(ln net.Listener) *http.Server {
	srv := &http.Server{
		Handler:           f,
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, peerKey{}, c)
		},
	}
	go srv.Serve(ln)
	return srv
}

type peerKey struct{}

// ServeHTTP upgrades to a websocket and serves one workbench: it may pair
// it first, then streams the state and takes its actions.
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
	f.seq++
	n := f.seq
	f.mu.Unlock()
	label := workbenchLabel(n, time.Now(), peerOf(r.Context().Value(peerKey{})))

	info := f.info
	if err := conn.WriteJSON(feedMessage{Type: "hello", Info: &info, Access: "watch", Pairing: f.canPair()}); err != nil {
		return
	}
	paired, ok := f.prelude(conn, label)
	if !ok {
		return
	}
	f.stream(conn, label, paired)
}

// workbenchLabel names an attached workbench in the header and on the
// calls it decides: "workbench 2, attached 14:02:11 (pid 4242:
// jupyter-mcp-server attach)".
func workbenchLabel(n int, at time.Time, peer string) string {
	l := fmt.Sprintf("workbench %d, attached %s", n, at.Format("15:04:05"))
	if peer != "" {
		l += " (" + peer + ")"
	}
	return l
}

// canPair says why this feed cannot pair a workbench now, "" when it can.
func (f *Feed) canPair() string {
	switch {
	case f.opts.Pair == nil:
		return "this server has no MCP host to confirm a pairing with"
	case f.opts.CanPair != nil:
		return f.opts.CanPair()
	}
	return ""
}

// prelude handles what a workbench sends before its stream starts: a
// pairing, then start. It reports whether the workbench was paired, and
// false for ok when the connection ended.
func (f *Feed) prelude(conn *websocket.Conn, label string) (paired, ok bool) {
	for {
		var a feedAction
		if err := conn.ReadJSON(&a); err != nil {
			return false, false
		}
		switch a.Action {
		case "start":
			return paired, true
		case "pair":
			if paired {
				if conn.WriteJSON(feedMessage{Type: "paired"}) != nil {
					return false, false
				}
				continue
			}
			if why := f.canPair(); why != "" {
				if conn.WriteJSON(feedMessage{Type: "unpaired", Error: why}) != nil {
					return false, false
				}
				continue
			}
			code := newPairingCode()
			if conn.WriteJSON(feedMessage{Type: "pairing", Code: code}) != nil {
				return false, false
			}
			err := f.pairing.ask(label, code)
			msg := feedMessage{Type: "paired"}
			if err != nil {
				msg = feedMessage{Type: "unpaired", Error: err.Error()}
			} else {
				paired = true
			}
			if conn.WriteJSON(msg) != nil {
				return false, false
			}
		default:
			if conn.WriteJSON(feedMessage{Type: "result", Ref: a.Ref, Error: "the feed has not started: send start first"}) != nil {
				return false, false
			}
		}
	}
}

// stream sends the snapshot and then the live events to a workbench and
// runs its actions, until either side ends.
func (f *Feed) stream(conn *websocket.Conn, label string, paired bool) {
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

	// Only a paired workbench counts for approval: a watching one must
	// not keep held calls from the person at the host.
	var detach func()
	if paired {
		detach = f.eng.AttachWorkbench()
	} else {
		detach = f.eng.AttachWatcher()
	}
	defer detach()

	// One writer: gorilla connections take one concurrent writer.
	results := make(chan feedMessage, 16)
	stopped := make(chan struct{})
	defer close(stopped)
	go f.readActions(conn, label, paired, results, c.gone, stopped)

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
	if f.opts.Token == "" {
		return true
	}
	return secret.Authorized(r, f.opts.Token, "token")
}

// readActions runs the actions a workbench sends, answering each.
func (f *Feed) readActions(conn *websocket.Conn, label string, paired bool, results chan<- feedMessage, gone chan<- struct{}, stopped <-chan struct{}) {
	defer close(gone)
	for {
		var a feedAction
		if err := conn.ReadJSON(&a); err != nil {
			return
		}
		res := feedMessage{Type: "result", Ref: a.Ref}
		err := errWatchOnly
		if paired {
			err = f.act(a, label)
		}
		if err != nil {
			res.Error = err.Error()
		}
		select {
		case results <- res:
		case <-stopped:
			return
		}
	}
}

// act calls the engine for one action of a paired workbench.
func (f *Feed) act(a feedAction, label string) error {
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
		return f.eng.Decide(a.ID, calls.Verdict{Allow: a.Allow, By: label})
	case "settle":
		if a.Verdict == nil {
			return fmt.Errorf("settle without a verdict")
		}
		v := *a.Verdict
		v.By = label
		return f.eng.Decide(a.ID, v)
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
	// pairing is why the feed cannot pair this workbench ("" when it
	// can); paired says it was.
	pairing  string
	paired   bool
	started  bool
	server   string // the server's mode (stdio)
	unpaired string // why it was not paired, when that was tried

	writeMu sync.Mutex
	mu      sync.Mutex
	ended   bool // the stream is over (under mu)
	ref     int64
	waiting map[int64]chan error
	done    chan struct{}
	once    sync.Once
}

// Dial attaches to the feed at addr: a ws:// or http:// URL, or
// unix:/path/to.sock for a feed served on a unix socket, presenting token.
// It waits for the server's hello, so Info is known when it returns. The
// workbench watches only, unless Pair pairs it before Subscribe starts
// the stream.
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
		pairing: hello.Pairing,
	}
	r.server = hello.Info.Mode
	r.setMode()
	return r, nil
}

// setMode is the header's mode: what this workbench is attached to and
// whether it may act.
func (r *RemoteSource) setMode() {
	r.info.Mode = "attached"
	if r.server != "" {
		r.info.Mode = "attached to " + r.server
	}
	switch {
	case r.paired:
		r.info.Mode += ", paired"
	case r.unpaired != "":
		r.info.Mode += ", watching only (" + r.unpaired + ")"
	default:
		r.info.Mode += ", watching only"
	}
}

// WatchOnly notes why this workbench only watches, for the header.
func (r *RemoteSource) WatchOnly(why string) {
	r.unpaired = why
	r.setMode()
}

// CanPair says why this workbench cannot be paired ("" when it can).
func (r *RemoteSource) CanPair() string { return r.pairing }

// Pair asks the feed to pair this workbench, before Subscribe: show gets
// the code to show in this terminal as soon as the feed sends it, and Pair
// returns once the person at the MCP host typed it (nil) or did not.
func (r *RemoteSource) Pair(ctx context.Context, show func(code string)) error {
	r.mu.Lock()
	started := r.started
	r.mu.Unlock()
	if started {
		return errors.New("a workbench is paired before its stream starts")
	}
	stop := context.AfterFunc(ctx, func() { r.conn.Close() })
	defer stop()
	if err := r.conn.WriteJSON(feedAction{Action: "pair"}); err != nil {
		return err
	}
	for {
		var msg feedMessage
		if err := r.conn.ReadJSON(&msg); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("the feed closed while pairing: %w", err)
		}
		switch msg.Type {
		case "pairing":
			show(msg.Code)
		case "paired":
			r.paired = true
			r.setMode()
			return nil
		case "unpaired":
			return errors.New(msg.Error)
		}
	}
}

// Paired says whether this workbench may act for the person.
func (r *RemoteSource) Paired() bool { return r.paired }

// start asks the feed for the stream and follows it.
func (r *RemoteSource) start() {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return
	}
	r.started = true
	r.mu.Unlock()
	r.writeMu.Lock()
	err := r.conn.WriteJSON(feedAction{Action: "start"})
	r.writeMu.Unlock()
	if err != nil {
		close(r.events)
		return
	}
	go r.read()
}

// read delivers events and routes action results until the connection
// ends; then it closes the event stream and fails waiting actions.
func (r *RemoteSource) read() {
	defer func() {
		close(r.events)
		r.mu.Lock()
		r.ended = true
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

// Subscribe starts the stream (a workbench that was not paired watches
// only) and returns it.
func (r *RemoteSource) Subscribe() (<-chan event.Event, func()) {
	r.start()
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
	if r.ended || !r.started {
		r.mu.Unlock()
		return errors.New("feed closed")
	}
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
