package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Two eras of MCP on one server. 2025-11-25 and older: initialize, then a
// session (its id on HTTP, the connection on stdio) that everything is kept
// under, exactly as before. 2026-07-28: no initialize and no session; every
// request carries its protocol version, the client's capabilities and
// client info in _meta, and a server must not tie one request to the next
// by the connection it came on. The SDK serves both on one *sdk.Server;
// this file says who a request comes from, and keeps what the engine keys
// by session for a client that has none.

// caller is who a request comes from, as the engine keys it.
type caller struct {
	// stateless: the request speaks 2026-07-28 or later, with no session.
	stateless bool
	// key is the engine's session key: the session's (sessionID) or, for
	// a stateless caller, what it says of itself (principalKey).
	key string
	// client is "name version" as the client introduced itself.
	client string
}

// requestMeta is a request's _meta; nil when it has none (a request sent
// without params reaches a handler with a nil params pointer, whose
// GetMeta would panic).
func requestMeta(req sdk.Request) map[string]any {
	if req == nil {
		return nil
	}
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// isStateless says whether a request speaks a protocol without sessions:
// its _meta names 2026-07-28 or later (the SDK has checked the rest of the
// per-request fields by then).
func isStateless(req sdk.Request) bool {
	v, _ := requestMeta(req)[sdk.MetaKeyProtocolVersion].(string)
	return v >= eraStateless
}

// perRequest is what every request the SDK hands a server knows of its
// client: from _meta on 2026-07-28, from initialize before.
type perRequest interface {
	ClientInfo() *sdk.Implementation
	ClientCapabilities() *sdk.ClientCapabilities
}

// clientInfoOf is the client info of a request's client (nil: unknown).
func clientInfoOf(req sdk.Request) *sdk.Implementation {
	if r, ok := req.(perRequest); ok {
		return r.ClientInfo()
	}
	return nil
}

// capabilitiesOf are the capabilities the client declared for this request
// (on 2026-07-28 its own _meta, never the first request's of a stdio
// connection, which is what ServerSession.InitializeParams keeps).
func capabilitiesOf(req sdk.Request) *sdk.ClientCapabilities {
	if r, ok := req.(perRequest); ok {
		return r.ClientCapabilities()
	}
	return nil
}

// declaresFormElicitation says whether capabilities allow asking through a
// form (an elicitation capability without modes means form).
func declaresFormElicitation(c *sdk.ClientCapabilities) bool {
	if c == nil || c.Elicitation == nil {
		return false
	}
	return c.Elicitation.Form != nil || c.Elicitation.URL == nil
}

// Bounds of what a stateless client's key keeps of its client info.
const clientPartBytes = 64

// principalKey is the engine's key of a stateless client: "@name version".
// It is what the client says of itself, so two copies of one host (same
// name, same version) share it, and with it their notices and the tools
// allowed for them (README, Sessions). The "@" keeps it apart from every
// session id (the SDK's, "stdio", the workbench's), so a client cannot name
// itself into another session's state.
func principalKey(ci *sdk.Implementation) (key, client string) {
	name, version := "", ""
	if ci != nil {
		name, version = clientPart(ci.Name), clientPart(ci.Version)
	}
	client = strings.TrimSpace(name + " " + version)
	if client == "" {
		return "@unnamed client", ""
	}
	return "@" + client, client
}

// clientPart is a client info field as a key keeps it: printable, one
// line, bounded.
func clientPart(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, strings.TrimSpace(s))
	if len(s) > clientPartBytes {
		s = strings.ToValidUTF8(s[:clientPartBytes], "")
	}
	return s
}

// callerOf says who a request comes from. A legacy request's caller is its
// session; a stateless one's is its client, leased (leases) while it keeps
// coming.
func (s *Server) callerOf(req sdk.Request) caller {
	if isStateless(req) {
		key, client := principalKey(clientInfoOf(req))
		return caller{stateless: true, key: key, client: client}
	}
	ss, _ := req.GetSession().(*sdk.ServerSession)
	return caller{key: s.sessionID(ss)}
}

// sessionOf is the engine's session key for a request.
func (s *Server) sessionOf(req sdk.Request) string { return s.callerOf(req).key }

// leases keeps a stateless client known to the engine while it comes: the
// first request opens its engine session (engine.SessionlessOpened), and
// it closes once the client has sent nothing for the session timeout, or
// when more clients than the session cap have come since it last did.
type leases struct {
	mu     sync.Mutex
	live   map[string]*lease
	reaper bool // the goroutine that closes idle leases runs
}

// lease is one stateless client known to the engine.
type lease struct {
	key, client string
	last        time.Time
	busy        int // requests (and runs) of it in flight
}

// defaultLeaseIdle is how long a stateless client is kept without a request
// when the server keeps sessions forever (SessionTimeout 0): a client that
// went away leaves nothing behind for longer.
const defaultLeaseIdle = 6 * time.Hour

// hold marks c as active until the returned release is called; the first
// hold opens its engine session.
func (s *Server) hold(c caller) (release func()) {
	l := &s.leases
	l.mu.Lock()
	if l.live == nil {
		l.live = map[string]*lease{}
	}
	le := l.live[c.key]
	opened := le == nil
	if opened {
		le = &lease{key: c.key, client: c.client}
		l.live[c.key] = le
	}
	le.busy++
	le.last = time.Now()
	evict := l.overCapLocked(s.maxLeases())
	startReaper := !l.reaper
	l.reaper = true
	l.mu.Unlock()
	if opened {
		s.e.SessionlessOpened(c.key, c.client)
		s.watchNotebooks()
	}
	for _, old := range evict {
		s.leaseClosed(old)
	}
	if startReaper {
		go s.reapLeases()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			le.busy--
			le.last = time.Now()
			l.mu.Unlock()
		})
	}
}

// maxLeases is the cap on stateless clients kept at once: the session cap.
func (s *Server) maxLeases() int {
	if s.opts.MaxSessions > 0 {
		return s.opts.MaxSessions
	}
	return DefaultMaxSessions
}

// leaseIdle is how long a stateless client is kept without a request.
func (s *Server) leaseIdle() time.Duration {
	if s.opts.SessionTimeout > 0 {
		return s.opts.SessionTimeout
	}
	return defaultLeaseIdle
}

// overCapLocked drops the least recently active idle leases beyond max and
// returns their keys.
func (l *leases) overCapLocked(max int) []string {
	var out []string
	for len(l.live) > max {
		var oldest *lease
		for _, le := range l.live {
			if le.busy == 0 && (oldest == nil || le.last.Before(oldest.last)) {
				oldest = le
			}
		}
		if oldest == nil {
			break // every one is in a request
		}
		delete(l.live, oldest.key)
		out = append(out, oldest.key)
	}
	return out
}

// reapLeases closes leases idle past leaseIdle, until none is left.
func (s *Server) reapLeases() {
	idle := s.leaseIdle()
	tick := min(idle/4, time.Minute)
	for {
		time.Sleep(tick)
		l := &s.leases
		var gone []string
		l.mu.Lock()
		for k, le := range l.live {
			if le.busy == 0 && time.Since(le.last) > idle {
				delete(l.live, k)
				gone = append(gone, k)
			}
		}
		stop := len(l.live) == 0
		if stop {
			l.reaper = false
		}
		l.mu.Unlock()
		for _, k := range gone {
			s.leaseClosed(k)
		}
		if stop {
			return
		}
	}
}

// leaseClosed tells the engine a stateless client is gone.
func (s *Server) leaseClosed(key string) {
	s.mu.Lock()
	delete(s.activated, key)
	s.mu.Unlock()
	s.unwatchNotebooks()
	s.e.SessionClosed(key)
}

// stampComplete gives a tool result made outside the SDK's own tool path (a
// refusal, a cancellation, a panic's answer, a run's result handed to the
// request that waits for it) the resultType "complete" that 2026-07-28
// requires on every result. The SDK sets it only on results that pass
// through its callTool, and leaves CallToolResult out of the types it
// stamps itself; a client of the newest protocol (the TypeScript SDK 2.x)
// rejects a result without it. The field is unexported: decoding is the one
// way to set it. The result's fields are shared, not copied.
func stampComplete(r *sdk.CallToolResult) *sdk.CallToolResult {
	if r == nil || r.NeedsInput() {
		return r
	}
	var out sdk.CallToolResult
	if err := json.Unmarshal([]byte(`{"resultType":"complete","content":[]}`), &out); err != nil {
		panic("stampComplete: " + err.Error()) // a constant that decodes
	}
	content := r.Content
	if content == nil {
		content = []sdk.Content{}
	}
	out.Meta, out.Content, out.StructuredContent, out.IsError = r.Meta, content, r.StructuredContent, r.IsError
	return &out
}
