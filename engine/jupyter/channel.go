package jupyter

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Header is a Jupyter message header.
type Header struct {
	MsgID    string `json:"msg_id"`
	MsgType  string `json:"msg_type"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	Version  string `json:"version"`
}

// Message is one Jupyter message as it crossed the websocket.
type Message struct {
	Channel      string          `json:"channel"` // shell, iopub, stdin, control
	Header       Header          `json:"header"`
	ParentHeader Header          `json:"parent_header"`
	Metadata     json.RawMessage `json:"metadata"`
	Content      json.RawMessage `json:"content"`
	Buffers      [][]byte        `json:"-"`
}

// ErrKernelDied is returned by a Run whose kernel died or restarted while it
// ran: its state is gone.
var ErrKernelDied = errors.New("the kernel died while executing")

// ErrDisconnected is returned by a Run whose websocket dropped and could not
// be re-established while it ran.
var ErrDisconnected = errors.New("lost the connection to the kernel")

// ProtocolV1 is the binary kernel websocket subprotocol of jupyter-server 2.x
// and 1.17+.
const ProtocolV1 = "v1.kernel.websocket.jupyter.org"

// protocolVersion is the Jupyter messaging protocol version we speak.
const protocolVersion = "5.3"

// reconnectWindow bounds how long the reader tries to re-establish a
// dropped socket before it gives up and leaves the channel disconnected.
const reconnectWindow = 10 * time.Second

// naiveSockets turns the TCP_QUICKACK tuning off (the Nagle benchmark
// measures what it buys).
var naiveSockets bool

// writeTimeout bounds one websocket write; a server that does not drain its
// socket for this long is treated as gone.
const writeTimeout = 15 * time.Second

// KernelConn is one websocket to one kernel, shared by every caller: a reader
// goroutine routes each message to the Run whose execute_request it answers
// (by parent msg_id). It prefers the v1.kernel.websocket.jupyter.org
// subprotocol and falls back to legacy JSON, and reconnects when the socket
// drops.
type KernelConn struct {
	client    *Client
	kernelID  string
	sessionID string

	wmu sync.Mutex // serializes writes on conn (gorilla allows one writer)

	mu       sync.Mutex
	conn     *websocket.Conn // nil while disconnected
	proto    string
	state    string
	runs     map[string]*Run
	onState  []func(string)
	closed   bool
	readerWG sync.WaitGroup
	// reconnecting is set while the reader redials; Execute then fails
	// fast instead of dialing a second socket that would race it.
	reconnecting bool

	// ctx is cancelled by Close; it bounds reconnect attempts and frees
	// run pumps nobody reads from.
	ctx    context.Context
	cancel context.CancelFunc
}

// ConnectKernel opens the channel to kernel id.
func (c *Client) ConnectKernel(ctx context.Context, kernelID string) (*KernelConn, error) {
	// Asking the REST API first turns an unknown kernel into a clear 404
	// instead of an opaque websocket handshake failure, and gives the
	// initial execution state.
	kern, err := c.GetKernel(ctx, kernelID)
	if err != nil {
		return nil, err
	}
	k := &KernelConn{
		client:    c,
		kernelID:  kernelID,
		sessionID: newID(),
		state:     kern.ExecutionState,
		runs:      make(map[string]*Run),
	}
	conn, err := k.dial(ctx)
	if err != nil {
		return nil, err
	}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	k.mu.Lock()
	k.conn = conn
	k.proto = conn.Subprotocol()
	k.mu.Unlock()
	k.readerWG.Add(1)
	go k.readLoop(conn)
	k.nudge(conn)
	return k, nil
}

// nudge sends a kernel_info_request whose busy/idle statuses bring State up
// to date: the REST execution_state of a fresh kernel says "starting" long
// after it is idle, and no status arrives until something runs.
func (k *KernelConn) nudge(conn *websocket.Conn) {
	_ = k.send(conn, "shell", k.newHeader("kernel_info_request"), Header{}, []byte("{}"))
}

// dial opens one websocket to the kernel's channels endpoint.
func (k *KernelConn) dial(ctx context.Context) (*websocket.Conn, error) {
	c := k.client
	u := c.resolve("api/kernels/"+url.PathEscape(k.kernelID)+"/channels", url.Values{"session_id": {k.sessionID}})
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	nd := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: tuneSocket}
	naive := naiveSockets
	if naive {
		nd.Control = nil
	}
	d := &websocket.Dialer{
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := nd.DialContext(ctx, network, addr)
			if err != nil || naive {
				return conn, err
			}
			return wrapQuickAck(conn), nil
		},
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: 30 * time.Second,
		ReadBufferSize:   64 << 10,
		WriteBufferSize:  64 << 10,
	}
	if !c.forceLegacy {
		d.Subprotocols = []string{ProtocolV1}
	}
	h := http.Header{}
	if c.token != "" {
		h.Set("Authorization", "token "+c.token)
	}
	conn, resp, err := d.DialContext(ctx, u.String(), h)
	if err != nil {
		apiPath := "api/kernels/" + k.kernelID + "/channels"
		if resp != nil {
			msg := ""
			if resp.Body != nil {
				var buf bytes.Buffer
				_, _ = buf.ReadFrom(io.LimitReader(resp.Body, 64<<10))
				msg = errorMessage(buf.Bytes())
				resp.Body.Close()
			}
			return nil, &APIError{Server: c.BaseURL(), Method: http.MethodGet, Path: apiPath, Status: resp.StatusCode, Message: msg}
		}
		return nil, c.transportError(http.MethodGet, apiPath, err)
	}
	return conn, nil
}

// KernelID is the kernel this channel talks to.
func (k *KernelConn) KernelID() string { return k.kernelID }

// Protocol is the websocket subprotocol in use ("v1.kernel.websocket.jupyter.org" or "" for legacy JSON).
func (k *KernelConn) Protocol() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.proto
}

// State is the kernel's last known execution state: starting, idle, busy,
// restarting, dead, or disconnected.
func (k *KernelConn) State() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.state
}

// OnState registers f to be called (from the reader goroutine; it must not
// block) with every execution_state the kernel reports and with
// "disconnected"/"connected" as the socket drops and comes back.
func (k *KernelConn) OnState(f func(state string)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.onState = append(k.onState, f)
}

// setState records state and tells the listeners.
func (k *KernelConn) setState(state string) {
	k.mu.Lock()
	k.state = state
	k.mu.Unlock()
	k.notify(state)
}

// notify tells the listeners, outside the lock so that a listener may call
// State. "connected" goes only to listeners: it is not an execution state,
// and the kernel_info nudge that follows it brings the real one.
func (k *KernelConn) notify(state string) {
	k.mu.Lock()
	fs := slices.Clone(k.onState)
	k.mu.Unlock()
	for _, f := range fs {
		f(state)
	}
}

// ExecuteRequest is the content of an execute_request.
type ExecuteRequest struct {
	Code         string `json:"code"`
	Silent       bool   `json:"silent"`
	StoreHistory bool   `json:"store_history"`
	AllowStdin   bool   `json:"allow_stdin"`
	StopOnError  bool   `json:"stop_on_error"`
}

// Execute sends an execute_request and returns its Run at once. The run's
// messages arrive on Run.Messages until both the execute_reply and the iopub
// idle status for it have arrived (in either order), or the kernel dies.
func (k *KernelConn) Execute(ctx context.Context, req ExecuteRequest) (*Run, error) {
	return k.ExecuteFunc(ctx, req, RunHandler{})
}

// RunHandler receives a run's messages as they arrive instead of
// Run.Messages, which saves a goroutine and two thread wake-ups per message
// between the socket and whoever consumes them.
type RunHandler struct {
	// Message is called with each message Run.Messages would deliver, in
	// order, on the channel's reader goroutine: it must be quick and must
	// not block, since every run on the kernel waits behind it, and it must
	// not call KernelConn.Close.
	Message func(Message)
	// End is called once when the run is finished, after the last call of
	// Message, with the execute_reply or the reason the run failed (as Wait
	// returns them), before Done is closed. It runs on the reader goroutine
	// or on the goroutine that closed the channel, under the same rules as
	// Message.
	End func(*ExecuteReply, error)
}

// ExecuteFunc is Execute with h receiving the run's messages and its end.
// With h.Message set, Run.Messages delivers nothing and is closed when the
// run is done.
func (k *KernelConn) ExecuteFunc(ctx context.Context, req ExecuteRequest, h RunHandler) (*Run, error) {
	content, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	hdr := k.newHeader("execute_request")
	r := newRun(k, hdr.MsgID)
	r.h = h

	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, ErrDisconnected
	}
	conn := k.conn
	if conn == nil && k.reconnecting {
		k.mu.Unlock()
		// Say why the socket is down when the REST API can tell: the
		// server unreachable (naming it) or the kernel gone (a 404 the
		// caller can turn into "restart it"); only a kernel that exists
		// on a server that answers is worth retrying shortly.
		if _, err := k.client.GetKernel(ctx, k.kernelID); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrDisconnected, err)
		}
		return nil, fmt.Errorf("%w: reconnecting to kernel %s, try again shortly", ErrDisconnected, k.kernelID)
	}
	// The run is registered before the request leaves so that a reply
	// racing the write still finds it.
	k.runs[hdr.MsgID] = r
	k.mu.Unlock()

	if conn == nil {
		// The reader gave up reconnecting earlier; try once more now that
		// someone needs the kernel.
		if conn, err = k.reconnectNow(ctx); err != nil {
			k.forget(hdr.MsgID)
			return nil, fmt.Errorf("%w: %w", ErrDisconnected, err)
		}
	}
	if err := k.send(conn, "shell", hdr, Header{}, content); err != nil {
		k.forget(hdr.MsgID)
		return nil, fmt.Errorf("%w: sending execute_request: %v", ErrDisconnected, err)
	}
	return r, nil
}

// SendInputReply answers an input_request on the stdin channel.
func (k *KernelConn) SendInputReply(parent Header, value string) error {
	content, err := json.Marshal(map[string]string{"value": value, "status": "ok"})
	if err != nil {
		return err
	}
	k.mu.Lock()
	conn := k.conn
	k.mu.Unlock()
	if conn == nil {
		return ErrDisconnected
	}
	return k.send(conn, "stdin", k.newHeader("input_reply"), parent, content)
}

// Close closes the websocket and fails every pending run with
// ErrDisconnected.
func (k *KernelConn) Close() error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	conn := k.conn
	k.conn = nil
	k.mu.Unlock()
	k.cancel()
	var err error
	if conn != nil {
		k.wmu.Lock()
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		k.wmu.Unlock()
		err = conn.Close()
	}
	k.failAll(ErrDisconnected)
	k.readerWG.Wait()
	return err
}

func (k *KernelConn) forget(msgID string) {
	k.mu.Lock()
	delete(k.runs, msgID)
	k.mu.Unlock()
}

// failAll ends every pending run with err.
func (k *KernelConn) failAll(err error) {
	k.mu.Lock()
	runs := k.runs
	k.runs = make(map[string]*Run)
	k.mu.Unlock()
	for _, r := range runs {
		r.finish(err)
	}
}

func (k *KernelConn) newHeader(msgType string) Header {
	return Header{
		MsgID:    newID(),
		MsgType:  msgType,
		Session:  k.sessionID,
		Username: "jupyter-mcp-server",
		Date:     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		Version:  protocolVersion,
	}
}

// send writes one message in the connection's protocol.
func (k *KernelConn) send(conn *websocket.Conn, channel string, h, parent Header, content []byte) error {
	hb, err := json.Marshal(h)
	if err != nil {
		return err
	}
	pb := []byte("{}")
	if parent.MsgID != "" {
		if pb, err = json.Marshal(parent); err != nil {
			return err
		}
	}
	var frame []byte
	mtype := websocket.TextMessage
	if conn.Subprotocol() == ProtocolV1 {
		frame = encodeV1(channel, [][]byte{hb, pb, []byte("{}"), content})
		mtype = websocket.BinaryMessage
	} else {
		frame, err = json.Marshal(struct {
			Channel      string          `json:"channel"`
			Header       json.RawMessage `json:"header"`
			ParentHeader json.RawMessage `json:"parent_header"`
			Metadata     json.RawMessage `json:"metadata"`
			Content      json.RawMessage `json:"content"`
			Buffers      []string        `json:"buffers"`
		}{channel, hb, pb, json.RawMessage("{}"), content, []string{}})
		if err != nil {
			return err
		}
	}
	k.wmu.Lock()
	defer k.wmu.Unlock()
	_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	return conn.WriteMessage(mtype, frame)
}

// readLoop is the one reader of conn. When conn fails it fails the pending
// runs and tries to reconnect; it returns when the channel is closed or
// reconnecting gave up.
func (k *KernelConn) readLoop(conn *websocket.Conn) {
	defer k.readerWG.Done()
	for {
		mtype, data, err := conn.ReadMessage()
		if err != nil {
			conn.Close()
			next := k.lost(conn)
			if next == nil {
				return
			}
			conn = next
			continue
		}
		var msg Message
		var derr error
		if conn.Subprotocol() == ProtocolV1 {
			msg, derr = decodeV1(data)
		} else {
			msg, derr = decodeLegacy(mtype, data)
		}
		if derr != nil {
			// A frame we cannot parse cannot be routed either; dropping
			// it beats killing the channel.
			continue
		}
		k.dispatch(msg)
	}
}

// lost handles a dead socket: it fails pending runs with ErrDisconnected
// and tries to reconnect for reconnectWindow. It returns the new connection
// or nil when the channel is closed or the kernel is unreachable.
func (k *KernelConn) lost(old *websocket.Conn) *websocket.Conn {
	k.mu.Lock()
	if k.closed || k.conn != old {
		k.mu.Unlock()
		return nil
	}
	k.conn = nil
	k.reconnecting = true
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.reconnecting = false
		k.mu.Unlock()
	}()
	k.failAll(ErrDisconnected)
	k.setState("disconnected")

	deadline := time.Now().Add(reconnectWindow)
	backoff := 100 * time.Millisecond
	for time.Now().Before(deadline) {
		k.mu.Lock()
		closed := k.closed
		k.mu.Unlock()
		if closed {
			return nil
		}
		ctx, cancel := context.WithDeadline(k.ctx, deadline)
		conn, err := k.dial(ctx)
		cancel()
		if err == nil {
			if k.adopt(conn) {
				return conn
			}
			return nil
		}
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			// The kernel is gone (shut down or culled): retrying cannot
			// bring it back.
			k.setState("dead")
			return nil
		}
		select {
		case <-time.After(backoff):
		case <-k.ctx.Done():
			return nil
		}
		if backoff < time.Second {
			backoff *= 2
		}
	}
	return nil
}

// adopt installs a freshly dialed conn unless the channel was closed
// meanwhile.
func (k *KernelConn) adopt(conn *websocket.Conn) bool {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		conn.Close()
		return false
	}
	k.conn = conn
	k.proto = conn.Subprotocol()
	k.mu.Unlock()
	k.notify("connected")
	k.nudge(conn)
	return true
}

// reconnectNow dials synchronously for a caller after the reader gave up,
// and starts a new reader on success.
func (k *KernelConn) reconnectNow(ctx context.Context) (*websocket.Conn, error) {
	conn, err := k.dial(ctx)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		conn.Close()
		return nil, ErrDisconnected
	}
	if k.conn != nil {
		// Someone else reconnected first; use theirs.
		cur := k.conn
		k.mu.Unlock()
		conn.Close()
		return cur, nil
	}
	k.conn = conn
	k.proto = conn.Subprotocol()
	k.readerWG.Add(1)
	k.mu.Unlock()
	go k.readLoop(conn)
	k.notify("connected")
	k.nudge(conn)
	return conn, nil
}

// dispatch routes one message: status updates the kernel state and may end
// a run; execute_reply ends the shell half of a run; everything else with a
// known parent goes to that run's queue.
func (k *KernelConn) dispatch(msg Message) {
	parent := msg.ParentHeader.MsgID
	k.mu.Lock()
	r := k.runs[parent]
	k.mu.Unlock()

	switch {
	case msg.Channel == "iopub" && msg.Header.MsgType == "status":
		var st struct {
			ExecutionState string `json:"execution_state"`
		}
		if json.Unmarshal(msg.Content, &st) != nil || st.ExecutionState == "" {
			return
		}
		k.setState(st.ExecutionState)
		switch st.ExecutionState {
		case "restarting", "dead":
			// The server saw the kernel process die (and restarts it):
			// no reply will ever come for what was running or queued.
			k.failAll(ErrKernelDied)
		case "idle":
			if r != nil {
				r.markIdle()
			}
		}
	case msg.Channel == "shell" && msg.Header.MsgType == "execute_reply":
		if r == nil {
			return
		}
		var rep ExecuteReply
		if err := json.Unmarshal(msg.Content, &rep); err != nil {
			rep.Status = "error"
			rep.EValue = "undecodable execute_reply: " + err.Error()
		}
		r.markReply(&rep)
	case msg.Channel == "iopub" || (msg.Channel == "stdin" && msg.Header.MsgType == "input_request"):
		if r != nil {
			r.push(msg)
		}
	}
}

// Run is one execute_request in flight.
type Run struct {
	k     *KernelConn
	msgID string

	mu       sync.Mutex
	queue    []Message
	wake     chan struct{} // cap 1: tells the pump the queue changed
	finished bool
	reply    *ExecuteReply
	gotIdle  bool
	err      error

	// h, when set, takes the messages instead of the queue. hmu is held
	// while it runs, so that End (from Close's goroutine) never overlaps a
	// Message (from the reader's) and always comes after the last one.
	h   RunHandler
	hmu sync.Mutex

	done     chan struct{}
	out      chan Message
	pumpOnce sync.Once
}

func newRun(k *KernelConn, msgID string) *Run {
	return &Run{
		k:     k,
		msgID: msgID,
		wake:  make(chan struct{}, 1),
		done:  make(chan struct{}),
		out:   make(chan Message),
	}
}

// MsgID is the execute_request's msg_id.
func (r *Run) MsgID() string { return r.msgID }

// Messages delivers, in order, every iopub message of this run except status
// messages (stream, display_data, update_display_data, execute_input,
// execute_result, error, clear_output) and stdin input_request messages. It
// never drops messages (the queue behind it is unbounded) and is closed when
// the run is done.
func (r *Run) Messages() <-chan Message {
	// The pump starts on first use so that a caller who only Waits leaves
	// no goroutine behind.
	r.pumpOnce.Do(func() { go r.pump() })
	return r.out
}

// Done is closed when the run is finished.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait waits for the run to finish and returns the execute_reply.
func (r *Run) Wait(ctx context.Context) (*ExecuteReply, error) {
	select {
	case <-r.done:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.reply, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Err is the reason the run failed (ErrKernelDied, ErrDisconnected), or nil
// when it finished normally or is still running.
func (r *Run) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Reply is the execute_reply once it arrived (possibly before the run is
// done), or nil.
func (r *Run) Reply() *ExecuteReply {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reply
}

func (r *Run) push(m Message) {
	if r.h.Message != nil {
		r.hmu.Lock()
		r.mu.Lock()
		finished := r.finished
		r.mu.Unlock()
		if !finished {
			r.h.Message(m)
		}
		r.hmu.Unlock()
		return
	}
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return
	}
	r.queue = append(r.queue, m)
	r.mu.Unlock()
	r.signal()
}

func (r *Run) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Run) markIdle() {
	r.mu.Lock()
	r.gotIdle = true
	complete := r.reply != nil
	r.mu.Unlock()
	if complete {
		r.k.forget(r.msgID)
		r.finish(nil)
	}
}

func (r *Run) markReply(rep *ExecuteReply) {
	r.mu.Lock()
	r.reply = rep
	complete := r.gotIdle
	r.mu.Unlock()
	if complete {
		r.k.forget(r.msgID)
		r.finish(nil)
	}
}

// finish ends the run once; later calls are ignored.
func (r *Run) finish(err error) {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return
	}
	r.finished = true
	r.err = err
	reply := r.reply
	r.mu.Unlock()
	if r.h.End != nil {
		r.hmu.Lock()
		r.h.End(reply, err)
		r.hmu.Unlock()
	}
	close(r.done)
	r.signal()
}

// pump moves queued messages to the out channel and closes it once the run
// is finished and the queue is drained. The reader never blocks on it.
func (r *Run) pump() {
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			fin := r.finished
			r.mu.Unlock()
			if fin {
				close(r.out)
				return
			}
			<-r.wake
			continue
		}
		m := r.queue[0]
		r.queue[0] = Message{}
		r.queue = r.queue[1:]
		r.mu.Unlock()
		select {
		case r.out <- m:
		case <-r.k.ctx.Done():
			// The channel is closed and nobody drained this run: stop
			// rather than leak the goroutine.
			close(r.out)
			return
		}
	}
}

// ExecuteReply is the content of an execute_reply.
type ExecuteReply struct {
	Status         string   `json:"status"` // ok, error, aborted
	ExecutionCount int      `json:"execution_count"`
	EName          string   `json:"ename"`
	EValue         string   `json:"evalue"`
	Traceback      []string `json:"traceback"`
}

// encodeV1 frames parts for the v1 kernel websocket protocol: a uint64
// little-endian count of offsets, the offsets (the channel name's start,
// each part's start, and the end of the last part), then the channel name
// and the parts.
func encodeV1(channel string, parts [][]byte) []byte {
	n := len(parts) + 2 // channel start, one start per part, final end
	headerLen := 8 * (1 + n)
	total := headerLen + len(channel)
	for _, p := range parts {
		total += len(p)
	}
	buf := make([]byte, headerLen, total)
	binary.LittleEndian.PutUint64(buf[0:], uint64(n))
	off := uint64(headerLen)
	binary.LittleEndian.PutUint64(buf[8:], off)
	off += uint64(len(channel))
	for i, p := range parts {
		binary.LittleEndian.PutUint64(buf[8*(i+2):], off)
		off += uint64(len(p))
	}
	binary.LittleEndian.PutUint64(buf[8*(n):], off)
	buf = append(buf, channel...)
	for _, p := range parts {
		buf = append(buf, p...)
	}
	return buf
}

// splitV1 undoes encodeV1: it returns the channel and the parts.
func splitV1(data []byte) (string, [][]byte, error) {
	if len(data) < 8 {
		return "", nil, errors.New("v1 frame shorter than its offset count")
	}
	n := binary.LittleEndian.Uint64(data)
	if n < 2 || n > uint64(len(data))/8-1 {
		return "", nil, fmt.Errorf("v1 frame with %d offsets in %d bytes", n, len(data))
	}
	// Real messages have 4 to 6 parts: the offsets stay on the stack.
	var small [10]uint64
	offs := small[:0]
	if n <= uint64(len(small)) {
		offs = small[:n]
	} else {
		offs = make([]uint64, n)
	}
	for i := range offs {
		offs[i] = binary.LittleEndian.Uint64(data[8*(i+1):])
		if offs[i] > uint64(len(data)) || (i > 0 && offs[i] < offs[i-1]) {
			return "", nil, errors.New("v1 frame with offsets out of order or range")
		}
	}
	channel := channelName(data[offs[0]:offs[1]])
	parts := make([][]byte, 0, n-2)
	for i := 1; i < int(n)-1; i++ {
		parts = append(parts, data[offs[i]:offs[i+1]])
	}
	return channel, parts, nil
}

// decodeV1 parses a v1 frame: parts are header, parent_header, metadata,
// content, then binary buffers.
func decodeV1(data []byte) (Message, error) {
	channel, parts, err := splitV1(data)
	if err != nil {
		return Message{}, err
	}
	if len(parts) < 4 {
		return Message{}, fmt.Errorf("v1 frame with %d parts, want at least 4", len(parts))
	}
	m := Message{Channel: channel, Metadata: parts[2], Content: parts[3]}
	if err := decodeHeader(parts[0], &m.Header); err != nil {
		return Message{}, fmt.Errorf("v1 header: %w", err)
	}
	if err := decodeHeader(parts[1], &m.ParentHeader); err != nil {
		return Message{}, fmt.Errorf("v1 parent_header: %w", err)
	}
	if len(parts) > 4 {
		m.Buffers = parts[4:]
	}
	return m, nil
}

// channelName returns the channel of a frame, without allocating for the
// four names the protocol has.
func channelName(b []byte) string {
	switch string(b) {
	case "iopub":
		return "iopub"
	case "shell":
		return "shell"
	case "stdin":
		return "stdin"
	case "control":
		return "control"
	}
	return string(b)
}

// decodeHeader parses a message header. Every message carries two, and
// encoding/json's reflection over them was a quarter of the reader's CPU,
// so the usual shape (a flat object of plain strings) is parsed by hand,
// into substrings of one string; anything else goes to encoding/json.
func decodeHeader(data []byte, h *Header) error {
	if fastHeader(data, h) {
		return nil
	}
	*h = Header{}
	return json.Unmarshal(data, h)
}

// fastHeader parses data into h when data is a flat JSON object whose
// values are strings without escapes or non-ASCII bytes, or null. It
// reports false, with h in any state, for anything else, including what
// encoding/json would treat differently (keys matching a field only
// case-insensitively, a non-string value for a field).
func fastHeader(data []byte, h *Header) bool {
	*h = Header{}
	if string(data) == "{}" {
		return true // the parent header of unsolicited messages
	}
	s := string(data) // one allocation; the fields are substrings of it
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return skipSpace(s, i+1) == len(s)
	}
	for {
		key, j, ok := plainString(s, i)
		if !ok {
			return false
		}
		i = skipSpace(s, j)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i = skipSpace(s, i+1)
		field := headerField(h, key)
		if field == nil && isHeaderKeyFold(key) {
			return false
		}
		switch {
		case strings.HasPrefix(s[i:], "null"):
			// encoding/json leaves a string field alone for null.
			i += 4
		case i < len(s) && s[i] == '"':
			val, j, ok := plainString(s, i)
			if !ok {
				return false
			}
			if field != nil {
				*field = val
			}
			i = j
		default:
			return false
		}
		i = skipSpace(s, i)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case '}':
			return skipSpace(s, i+1) == len(s)
		default:
			return false
		}
	}
}

// headerField returns the field of h that key names exactly, or nil.
func headerField(h *Header, key string) *string {
	switch key {
	case "msg_id":
		return &h.MsgID
	case "msg_type":
		return &h.MsgType
	case "session":
		return &h.Session
	case "username":
		return &h.Username
	case "date":
		return &h.Date
	case "version":
		return &h.Version
	}
	return nil
}

// isHeaderKeyFold reports whether key names a header field ignoring case,
// which encoding/json would honour.
func isHeaderKeyFold(key string) bool {
	for _, k := range [...]string{"msg_id", "msg_type", "session", "username", "date", "version"} {
		if strings.EqualFold(key, k) {
			return true
		}
	}
	return false
}

// plainString reads the JSON string starting at s[i] when it has no escapes
// and only printable ASCII, returning its contents and the index after it.
func plainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", 0, false
		}
	}
	return "", 0, false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// decodeLegacy parses a legacy frame: JSON text, or (when the message has
// binary buffers) a binary frame of a uint32 big-endian count, uint32
// big-endian offsets, the JSON message and the buffers.
func decodeLegacy(mtype int, data []byte) (Message, error) {
	var bufs [][]byte
	if mtype == websocket.BinaryMessage {
		if len(data) < 4 {
			return Message{}, errors.New("legacy binary frame too short")
		}
		n := binary.BigEndian.Uint32(data)
		if n == 0 || uint64(n) > uint64(len(data))/4-1 {
			return Message{}, errors.New("legacy binary frame with a bad count")
		}
		offs := make([]int, n+1)
		for i := 0; i < int(n); i++ {
			offs[i] = int(binary.BigEndian.Uint32(data[4*(i+1):]))
			if offs[i] > len(data) || (i > 0 && offs[i] < offs[i-1]) {
				return Message{}, errors.New("legacy binary frame with bad offsets")
			}
		}
		offs[n] = len(data)
		parts := make([][]byte, n)
		for i := range parts {
			parts[i] = data[offs[i]:offs[i+1]]
		}
		data, bufs = parts[0], parts[1:]
	}
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		return Message{}, err
	}
	m.Buffers = bufs
	return m, nil
}

// newID returns a random UUID-shaped id; the server uses session ids as
// ZeroMQ identities, so they must be unique.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
