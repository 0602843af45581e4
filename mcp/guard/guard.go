// Package guard protects the streamable HTTP endpoint: a bearer token on
// every request (compared in constant time), Origin and Host checks against
// cross-origin browser requests and DNS rebinding, and a request body limit.
// Each refusal is a plain answer that says what was wrong (401, 403, 413).
package guard

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/secret"
)

// Options configure a Guard.
type Options struct {
	// Token every request must carry as "Authorization: Bearer TOKEN".
	Token string
	// NoAuth turns the token check off. Only honoured when the server is
	// bound to loopback; New refuses it otherwise.
	NoAuth bool
	// BindHost is the address the server listens on (e.g. 127.0.0.1).
	BindHost string
	// AllowedOrigins are extra browser origins allowed besides loopback ones
	// (e.g. https://inspector.example). "*" allows any origin.
	AllowedOrigins []string
	// AllowedHosts are extra Host header values allowed besides loopback
	// names (needed when binding to a non-loopback address): names (matched
	// without case) or IP addresses (matched as addresses, so ::1 and
	// 0:0:0:0:0:0:0:1 are one), with or without a port.
	AllowedHosts []string
	// MaxBodyBytes limits request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// DefaultMaxBodyBytes is the request body limit when none is given: the
// MCP SDK's own default, so that one limit is in force whichever checks
// first.
const DefaultMaxBodyBytes = 4 << 20

// IsLoopback reports whether host (an IP or name) is a loopback address.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// New wraps next with the checks. It refuses NoAuth on a non-loopback bind.
func New(next http.Handler, o Options) (http.Handler, error) {
	if o.NoAuth && !IsLoopback(o.BindHost) {
		return nil, fmt.Errorf("refusing to serve without a token on %s: the no-auth opt-out is for loopback only", o.BindHost)
	}
	if !o.NoAuth && o.Token == "" {
		return nil, fmt.Errorf("an MCP token is required")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return &guard{next: next, o: o}, nil
}

type guard struct {
	next http.Handler
	o    Options
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		// The allowed names are not listed: the client has shown no token
		// yet, and the machine's addresses are none of its business.
		http.Error(w, fmt.Sprintf("403 Forbidden: Host %q is not a name of this server (DNS rebinding protection); to serve it, add it with --allowed-hosts (MCP_ALLOWED_HOSTS)", r.Host), http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
		http.Error(w, fmt.Sprintf("403 Forbidden: Origin %q is not allowed (cross-origin browser requests are refused)", origin), http.StatusForbidden)
		return
	}
	if !g.o.NoAuth && !secret.Authorized(r, g.o.Token, "") {
		w.Header().Set("WWW-Authenticate", `Bearer realm="jupyter-mcp-server"`)
		msg := "401 Unauthorized: send the server's token as \"Authorization: Bearer TOKEN\" (it is shown when the server starts, or set with --mcp-token / MCP_TOKEN)"
		if r.Header.Get("Authorization") != "" {
			msg = "401 Unauthorized: the bearer token is wrong"
		}
		http.Error(w, msg, http.StatusUnauthorized)
		return
	}
	if r.ContentLength > g.o.MaxBodyBytes {
		http.Error(w, fmt.Sprintf("413 Request Entity Too Large: the body is %d bytes; the limit is %d bytes (--max-body / MCP_MAX_BODY)", r.ContentLength, g.o.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return
	}
	if r.Body != nil && r.ContentLength < 0 {
		// A chunked body has no length to check up front: read it (up to
		// one byte past the limit) so the answer is a clear 413 rather than
		// whatever the handler makes of a cut-off body.
		data, err := io.ReadAll(io.LimitReader(r.Body, g.o.MaxBodyBytes+1))
		r.Body.Close()
		if err != nil {
			http.Error(w, "400 Bad Request: cannot read the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if int64(len(data)) > g.o.MaxBodyBytes {
			http.Error(w, fmt.Sprintf("413 Request Entity Too Large: the body exceeds the limit of %d bytes (--max-body / MCP_MAX_BODY)", g.o.MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		r.ContentLength = int64(len(data))
	} else if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, g.o.MaxBodyBytes)
	}
	g.next.ServeHTTP(w, r)
}

func (g *guard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if IsLoopback(host) {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	for _, a := range g.o.AllowedHosts {
		if strings.EqualFold(a, host) || strings.EqualFold(a, hostport) {
			return true
		}
		if ip != nil && ip.Equal(net.ParseIP(strings.Trim(a, "[]"))) {
			return true
		}
	}
	return false
}

func (g *guard) originAllowed(origin string) bool {
	for _, a := range g.o.AllowedOrigins {
		if a == "*" || strings.EqualFold(a, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return IsLoopback(u.Hostname())
}
