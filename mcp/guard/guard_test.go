package guard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "read: "+err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, "ok")
	})
	h, err := New(ok, Options{Token: "s3cret", BindHost: "0.0.0.0", MaxBodyBytes: 100,
		AllowedHosts: []string{"Workstation", "10.1.2.3", "fd00::7", "mcp.example:8443"}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		host     string
		origin   string
		auth     string
		body     string
		chunked  bool
		want     int
		wantText string
	}{
		{name: "no token", host: "127.0.0.1:4040", want: 401, wantText: "Authorization: Bearer"},
		{name: "wrong token", host: "127.0.0.1:4040", auth: "Bearer nope", want: 401, wantText: "wrong"},
		{name: "right token", host: "127.0.0.1:4040", auth: "Bearer s3cret", want: 200},
		{name: "scheme case-insensitive", host: "localhost:4040", auth: "bearer s3cret", want: 200},
		{name: "prefix of token", host: "127.0.0.1:4040", auth: "Bearer s3cre", want: 401},
		{name: "forged host", host: "evil.example:4040", auth: "Bearer s3cret", want: 403, wantText: "--allowed-hosts"},
		{name: "allowed name, any case and port", host: "workstation:4040", auth: "Bearer s3cret", want: 200},
		{name: "allowed name needs the token", host: "workstation:4040", want: 401},
		{name: "allowed address", host: "10.1.2.3:4040", auth: "Bearer s3cret", want: 200},
		{name: "allowed v6 address, other spelling", host: "[fd00:0:0:0:0:0:0:7]:4040", auth: "Bearer s3cret", want: 200},
		{name: "allowed name with its port", host: "mcp.example:8443", auth: "Bearer s3cret", want: 200},
		{name: "allowed name on another port", host: "mcp.example:9999", auth: "Bearer s3cret", want: 403},
		{name: "a name that ends like an allowed one", host: "evil-workstation:4040", auth: "Bearer s3cret", want: 403},
		{name: "forged origin", host: "127.0.0.1:4040", origin: "https://evil.example", auth: "Bearer s3cret", want: 403, wantText: "Origin"},
		{name: "loopback origin", host: "127.0.0.1:4040", origin: "http://localhost:6274", auth: "Bearer s3cret", want: 200},
		{name: "ipv6 loopback host", host: "[::1]:4040", auth: "Bearer s3cret", want: 200},
		{name: "body too large", host: "127.0.0.1:4040", auth: "Bearer s3cret", body: strings.Repeat("x", 101), want: 413, wantText: "the limit is 100 bytes (--max-body / MCP_MAX_BODY)"},
		{name: "body at the limit", host: "127.0.0.1:4040", auth: "Bearer s3cret", body: strings.Repeat("x", 100), want: 200},
		{name: "chunked body too large", host: "127.0.0.1:4040", auth: "Bearer s3cret", body: strings.Repeat("x", 500), chunked: true, want: 413, wantText: "--max-body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader(c.body))
			req.Host = c.host
			if c.chunked {
				req.ContentLength = -1
			}
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Fatalf("status %d, want %d (%s)", rec.Code, c.want, rec.Body.String())
			}
			if c.wantText != "" && !strings.Contains(rec.Body.String(), c.wantText) {
				t.Fatalf("body %q lacks %q", rec.Body.String(), c.wantText)
			}
			if strings.Contains(rec.Body.String(), "s3cret") {
				t.Fatalf("the token leaked into the answer: %q", rec.Body.String())
			}
		})
	}
}

func TestNoAuthOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	if _, err := New(ok, Options{NoAuth: true, BindHost: "0.0.0.0"}); err == nil {
		t.Fatal("no-auth on 0.0.0.0 was accepted")
	}
	h, err := New(ok, Options{NoAuth: true, BindHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.Host = "127.0.0.1:1"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	if _, err := New(ok, Options{BindHost: "127.0.0.1"}); err == nil {
		t.Fatal("empty token accepted")
	}
}
