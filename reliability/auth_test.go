package reliability

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// The running binary refuses every request that lacks the token, comes from
// a foreign page or a rebound DNS name, or is too big, and says why.
func TestAuthAgainstTheBinary(t *testing.T) {
	const token = "reliability-auth-token-5f1e"
	p, _ := startShared(t, token)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	port := p.Endpoint[strings.LastIndex(p.Endpoint, ":")+1 : strings.LastIndex(p.Endpoint, "/")]

	cases := []struct {
		name    string
		token   string
		hdr     map[string]string
		status  int
		mention string
	}{
		{"no token", "", nil, http.StatusUnauthorized, "Authorization: Bearer"},
		{"wrong token", "not-the-token", nil, http.StatusUnauthorized, "token is wrong"},
		{"token prefix only", token[:10], nil, http.StatusUnauthorized, "token is wrong"},
		{"forged Origin", token, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden, "Origin"},
		{"forged Origin null", token, map[string]string{"Origin": "null"}, http.StatusForbidden, "Origin"},
		{"forged Host", token, map[string]string{"Host": "evil.example:" + port}, http.StatusForbidden, "Host"},
		{"rebound Host", token, map[string]string{"Host": "127.0.0.1.nip.io:" + port}, http.StatusForbidden, "Host"},
		{"right token", token, nil, http.StatusOK, ""},
		{"right token, loopback Origin", token, map[string]string{"Origin": "http://localhost:6274"}, http.StatusOK, ""},
	}
	for _, c := range cases {
		r := newRPC(t, p.Endpoint, c.token)
		code, body, msgs, err := r.post(ctx, initializeBody(), c.hdr)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if code != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, code, c.status, body)
			continue
		}
		if c.status != http.StatusOK {
			if !strings.Contains(body, c.mention) {
				t.Errorf("%s: body %q does not say %q", c.name, body, c.mention)
			}
			continue
		}
		// A successful initialize names the server and opens a session.
		if len(msgs) != 1 || r.session == "" || !strings.Contains(body, `"serverInfo"`) || !strings.Contains(body, "Jupyter MCP Server") {
			t.Errorf("%s: initialize answer %q (session %q)", c.name, body, r.session)
		}
	}

	// Bodies over the limit (--max-body, 4 MiB by default) are refused before the protocol sees
	// them, both with a declared length and chunked.
	big := bytes.Repeat([]byte("x"), 17<<20)
	r := newRPC(t, p.Endpoint, token)
	code, body, _, err := r.post(ctx, big, nil)
	if err != nil || code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "limit") {
		t.Errorf("oversized body: %d %v %q", code, err, truncate(body, 200))
	}
	// A reader of unknown length makes the client send the body chunked.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.Endpoint, io.MultiReader(bytes.NewReader(big)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatalf("chunked oversized body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked oversized body: %d %q", resp.StatusCode, truncate(string(b), 200))
	}

	// The refusals did not hurt the server: a real client still works.
	cs := p.Connect(t)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list after the refusals: %v", err)
	}
}

// Serving without a token is only allowed on loopback: the binary refuses to
// start on 0.0.0.0, and on 127.0.0.1 it serves without one.
func TestNoAuthIsLoopbackOnly(t *testing.T) {
	_, srv := startShared(t, "unused-token-for-startup")
	p := harness.Start(t, []string{"--transport", "streamable-http", "--port", "0", "--bind", "0.0.0.0", "--no-auth-loopback-only",
		"--jupyter-url", srv.URL, "--jupyter-token", srv.Token})
	select {
	case <-p.Exited():
	case <-time.After(60 * time.Second):
		t.Fatalf("--no-auth-loopback-only --bind 0.0.0.0 kept running; stderr:\n%s", p.Stderr.String())
	}
	if p.Cmd.ProcessState.ExitCode() == 0 {
		t.Errorf("exit code 0 for --no-auth-loopback-only on 0.0.0.0")
	}
	if errOut := p.Stderr.String(); !strings.Contains(errOut, "loopback") || strings.Contains(errOut, "MCP endpoint:") {
		t.Errorf("stderr does not explain the refusal (or it served anyway):\n%s", errOut)
	}

	open := harness.StartHTTP(t, "", "--no-auth-loopback-only", "--jupyter-url", srv.URL, "--jupyter-token", srv.Token)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, body, _, err := newRPC(t, open.Endpoint, "").post(ctx, initializeBody(), nil)
	if err != nil || code != http.StatusOK {
		t.Errorf("no-auth on loopback: %d %v %s", code, err, body)
	}
	// Origin and Host checks still apply without a token.
	code, _, _, _ = newRPC(t, open.Endpoint, "").post(ctx, initializeBody(), map[string]string{"Origin": "https://evil.example"})
	if code != http.StatusForbidden {
		t.Errorf("no-auth: forged Origin got %d, want 403", code)
	}
}
