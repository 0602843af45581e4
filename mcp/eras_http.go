package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
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
	}
}

func (h *eraRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(protocolVersionHeader) >= eraStateless {
		h.serveStateless(w, r)
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
	h.stateless.ServeHTTP(w, r)
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

// protocolVersionHeader is the streamable HTTP transport's version header.
const protocolVersionHeader = "Mcp-Protocol-Version"
