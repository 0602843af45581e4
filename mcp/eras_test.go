package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// The two protocol eras, as the Go SDK's own client speaks them: its
// default (2026-07-28: no initialize, no session) and pinned to 2025-11-25
// (what most hosts speak). Every test of this file runs the client as a
// stdio host does (RunIO on pipes) and over streamable HTTP.

// era is a protocol a test client speaks.
type era struct {
	name string
	pin  string // ClientSessionOptions.ProtocolVersion; "" is the SDK's default
}

var (
	eraNew    = era{"2026-07-28", ""}
	eraLegacy = era{"2025-11-25", protocolVersion}
	bothEras  = []era{eraNew, eraLegacy}
)

func (e era) opts() *sdk.ClientSessionOptions {
	return &sdk.ClientSessionOptions{ProtocolVersion: e.pin}
}

// transports a test runs over.
var transports = []string{"stdio", "http"}

// connectAs connects a Go SDK client named name (version "1") over
// transport, speaking e. Over stdio it is the host (RunIO on pipes: its
// answers to approvals count); over HTTP it is one of the endpoint's
// clients, on a test server h.web starts on first use.
func (h *harness) connectAs(transport string, e era, name string, opts *sdk.ClientOptions) *sdk.ClientSession {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	client := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, opts)
	var t sdk.Transport
	var done chan error
	switch transport {
	case "stdio":
		sr, cw := io.Pipe()
		cr, sw := io.Pipe()
		done = make(chan error, 1)
		go func() { done <- h.s.RunIO(ctx, sr, sw) }()
		t = &sdk.IOTransport{Reader: cr, Writer: cw}
	case "http":
		t = &sdk.StreamableClientTransport{Endpoint: h.endpoint(), MaxRetries: -1}
	default:
		h.t.Fatalf("unknown transport %q", transport)
	}
	cs, err := client.Connect(ctx, t, e.opts())
	if err != nil {
		cancel()
		h.t.Fatalf("connecting over %s at %s: %v", transport, e.name, err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != e.name {
		h.t.Fatalf("over %s the client speaks %s, want %s", transport, got, e.name)
	}
	h.t.Cleanup(func() {
		cs.Close()
		cancel()
		if done != nil {
			<-done
		}
	})
	return cs
}

// endpoint is the URL of the test's HTTP server over h.s.HTTPHandler().
func (h *harness) endpoint() string {
	h.t.Helper()
	if h.web == nil {
		h.web = httptest.NewServer(h.s.HTTPHandler())
		h.t.Cleanup(h.web.Close)
	}
	return h.web.URL
}

// eachEra runs f as a subtest for each transport and era.
func eachEra(t *testing.T, f func(t *testing.T, transport string, e era)) {
	for _, tr := range transports {
		for _, e := range bothEras {
			t.Run(tr+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				f(t, tr, e)
			})
		}
	}
}

// One endpoint serves both eras: the Go SDK's default client speaks
// 2026-07-28 over HTTP as over stdio (before, HTTP answered it -32022 and
// it fell back to the old handshake), and a client pinned to 2025-11-25
// gets a session as it always did; both call tools.
func TestBothErasOnOneEndpoint(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, transport string, e era) {
		h := newHarness(t)
		cs := h.connectAs(transport, e, "agent", nil)
		if id := cs.ID(); (e == eraNew) != (id == "") && transport == "http" {
			t.Errorf("session id %q at %s", id, e.name)
		}
		rel := h.writeNotebook("a.ipynb", "x = 1")
		ok(t, cs, "use_notebook", map[string]any{"notebook_name": "a", "notebook_path": rel})
		text, _, res := ok(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": "print(40 + 2)"})
		if !strings.Contains(text, "42") || cellIDMeta(res) == "" {
			t.Errorf("insert_execute_code_cell: %q, _meta %v", text, res.Meta)
		}
		_, rows, _ := ok(t, cs, "list_notebooks", nil)
		if rows["kind"] == nil {
			t.Errorf("list_notebooks: %v", rows)
		}
	})
}

// A client without a session is told, when it makes a notebook current,
// that any client may move the server's current notebook and to pass
// notebook_name; a session's client is told what it always was.
func TestUseNotebookTellsASessionlessClientToNameIt(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, transport string, e era) {
		h := newHarness(t)
		cs := h.connectAs(transport, e, "agent", nil)
		rel := h.writeNotebook("a.ipynb", "x = 1")
		text, _, _ := ok(t, cs, "use_notebook", map[string]any{"notebook_name": "a", "notebook_path": rel})
		told := strings.Contains(text, "has no sessions") && strings.Contains(text, "Pass notebook_name='a'")
		if told != (e == eraNew) {
			t.Errorf("at %s the answer says %q", e.name, text)
		}
	})
}

// A sessionless client's current notebook is the server's: it follows
// another client's use_notebook, and a result that acted on a notebook it
// did not make current itself says which; naming the notebook (now also
// on execute_cell) acts on it whatever is current. Its calls are recorded
// under "@name version", and its engine session opens once, not per
// request.
func TestASessionlessClientFollowsTheServersNotebook(t *testing.T) {
	t.Parallel()
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			sub := h.e.Bus().Subscribe(1024)
			a := h.connectAs(transport, eraNew, "agent-a", nil)
			other := h.connectAs("http", eraLegacy, "agent-b", nil)
			pa := h.writeNotebook("a.ipynb", "x = 'in a'")
			pb := h.writeNotebook("b.ipynb", "x = 'in b'")
			ok(t, a, "use_notebook", map[string]any{"notebook_name": "a", "notebook_path": pa})
			text, _, _ := ok(t, a, "read_cell", map[string]any{"cell_index": 0})
			if strings.Contains(text, "Note:") {
				t.Errorf("a read of its own notebook carried a note: %q", text)
			}
			ok(t, other, "use_notebook", map[string]any{"notebook_name": "b", "notebook_path": pb})
			text, _, _ = ok(t, a, "read_cell", map[string]any{"cell_index": 0})
			if !strings.Contains(text, "in b") || !strings.Contains(text, "Note: this acted on notebook 'b'") {
				t.Errorf("after another client made b current, a read says %q", text)
			}
			text, _, _ = ok(t, a, "execute_cell", map[string]any{"cell_index": 0, "notebook_name": "a"})
			if strings.Contains(text, "Note:") {
				t.Errorf("execute_cell with notebook_name carried a note: %q", text)
			}
			text, _, _ = ok(t, a, "insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": "print(x)", "notebook_name": "a"})
			if !strings.Contains(text, "in a") {
				t.Errorf("insert_execute_code_cell on a: %q", text)
			}
			opened := 0
			for _, ev := range drained(sub) {
				if ev.Type == event.EvSessionOpened && ev.Session.ID == "@agent-a 1" {
					opened++
				}
				if ev.Type == event.EvCallStarted && ev.Call.Tool == "read_cell" && ev.Call.Session != "@agent-a 1" && ev.Call.Session != other.ID() {
					t.Errorf("a call recorded under session %q", ev.Call.Session)
				}
			}
			if opened != 1 {
				t.Errorf("the sessionless client's engine session opened %d times", opened)
			}
		})
	}
}

// Notices are kept per sessionless client, keyed by what it says of
// itself: two clients of other names get their own, two copies of one
// host (same name, same version) share them (README, Sessions).
func TestSessionlessClientsGetTheirOwnNotices(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.connectAs("http", eraNew, "agent-a", nil)
	b := h.connectAs("http", eraNew, "agent-b", nil)
	a2 := h.connectAs("http", eraNew, "agent-a", nil)
	rel := h.writeNotebook("n.ipynb", "x = 1")
	ok(t, a, "use_notebook", map[string]any{"notebook_name": "n", "notebook_path": rel})
	info, err := h.e.Notebook("", "n")
	if err != nil {
		t.Fatal(err)
	}
	h.e.Notify("@agent-a 1", info.Path, "a person reverted your insert_cell of 14:31:20")
	read := func(cs *sdk.ClientSession) string {
		t.Helper()
		text, _, _ := ok(t, cs, "read_cell", map[string]any{"cell_index": 0, "notebook_name": "n"})
		return text
	}
	if text := read(b); strings.Contains(text, "reverted") {
		t.Errorf("agent-b was given agent-a's notice: %q", text)
	}
	if text := read(a2); !strings.Contains(text, "Note: a person reverted your insert_cell") {
		t.Errorf("a second copy of agent-a 1 (same name and version) does not share its notices: %q", text)
	}
	if text := read(a); strings.Contains(text, "reverted") {
		t.Errorf("a notice was given twice: %q", text)
	}
}

// A client that names itself after another session ("stdio", the
// workbench) gets a key of its own: it cannot take that session's current
// notebook, notices or the tools allowed for it.
func TestASessionlessNameIsNoSessionID(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"stdio", "workbench", ""} {
		key, _ := principalKey(&sdk.Implementation{Name: name})
		if !strings.HasPrefix(key, "@") {
			t.Errorf("client %q is keyed %q", name, key)
		}
	}
	key, client := principalKey(&sdk.Implementation{Name: "evil\x1b]0;x\x07 " + strings.Repeat("n", 500), Version: "1\n2"})
	if strings.ContainsAny(key+client, "\x1b\x07\n") || len(key) > 2*clientPartBytes+3 {
		t.Errorf("key %q, client %q", key, client)
	}
}

// A sessionless client's engine session closes once it has sent nothing
// for the session timeout, and opens again when it comes back.
func TestASessionlessClientsLeaseExpires(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.s = New(h.e, Options{Version: "test", Logger: testLog(t), SessionTimeout: 300 * time.Millisecond})
	sub := h.e.Bus().Subscribe(256)
	defer sub.Close()
	cs := h.connectAs("http", eraNew, "agent", nil)
	ok(t, cs, "list_notebooks", nil)
	wait := func(typ event.EventType) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case ev := <-sub.C():
				if ev.Type == typ && ev.Session != nil && ev.Session.ID == "@agent 1" {
					return
				}
			case <-deadline:
				t.Fatalf("no %s of @agent 1", typ)
			}
		}
	}
	wait(event.EvSessionOpened)
	wait(event.EvSessionClosed)
	ok(t, cs, "list_notebooks", nil)
	wait(event.EvSessionOpened)
}

// What the HTTP endpoint answers a stateless request, on the wire: the
// spec's codes for what is wrong with it, and the old handshake beside it.
func TestStatelessWire(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	url := h.endpoint()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
	post := func(headers map[string]string, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	v26 := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
	tests := []struct {
		name    string
		headers map[string]string
		body    string
		code    int
		want    []string
	}{
		{"discover", v26, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`, 200,
			[]string{`"supportedVersions":["2026-07-28","2025-11-25"`, `"resultType":"complete"`, `"tools"`, `"subscribe":true`}},
		{"_meta without the version header", nil, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`, 400, []string{"-32020"}},
		{"header and _meta differ", map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"},
			`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta + `}}`, 400, nil},
		{"an unknown version", map[string]string{"Mcp-Protocol-Version": "2027-01-01", "Mcp-Method": "tools/list"},
			`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, 400, []string{"-32022", "2026-07-28"}},
		{"no clientCapabilities", map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
			`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, 400, []string{"-32602"}},
		{"no Mcp-Method", map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{` + meta + `}}`, 400, []string{"-32020"}},
		{"Mcp-Name other than the body's", map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "read_cell"},
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_notebooks","arguments":{},` + meta + `}}`, 400, []string{"-32020"}},
		{"a Base64 Mcp-Name is decoded", map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "=?base64?bGlzdF9ub3RlYm9va3M=?="},
			`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_notebooks","arguments":{},` + meta + `}}`, 200, []string{`"resultType":"complete"`}},
		{"ping is gone", map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"}, `{"jsonrpc":"2.0","id":9,"method":"ping","params":{` + meta + `}}`, 404, []string{"-32601"}},
		{"resources/subscribe is gone", map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/subscribe"},
			`{"jsonrpc":"2.0","id":10,"method":"resources/subscribe","params":{"uri":"notebook://x",` + meta + `}}`, 404, []string{"-32601"}},
		{"the old handshake", nil, `{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, 200,
			[]string{`"protocolVersion":"2025-11-25"`}},
	}
	for _, tt := range tests {
		code, body := post(tt.headers, tt.body)
		if code != tt.code {
			t.Errorf("%s: HTTP %d, want %d: %s", tt.name, code, tt.code, body)
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the answer lacks %s: %s", tt.name, w, body)
			}
		}
	}
	// No GET stream in the stateless era.
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("a 2026-07-28 GET: HTTP %d", resp.StatusCode)
	}
}

// Every tool result on 2026-07-28 says resultType "complete", the ones this
// server makes itself too (a refusal before the call runs), which the SDK
// leaves without it and the TypeScript client 2.x rejects; a result of the
// old era stays as it was.
func TestEveryStatelessResultIsComplete(t *testing.T) {
	t.Parallel()
	for _, e := range bothEras {
		h := newHarness(t)
		h.e.Calls().SetApproval("all", time.Minute)
		cs := h.connectAs("http", e, "agent", nil) // no elicitation: refused at once
		res := callTool(t, cs, "list_notebooks", nil)
		raw, _ := res.MarshalJSON()
		if !res.IsError || strings.Contains(string(raw), "resultType") != (e == eraNew) {
			t.Errorf("%s: a refusal %s", e.name, raw)
		}
	}
}

// drained ends sub and returns every event it had not handed over.
func drained(sub *event.Subscription) []event.Event {
	var out []event.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range sub.C() {
			out = append(out, ev)
		}
	}()
	sub.Drain()
	<-done
	return out
}
