package mcp

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	testharness "github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// Session semantics over streamable HTTP, with real go-sdk clients (each its
// own MCP session) against one server and a real Jupyter: see the README's
// "Sessions".

// httpSessions serves h over HTTP and opens sessions on it.
func httpSessions(t *testing.T, h *harness) func(name string) *sdk.ClientSession {
	web := httptest.NewServer(h.s.HTTPHandler())
	t.Cleanup(web.Close) // after the clients close (cleanups run last-in first-out)
	return func(name string) *sdk.ClientSession {
		t.Helper()
		cs, err := testharness.ConnectHTTP(context.Background(), name, web.URL, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
}

// currentOf is the notebook list_notebooks marks current for cs ("" none),
// and the text of that call.
func currentOf(t *testing.T, cs *sdk.ClientSession) (string, string) {
	t.Helper()
	text, m, _ := ok(t, cs, "list_notebooks", nil)
	items, _ := m["items"].([]any)
	for _, it := range items {
		row := it.(map[string]any)
		if row["Activate"] == "✓" {
			return row["Name"].(string), text
		}
	}
	return "", text
}

// shortID is how texts name a session to other sessions.
func shortID(cs *sdk.ClientSession) string { return cs.ID()[:8] }

// A new session starts on the notebook most recently activated on the
// server, so execute_cell and insert_execute_code_cell (which take no
// notebook_name) work after a reconnect; then it keeps its own.
func TestSessionsNewSessionStartsOnTheLastActivated(t *testing.T) {
	h := newHarness(t)
	connect := httpSessions(t, h)
	a := connect("agent-a")
	pa := h.writeNotebook("a.ipynb", "print(1 + 1)")
	pb := h.writeNotebook("b.ipynb", "print(2 + 2)")

	ok(t, a, "use_notebook", map[string]any{"notebook_name": "na", "notebook_path": pa})
	// Agent a reconnects: its new session is on na, and the two tools that
	// act on the current notebook only can be reached.
	a.Close()
	a2 := connect("agent-a")
	if cur, _ := currentOf(t, a2); cur != "na" {
		t.Fatalf("a reconnected session starts on %q, want na", cur)
	}
	if text, _, _ := ok(t, a2, "execute_cell", map[string]any{"cell_index": 0}); !strings.Contains(text, "2") {
		t.Errorf("execute_cell after a reconnect: %q", text)
	}

	// b starts on na too; a2 moves to nb, and b keeps na.
	b := connect("agent-b")
	ok(t, a2, "use_notebook", map[string]any{"notebook_name": "nb", "notebook_path": pb})
	if cur, _ := currentOf(t, b); cur != "na" {
		t.Fatalf("b's current notebook followed a's use_notebook: %q", cur)
	}
	ok(t, b, "insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": "print('from b')"})
	if fa, fb := string(h.file(pa)), string(h.file(pb)); !strings.Contains(fa, "from b") || strings.Contains(fb, "from b") {
		t.Errorf("b's insert_execute_code_cell landed in the wrong notebook:\na: %s\nb: %s", fa, fb)
	}

	// A third session starts on the most recent, nb; the others keep theirs.
	c := connect("agent-c")
	for _, s := range []struct {
		cs   *sdk.ClientSession
		want string
	}{{a2, "nb"}, {b, "na"}, {c, "nb"}} {
		if cur, _ := currentOf(t, s.cs); cur != s.want {
			t.Errorf("session %s is on %q, want %q", shortID(s.cs), cur, s.want)
		}
	}
	ok(t, c, "execute_cell", map[string]any{"cell_index": 0})
}

// unuse_notebook closes the notebook for every session, as the
// reference's does; the caller is told whose current notebook it also was,
// and each of those sessions is told on its next call (once).
func TestSessionsUnuseTellsTheOtherSessions(t *testing.T) {
	h := newHarness(t)
	connect := httpSessions(t, h)
	a := connect("agent-a")
	p := h.writeNotebook("shared.ipynb", "x = 1")
	ok(t, a, "use_notebook", map[string]any{"notebook_name": "shared", "notebook_path": p})
	b, c := connect("agent-b"), connect("agent-c")
	for _, cs := range []*sdk.ClientSession{b, c} {
		if cur, _ := currentOf(t, cs); cur != "shared" {
			t.Fatalf("session %s starts on %q, want shared", shortID(cs), cur)
		}
	}

	text, _, _ := ok(t, b, "unuse_notebook", map[string]any{"notebook_name": "shared"})
	t.Logf("unuse_notebook -> %s", text)
	for _, other := range []*sdk.ClientSession{a, c} {
		if !strings.Contains(text, shortID(other)) {
			t.Errorf("the answer does not name session %s: %s", shortID(other), text)
		}
	}
	if strings.Contains(text, shortID(b)) || strings.Contains(text, a.ID()) {
		t.Errorf("the answer names the caller, or a whole session id: %s", text)
	}

	// a's next call (any tool) carries the notice, naming b; the one after
	// does not.
	cur, listText := currentOf(t, a)
	t.Logf("a's next call -> %s", listText)
	if cur != "" || !strings.Contains(listText, "was closed") || !strings.Contains(listText, shortID(b)+" (agent-b") || !strings.Contains(listText, "use_notebook") {
		t.Errorf("a's next call does not say b closed its notebook: %s", listText)
	}
	if _, again := currentOf(t, a); strings.Contains(again, "was closed") {
		t.Errorf("the notice came twice: %s", again)
	}

	// c's next call is execute_cell: its refusal says what happened, once,
	// and what to do.
	refusal := fails(t, c, "execute_cell", map[string]any{"cell_index": 0}, "closed its notebook 'shared'")
	if strings.Count(refusal, "shared") != 1 || !strings.Contains(refusal, "use_notebook") {
		t.Errorf("c's refusal: %s", refusal)
	}
	fails(t, c, "execute_cell", map[string]any{"cell_index": 0}, "this session has no current notebook; pass notebook_name, or call use_notebook first")

	// The caller's own session was told in its answer, not again.
	if _, bt := currentOf(t, b); strings.Contains(bt, "was closed") {
		t.Errorf("the caller got a notice of its own unuse: %s", bt)
	}
}

// connect_to_jupyter to the server in use (same URL and token) changes
// nothing and says so; to another server it says which notebooks it closed
// and whose, shuts down the kernels this process started, and the other
// sessions are told on their next call.
func TestSessionsConnectToJupyter(t *testing.T) {
	h := newHarness(t)
	connect := httpSessions(t, h)
	a := connect("agent-a")
	p := h.writeNotebook("k.ipynb", "y = 2")
	ok(t, a, "use_notebook", map[string]any{"notebook_name": "k", "notebook_path": p})
	_, m, _ := ok(t, a, "list_notebooks", nil)
	kernelID := m["items"].([]any)[0].(map[string]any)["Kernel_ID"].(string)
	b, c := connect("agent-b"), connect("agent-c")
	pc := h.writeNotebook("c.ipynb", "z = 3")
	ok(t, c, "use_notebook", map[string]any{"notebook_name": "ck", "notebook_path": pc})

	same, _, _ := ok(t, b, "connect_to_jupyter", map[string]any{"jupyter_url": h.srv.URL, "jupyter_token": h.srv.Token})
	t.Logf("same server -> %s", same)
	if !strings.Contains(same, "Already connected") || !strings.Contains(same, "nothing changed") || strings.Contains(same, h.srv.Token) {
		t.Errorf("connect to the same server: %s", same)
	}
	if cur, text := currentOf(t, a); cur != "k" || strings.Contains(text, "closed") {
		t.Fatalf("a connect to the same server took a's notebook: %q %s", cur, text)
	}
	ok(t, a, "execute_cell", map[string]any{"cell_index": 0})

	// The same Jupyter under another name is another server to us.
	other := strings.Replace(h.srv.URL, "127.0.0.1", "localhost", 1)
	text, _, _ := ok(t, b, "connect_to_jupyter", map[string]any{"jupyter_url": other, "jupyter_token": h.srv.Token})
	t.Logf("switch -> %s", text)
	for _, want := range []string{
		"Successfully connected to Jupyter server at " + other,
		"'k' (" + p + "), the current notebook of this session and of session " + shortID(a) + " (agent-a",
		"'ck' (" + pc + "), the current notebook of session " + shortID(c) + " (agent-c",
		"kernel " + kernelID + " shut down",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the switch's answer lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, h.srv.Token) {
		t.Errorf("the answer holds the token: %s", text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.srv.Client().GetKernel(ctx, kernelID); !jupyter.IsNotFound(err) {
		t.Errorf("kernel %s this server started still runs after the switch: %v", kernelID, err)
	}
	for _, s := range []struct {
		cs *sdk.ClientSession
		nb string
	}{{a, "k"}, {c, "ck"}} {
		cur, note := currentOf(t, s.cs)
		if cur != "" || !strings.Contains(note, "'"+s.nb+"'") || !strings.Contains(note, "switched to the Jupyter server at "+other) || !strings.Contains(note, shortID(b)) {
			t.Errorf("session %s's next call after the switch: %q %s", shortID(s.cs), cur, note)
		}
	}
	if _, bt := currentOf(t, b); strings.Contains(bt, "was closed") {
		t.Errorf("the caller got a notice of its own switch: %s", bt)
	}
	// Everyone works on the new server.
	ok(t, a, "use_notebook", map[string]any{"notebook_name": "k", "notebook_path": p})
	ok(t, a, "execute_cell", map[string]any{"cell_index": 0})
}
