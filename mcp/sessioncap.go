package mcp

import (
	"bytes"
	"container/list"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxSessions is the cap on live streamable HTTP sessions when
// Options.MaxSessions is zero. A session costs about 19 KB; clients that
// never end theirs would otherwise grow memory until the idle timeout.
const DefaultMaxSessions = 256

// eventStoreBytes bounds what the event store keeps for resumption, over
// all sessions: the oldest events go first.
const eventStoreBytes = 10 << 20

// goneRemembered is how many closed session ids keep their reason, so
// that a client coming back after its session was evicted or expired is
// told why. Older ones get the SDK's bare "session not found".
const goneRemembered = 4096

// sessionIDHeader is the streamable HTTP transport's session header.
const sessionIDHeader = "Mcp-Session-Id"

// sessionCap sits in front of the SDK's streamable handler. It keeps the
// live sessions in least-recently-used order and, when opening one more
// would pass the cap, closes the least recently used session of the client
// that holds the most (clients named by their clientInfo): each client gets
// a share of the cap, so one opening session after session evicts its own
// rather than every other client's. It answers a request for a session
// it closed (or that expired idle) with a 404 whose JSON-RPC error says
// what happened and what to do. The SDK answers an unknown session with a
// bare "session not found"; the 404 itself is what the protocol asks
// (clients start a new session on it), so only the body is ours.
type sessionCap struct {
	next    http.Handler
	srv     *sdk.Server
	max     int
	timeout time.Duration

	mu     sync.Mutex
	lru    *list.List               // of string session ids, most recent first
	live   map[string]*list.Element // by session id
	client map[string]string        // the client of each live session
	// deleted are sessions their client ended (DELETE) while live: their
	// closing is no expiry.
	deleted map[string]bool
	gone    map[string]string // session id -> why it was closed
	order   []string          // gone ids, oldest first, for forgetting
}

func newSessionCap(next http.Handler, srv *sdk.Server, max int, timeout time.Duration) *sessionCap {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &sessionCap{
		next: next, srv: srv, max: max, timeout: timeout,
		lru: list.New(), live: map[string]*list.Element{}, client: map[string]string{},
		deleted: map[string]bool{}, gone: map[string]string{},
	}
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if v := r.Header.Get(protocolVersionHeader); v != "" && v < eraStateless && !slices.Contains(servedVersions, v) {
		// The SDK would list every version it knows, 2026-07-28 among
		// them, which this (session) endpoint does not serve.
		http.Error(w, fmt.Sprintf("Bad Request: Unsupported protocol version %q (supported versions: %s)", v, strings.Join(servedVersions, ",")), http.StatusBadRequest)
		return
	}
	id := r.Header.Get(sessionIDHeader)
	if id == "" && r.Method == http.MethodPost && r.Header.Get(protocolVersionHeader) < eraStateless {
		if !c.sessionless(w, r) {
			return
		}
	}
	if id == "" {
		rec := &sessionHeaderWriter{ResponseWriter: w}
		c.next.ServeHTTP(rec, r)
		if opened := rec.Header().Get(sessionIDHeader); opened != "" && rec.status/100 == 2 {
			c.opened(opened)
		}
		return
	}
	if why, ok := c.touch(id, r.Method == http.MethodDelete); !ok {
		writeSessionGone(w, r, why)
		return
	}
	c.next.ServeHTTP(w, r)
}

// sessionless lets a POST without a session through when it opens one (an
// initialize), and otherwise answers as the protocol asks: 400, with a
// JSON-RPC error saying to initialize first. The SDK would open a session
// for it and answer HTTP 200 with a JSON-RPC error of code 0. A body that is
// not one JSON-RPC message goes on, for the SDK to refuse as it does.
func (c *sessionCap) sessionless(w http.ResponseWriter, r *http.Request) bool {
	if r.Body == nil {
		return true
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
	if err != nil {
		return true
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &msg) != nil || msg.Method == nil || *msg.Method == "initialize" {
		return true
	}
	id := msg.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	writeJSONRPCError(w, http.StatusBadRequest, id, codeInvalidRequest,
		"Bad Request: Mcp-Session-Id header is required: send initialize without Mcp-Session-Id to open a session, then send the Mcp-Session-Id it answers with on every request")
	return false
}

// errReader replays the error a body's read ended with, after its bytes.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// touch marks a live session used (or ended, for a DELETE). For a session
// it closed it reports false and why; an id it never saw goes on to the
// SDK, which knows whether it is live.
func (c *sessionCap) touch(id string, ending bool) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if why, ok := c.gone[id]; ok {
		return why, false
	}
	if el, ok := c.live[id]; ok {
		c.lru.MoveToFront(el)
		if ending {
			c.deleted[id] = true
		}
	}
	return "", true
}

// opened records a new session and closes the least recently used ones
// beyond the cap.
func (c *sessionCap) opened(id string) {
	ss := c.session(id)
	if ss == nil || ss.InitializeParams() == nil {
		return // initialization failed, and the SDK closes it
	}
	client := ""
	if ci := ss.InitializeParams().ClientInfo; ci != nil {
		client = strings.TrimSpace(ci.Name + " " + ci.Version)
	}
	var evict []string
	c.mu.Lock()
	if _, ok := c.live[id]; !ok {
		c.live[id] = c.lru.PushFront(id)
		c.client[id] = client
	}
	for c.lru.Len() > c.max {
		old, held := c.evictableLocked(id)
		c.lru.Remove(c.live[old])
		delete(c.live, old)
		who := c.client[old]
		delete(c.client, old)
		if who == "" {
			who = "a client that gave no name"
		}
		c.rememberLocked(old, fmt.Sprintf("session expired: this server closed it because more than %d sessions were live (--max-sessions); its client (%s) held the most of them (%d), and this was its least recently used. Initialize a new session (send initialize without Mcp-Session-Id) and use_notebook again if needed.", c.max, who, held))
		evict = append(evict, old)
	}
	c.mu.Unlock()
	go func() {
		_ = ss.Wait()
		c.closed(id)
	}()
	for _, old := range evict {
		if s := c.session(old); s != nil {
			s.Close()
		}
	}
}

// evictableLocked picks the session to close past the cap: the least
// recently used of the client holding the most live sessions, never the
// one just opened (keep); held is how many that client holds.
func (c *sessionCap) evictableLocked(keep string) (id string, held int) {
	counts := map[string]int{}
	for _, who := range c.client {
		counts[who]++
	}
	most := 0
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		if s := el.Value.(string); s != keep {
			most = max(most, counts[c.client[s]])
		}
	}
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		if s := el.Value.(string); s != keep && counts[c.client[s]] == most {
			return s, most
		}
	}
	return c.lru.Back().Value.(string), most
}

// closed forgets a session that ended. One that ended neither by its
// client's DELETE nor by eviction expired idle (--session-timeout).
func (c *sessionCap) closed(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, live := c.live[id]
	if !live {
		delete(c.deleted, id)
		return
	}
	c.lru.Remove(el)
	delete(c.live, id)
	delete(c.client, id)
	if c.deleted[id] {
		delete(c.deleted, id)
		return
	}
	why := "session closed by this server."
	if c.timeout > 0 {
		why = fmt.Sprintf("session expired: it sent no request for %s (--session-timeout), so this server closed it.", c.timeout)
	}
	c.rememberLocked(id, why+" Initialize a new session (send initialize without Mcp-Session-Id) and use_notebook again if needed.")
}

// rememberLocked keeps why id was closed, forgetting the oldest reasons
// past goneRemembered.
func (c *sessionCap) rememberLocked(id, why string) {
	if _, ok := c.gone[id]; !ok {
		c.order = append(c.order, id)
	}
	c.gone[id] = why
	for len(c.order) > goneRemembered {
		delete(c.gone, c.order[0])
		c.order = c.order[1:]
	}
}

// session finds the live SDK session with this id.
func (c *sessionCap) session(id string) *sdk.ServerSession {
	for ss := range c.srv.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// liveCount is the number of live sessions the cap counts.
func (c *sessionCap) liveCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.live)
}

// writeSessionGone answers a request for a closed session: 404, as the
// protocol says (a client then initializes again), with a JSON-RPC error
// saying why, carrying the request's id when it had one.
func writeSessionGone(w http.ResponseWriter, r *http.Request, why string) {
	id := json.RawMessage("null")
	if r.Method == http.MethodPost && r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(bytes.TrimSpace(body), &req) == nil && len(req.ID) > 0 {
			id = req.ID
		}
	}
	writeJSONRPCError(w, http.StatusNotFound, id, codeSessionGone, why)
}

// writeJSONRPCError answers a request with an HTTP status and a JSON-RPC
// error carrying the request's id.
func writeJSONRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, message string) {
	resp, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(resp)
}

// JSON-RPC error codes: a request for a closed session (implementation-
// defined server error range), and JSON-RPC's own invalid request.
const (
	codeSessionGone    = -32001
	codeInvalidRequest = -32600
)

// protocolVersionHeader is the streamable HTTP transport's version header.
const protocolVersionHeader = "Mcp-Protocol-Version"

// eraStateless is the first protocol version of the stateless era, which
// this session endpoint does not serve (the SDK answers its requests with
// errors of its own).
const eraStateless = "2026-07-28"

// servedVersions are the protocol versions this endpoint serves: the
// SDK's, without the stateless era.
var servedVersions = func() []string {
	var vs []string
	for _, v := range sdk.SupportedProtocolVersions() {
		if v < eraStateless {
			vs = append(vs, v)
		}
	}
	return vs
}()

// sessionHeaderWriter notes the status of a response, to see whether the
// session an initialize opened is really there.
type sessionHeaderWriter struct {
	http.ResponseWriter
	status int
}

func (w *sessionHeaderWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionHeaderWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush passes flushes on: the SDK streams events.
func (w *sessionHeaderWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *sessionHeaderWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
