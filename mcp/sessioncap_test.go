package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// capFront is an SDK server behind the session cap, over HTTP.
func capFront(t *testing.T, max int, timeout time.Duration) (*sdk.Server, *sessionCap, *httptest.Server) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "cap", Version: "1"}, nil)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{SessionTimeout: timeout})
	c := newSessionCap(h, srv, max, timeout)
	web := httptest.NewServer(c)
	t.Cleanup(web.Close)
	return srv, c, web
}

// rawPost posts one JSON-RPC message for session id ("" opens one) and
// returns the status, the session id answered and the body.
func rawPost(t *testing.T, url, id, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		id = sid
	}
	return resp.StatusCode, id, string(b)
}

func openSession(t *testing.T, url string) string {
	t.Helper()
	code, id, body := rawPost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q %s", code, id, body)
	}
	if code, _, body := rawPost(t, url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code/100 != 2 {
		t.Fatalf("initialized: %d %s", code, body)
	}
	return id
}

// goneMessage is the JSON-RPC error message of a 404 for a closed session.
func goneMessage(t *testing.T, code int, body string) string {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if code != http.StatusNotFound || json.Unmarshal([]byte(body), &m) != nil || m.Error.Code != codeSessionGone || string(m.ID) != "9" {
		t.Fatalf("want a 404 with a JSON-RPC error for request 9, got %d %s", code, body)
	}
	return m.Error.Message
}

// A session that expires idle is told so on its next request, and a
// session its client ended gets the SDK's plain 404 (nothing to explain).
func TestSessionCapSaysWhySessionsAreGone(t *testing.T) {
	t.Parallel()
	// The idle timeout is long enough that the session ended by its client
	// is deleted before it could expire, even on a loaded machine.
	srv, _, web := capFront(t, 4, 2*time.Second)
	ended := openSession(t, web.URL)
	req, _ := http.NewRequest(http.MethodDelete, web.URL, nil)
	req.Header.Set("Mcp-Session-Id", ended)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	idle := openSession(t, web.URL)
	// Wait for the idle timer to close the session: no request may reach
	// it meanwhile (each one restarts the timer).
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		open := false
		for ss := range srv.Sessions() {
			open = open || ss.ID() == idle
		}
		if !open {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the idle session was never closed")
		case <-time.After(50 * time.Millisecond):
		}
	}
	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	// closed() runs on the session's own goroutine; the reason may land a
	// moment after the session left the server's list.
	var msg string
	for {
		code, _, body := rawPost(t, web.URL, idle, list)
		if strings.Contains(body, "session expired") || ctx.Err() != nil {
			msg = goneMessage(t, code, body)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"session expired", "sent no request for 2s", "--session-timeout", "Initialize a new session"} {
		if !strings.Contains(msg, want) {
			t.Errorf("idle expiry message %q does not say %q", msg, want)
		}
	}
	code, _, body := rawPost(t, web.URL, ended, list)
	if code != http.StatusNotFound || strings.Contains(body, "expired") {
		t.Errorf("a session its client ended: %d %s", code, body)
	}
}

// Past the cap the least recently used session is closed, on the server
// too, and told why; the cap holds however many clients come.
func TestSessionCapEvictsTheLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	srv, c, web := capFront(t, 3, 0)
	var ids []string
	for range 3 {
		ids = append(ids, openSession(t, web.URL))
	}
	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	// Use the oldest: the second becomes the least recently used.
	if code, _, body := rawPost(t, web.URL, ids[0], list); code != http.StatusOK {
		t.Fatalf("tools/list: %d %s", code, body)
	}
	for range 5 {
		ids = append(ids, openSession(t, web.URL))
	}
	if n := c.liveCount(); n != 3 {
		t.Errorf("the cap counts %d live sessions, want 3", n)
	}
	// The evicted sessions leave the SDK server's list as their
	// connections wind down.
	deadline := time.Now().Add(60 * time.Second)
	for {
		live := 0
		for range srv.Sessions() {
			live++
		}
		if live <= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still live on the server, cap 3", live)
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, _, body := rawPost(t, web.URL, ids[1], list)
	msg := goneMessage(t, code, body)
	if !strings.Contains(msg, "more than 3 sessions were live") {
		t.Errorf("eviction message: %q", msg)
	}
	for _, id := range ids[5:] {
		if code, _, body := rawPost(t, web.URL, id, list); code != http.StatusOK {
			t.Errorf("a recent session: %d %s", code, body)
		}
	}
}

// Past the cap the client holding the most sessions loses its own least
// recently used one: a client opening many cannot evict the others.
func TestSessionCapSharesAmongClients(t *testing.T) {
	t.Parallel()
	_, c, web := capFront(t, 3, 0)
	open := func(client string) string {
		t.Helper()
		code, id, body := rawPost(t, web.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+client+`","version":"1"}}}`)
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize: %d %s", code, body)
		}
		rawPost(t, web.URL, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return id
	}
	quiet := open("quiet")
	var hog []string
	for range 6 {
		hog = append(hog, open("hog"))
	}
	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	if code, _, body := rawPost(t, web.URL, quiet, list); code != http.StatusOK {
		t.Fatalf("the quiet client's session was evicted: %d %s", code, body)
	}
	if n := c.liveCount(); n != 3 {
		t.Fatalf("live %d, want 3", n)
	}
	code, _, body := rawPost(t, web.URL, hog[0], list)
	if msg := goneMessage(t, code, body); !strings.Contains(msg, "its client (hog 1) held the most of them") {
		t.Errorf("eviction message %q", msg)
	}
}

// A request without a session that does not open one is answered as the
// protocol asks, 400 with a JSON-RPC error carrying its id, instead of the
// SDK's 200 with an error of code 0; an initialize still opens a session.
func TestARequestWithoutASessionIsABadRequest(t *testing.T) {
	t.Parallel()
	_, c, web := capFront(t, 4, 0)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		code, id, text := rawPost(t, web.URL, "", body)
		var resp struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if code != http.StatusBadRequest || id != "" || json.Unmarshal([]byte(text), &resp) != nil ||
			resp.Error.Code != -32600 || !strings.Contains(resp.Error.Message, "Mcp-Session-Id header is required") {
			t.Errorf("%s: %d, session %q, %s", body, code, id, text)
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(body), &req)
		if want := string(req.ID); want != "" && string(resp.ID) != want {
			t.Errorf("%s: answered id %s", body, resp.ID)
		}
	}
	if n := c.liveCount(); n != 0 {
		t.Errorf("%d sessions opened by requests that did not initialize", n)
	}
	openSession(t, web.URL)
}

// A bad MCP-Protocol-Version is refused with the versions this endpoint
// serves, which are not the stateless era's.
func TestABadProtocolVersionListsTheServedOnes(t *testing.T) {
	t.Parallel()
	_, _, web := capFront(t, 4, 0)
	req, _ := http.NewRequest(http.MethodPost, web.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "1999-01-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "2025-11-25") || strings.Contains(string(b), "2026-07-28") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}
