package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// One URL, both eras. go-sdk v1.8 serves 2026-07-28 over HTTP only from a
// stateless handler, and a session handler answers such a request -32022
// (a client then falls back to the old handshake, or gives up). So the
// endpoint is two SDK handlers over the one *sdk.Server, and each request
// goes to the one of the era it speaks:
//
//   - MCP-Protocol-Version 2026-07-28 or later, or a POST without a session
//     whose body's _meta names such a version: the stateless handler (one
//     request, one answer; no session, no event store, no GET stream). A
//     body that carries the version in _meta but not in the header still
//     goes there, so that the SDK answers it as the protocol says (-32020,
//     the header is missing) rather than as an unknown version.
//   - everything else (initialize, a request with Mcp-Session-Id, GET,
//     DELETE): the session handler, exactly as before.
//
// Tools, resources, the prompt, the observer, subscriptions and the
// resource notifications are then the same for both: one server.

// eraRouter is the endpoint: it sends each request to its era's handler.
type eraRouter struct {
	legacy, stateless http.Handler
	maxBody           int64 // bound of a body read to route it

	// self names this process; peers are the other replicas behind the
	// same address, by name (Options.Peers).
	self  string
	peers map[string]*httputil.ReverseProxy
}

// HTTPHandler serves streamable HTTP. main mounts it at /mcp; authentication
// is a wrapper around it (any http.Handler middleware will do), which keeps
// this package free of tokens.
//
// Both protocol eras are served on it (eraRouter). In the session era,
// streams are resumable: every event gets an id (after a priming event) and
// is kept in a memory event store bounded to eventStoreBytes over all
// sessions, so a client whose connection dropped mid-call sends
// Last-Event-ID and gets what it missed, the call's result included.
// Sessions are capped (Options.MaxSessions) and expire idle
// (Options.SessionTimeout); either way the client is told why. In the
// stateless era a request is its own stream: closing it cancels the call
// (the kernel is interrupted), as the protocol says a client cancels.
func (s *Server) HTTPHandler() http.Handler {
	maxBody := s.opts.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = 4 << 20 // the SDK's default
	}
	return &eraRouter{
		legacy: s.sessionHandler(),
		stateless: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv },
			&sdk.StreamableHTTPOptions{
				Logger:    s.log,
				Stateless: true,
				// Closing the response stream is how a client of
				// this era cancels; without this the call would run
				// on to its end.
				PropagateRequestCancellation: true,
				MaxRequestBodyBytes:          s.opts.MaxBodyBytes,
				DisableLocalhostProtection:   s.opts.HostsCheckedInFront,
			}),
		maxBody: maxBody,
		self:    s.states.inst,
		peers:   peerProxies(s.opts.Peers),
	}
}

func (h *eraRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v := r.Header.Get(protocolVersionHeader)
	if v >= eraStateless {
		h.serveStateless(w, r)
		return
	}
	if v != "" && !slices.Contains(sdk.SupportedProtocolVersions(), v) {
		// Both eras are served here: the list is the SDK's whole one
		// (the session handler alone would leave 2026-07-28 out).
		http.Error(w, fmt.Sprintf("Bad Request: Unsupported protocol version %q (supported versions: %s)", v, strings.Join(sdk.SupportedProtocolVersions(), ",")), http.StatusBadRequest)
		return
	}
	if r.Method == http.MethodPost && r.Body != nil && r.Header.Get(sessionIDHeader) != "" {
		h.serveSession(w, r)
		return
	}
	if r.Method != http.MethodPost || r.Header.Get(sessionIDHeader) != "" || r.Body == nil {
		h.legacy.ServeHTTP(w, r)
		return
	}
	// A POST without a session: an initialize, or a stateless request
	// without its header. Read the body to tell, and hand it on whole.
	body, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err == nil && int64(len(body)) <= h.maxBody && metaNamesStateless(body) {
		h.serveStateless(w, r)
		return
	}
	h.legacy.ServeHTTP(w, r)
}

// serveStateless hands r to the stateless handler, with a Base64-wrapped
// Mcp-Name decoded first: the protocol says a server decodes it before
// comparing it with the body, and the SDK compares the header as it came,
// refusing a conforming client's non-ASCII tool or resource name.
func (h *eraRouter) serveStateless(w http.ResponseWriter, r *http.Request) {
	if v, ok := decodeSentinel(r.Header.Get("Mcp-Name")); ok {
		r.Header.Set("Mcp-Name", v)
	}
	if !h.checkTaskName(w, r) {
		return
	}
	if p := h.owner(r); p != nil {
		r.Header.Set(forwardedHeader, h.self)
		p.ServeHTTP(w, r)
		return
	}
	h.stateless.ServeHTTP(w, r)
}

// Past one machine. A stateless client's requests may land on any replica
// behind one address, but a held call lives in the process that holds it:
// the retry that answers it must reach that process. Each requestState
// names its process (Options.Instance); a replica that knows its peers
// (Options.Peers) hands a retry whose state names a peer to that peer,
// which verifies it as its own. Nothing else is forwarded, and only to a
// configured peer, never to an address a request names.

// forwardedHeader marks a request a replica forwarded, so that it is
// forwarded at most once (peers configured in a loop cannot bounce it).
const forwardedHeader = "X-Jupyter-Mcp-Forwarded-By"

// peerProxies makes a reverse proxy to each peer's endpoint. A peer whose
// URL does not parse is left out (main checks the flag).
func peerProxies(peers map[string]string) map[string]*httputil.ReverseProxy {
	out := map[string]*httputil.ReverseProxy{}
	for name, raw := range peers {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			continue
		}
		out[name] = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.URL.Path, pr.Out.URL.RawPath = u.Scheme, u.Host, u.Path, u.RawPath
				pr.Out.Host = u.Host
			},
			FlushInterval: -1, // the answer is an event stream
		}
	}
	return out
}

// owner is the peer that holds the call a retry answers or the task a
// tasks/* request names, nil when that is this process (or unknown, or the
// request was forwarded already).
func (h *eraRouter) owner(r *http.Request) *httputil.ReverseProxy {
	if len(h.peers) == 0 || r.Method != http.MethodPost || r.Header.Get(forwardedHeader) != "" || r.Body == nil {
		return nil
	}
	if taskNamed[r.Header.Get("Mcp-Method")] {
		// checkTaskName has made sure Mcp-Name is the task id.
		if inst := taskInstance(r.Header.Get("Mcp-Name")); inst != "" && inst != h.self {
			return h.peers[inst]
		}
		return nil
	}
	if r.Header.Get("Mcp-Method") != "tools/call" {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil || !bytes.Contains(body, []byte(`"requestState"`)) {
		return nil
	}
	var msg struct {
		Params struct {
			RequestState string `json:"requestState"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return nil
	}
	inst := peekInstance(msg.Params.RequestState)
	if inst == "" || inst == h.self {
		return nil
	}
	return h.peers[inst]
}

// metaNamesStateless says whether a JSON-RPC body's params._meta names a
// protocol version of the stateless era.
func metaNamesStateless(body []byte) bool {
	if !bytes.Contains(body, []byte(sdk.MetaKeyProtocolVersion)) {
		return false
	}
	var msg struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false
	}
	var v string
	return json.Unmarshal(msg.Params.Meta[sdk.MetaKeyProtocolVersion], &v) == nil && v >= eraStateless
}

// decodeSentinel decodes an "=?base64?...?=" header value (the protocol's
// form for values that are not plain ASCII).
func decodeSentinel(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// taskNamed are the methods whose Mcp-Name header carries params.taskId
// (ext-tasks, Streamable HTTP: Routing Headers). tasks/result and
// tasks/list are not of this era: the SDK answers them as unknown.
var taskNamed = map[string]bool{"tasks/get": true, "tasks/update": true, "tasks/cancel": true}

// checkTaskName refuses (400, -32020, as for any header that does not
// match its body) a tasks/get, tasks/update or tasks/cancel whose Mcp-Name
// is not its params.taskId: the header is what a proxy routes by, so a
// mismatch would send a poll to one replica and answer it as another's.
// The SDK checks Mcp-Name only for the methods it knows.
func (h *eraRouter) checkTaskName(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil || !taskNamed[r.Header.Get("Mcp-Method")] {
		return true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil {
		return true // the SDK reports it
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || !taskNamed[msg.Method] {
		return true // not a tasks request: the SDK checks Mcp-Method
	}
	name := r.Header.Get("Mcp-Name")
	if name == msg.Params.TaskID && name != "" {
		return true
	}
	why := fmt.Sprintf("Header mismatch: Mcp-Name %q must be the request's params.taskId %q", name, msg.Params.TaskID)
	if name == "" {
		why = "Header mismatch: Mcp-Name is required on " + msg.Method + " and must be its params.taskId"
	}
	id := msg.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": sdk.CodeHeaderMismatch, "message": why}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(out)
	return false
}

// serveSession hands a session's POST to the session handler, with a
// SEP-1686 params.task moved where the SDK keeps it (moveLegacyTask).
func (h *eraRouter) serveSession(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
	if err == nil && int64(len(body)) <= h.maxBody {
		if moved := moveLegacyTask(body); len(moved) != len(body) || !bytes.Equal(moved, body) {
			body = moved
			r.ContentLength = int64(len(body))
			r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		}
	}
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	h.legacy.ServeHTTP(w, r)
}
