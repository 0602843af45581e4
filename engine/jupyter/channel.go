package jupyter

// The kernel channel's life: dialing the websocket (preferring the v1
// subprotocol), the one reader goroutine, reconnecting when the socket
// drops, and closing. Runs are in run.go, the wire format in wire.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

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

	// Loss tracking (lost.go): why the kernel went away, a channel closed
	// when it does, the listeners, restarts the user has under way, and
	// the session ids of the kernel's process and of processes now gone.
	loss          *LostError
	lostCh        chan struct{}
	onLost        []func(*LostError)
	ownRestarts   int
	kernelSession string
	staleSessions []string

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
		lostCh:    make(chan struct{}),
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
	k.readerWG.Add(2)
	go k.readLoop(conn)
	go k.poll()
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
//
// Each websocket gets a session id of its own. jupyter_server keys a
// connection by kernel and session: a redial under the id of a socket it
// has not yet seen close makes it close that "stale" one first and wait for
// the close to finish, which after a dropped connection took it 5 to 60 s
// (its close handshake timing out), far past our reconnect window. What a
// reused id would buy, the server replaying messages buffered while we
// were away, is of no use here: the runs under way failed with the socket.
// Messages still carry k.sessionID in their headers.
func (k *KernelConn) dial(ctx context.Context) (*websocket.Conn, error) {
	c := k.client
	u := c.resolve("api/kernels/"+url.PathEscape(k.kernelID)+"/channels", url.Values{"session_id": {newID()}})
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

// Connected reports whether the channel's socket is open now: not closed,
// and not dropped (or redialling).
func (k *KernelConn) Connected() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return !k.closed && k.conn != nil
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

// send writes one message in the connection's protocol.
func (k *KernelConn) send(conn *websocket.Conn, channel string, h, parent Header, content []byte) error {
	mtype, frame, err := encodeFrame(conn.Subprotocol(), channel, h, parent, content)
	if err != nil {
		return err
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
		msg, derr := decodeFrame(conn.Subprotocol(), mtype, data)
		if derr != nil {
			// A frame we cannot parse cannot be routed either; dropping
			// it beats killing the channel.
			continue
		}
		k.dispatch(msg)
	}
}

// lost handles a dead socket: it fails pending runs with ErrDisconnected
// and tries to reconnect for reconnectWindow. It returns the new connection,
// or nil when the channel was closed, the kernel is gone, or reconnecting
// gave up.
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
	// A server closes the sockets of a kernel it shuts down: say so
	// rather than "disconnected" when the REST API can tell.
	if k.gone(2 * time.Second) {
		k.markLost(LossGone, false)
		return nil
	}
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
			k.markLost(LossGone, false)
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
