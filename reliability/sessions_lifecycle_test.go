package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// The binary keeps at most --max-sessions HTTP sessions: a third client on
// a cap of two closes the least recently used session, whose next request
// is told, with a 404 (so clients initialize again) and a JSON-RPC error
// naming the cap; the other two go on working.
func TestSessionCapEvictsLeastRecentlyUsed(t *testing.T) {
	p, _ := startShared(t, "cap-token", "--max-sessions", "2")
	first, second, third := newRPC(t, p.Endpoint, p.Token), newRPC(t, p.Endpoint, p.Token), newRPC(t, p.Endpoint, p.Token)
	first.initialize(t)
	second.initialize(t)
	listTools := func(r *rpc) (int, string, []map[string]any) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		code, body, msgs, err := r.post(ctx, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return code, body, msgs
	}
	// The first is used after the second: the second is now the least
	// recently used.
	if code, body, _ := listTools(first); code != http.StatusOK {
		t.Fatalf("first session: %d %s", code, body)
	}
	third.initialize(t)

	code, body, msgs := listTools(second)
	if code != http.StatusNotFound {
		t.Fatalf("evicted session got %d, want 404: %s", code, body)
	}
	if len(msgs) != 1 || msgs[0]["error"] == nil || fmt.Sprint(msgs[0]["id"]) != "7" {
		t.Fatalf("evicted session's answer is no JSON-RPC error for its request: %s", body)
	}
	msg := fmt.Sprint(msgs[0]["error"].(map[string]any)["message"])
	for _, want := range []string{"session expired", "more than 2 sessions were live", "--max-sessions", "least recently used", "initialize"} {
		if !strings.Contains(msg, want) {
			t.Errorf("eviction message %q does not say %q", msg, want)
		}
	}
	t.Logf("evicted: %d %s", code, body)
	for name, r := range map[string]*rpc{"first": first, "third": third} {
		if code, body, _ := listTools(r); code != http.StatusOK {
			t.Errorf("%s session after the eviction: %d %s", name, code, body)
		}
	}
	// Initializing again is the way back.
	second.session = ""
	second.initialize(t)
	if code, body, _ := listTools(second); code != http.StatusOK {
		t.Errorf("re-initialized session: %d %s", code, body)
	}
}

// sseEvent is one server-sent event.
type sseEvent struct{ id, name, data string }

// readEvents reads events from an SSE body and sends them on a channel,
// closed at the end of the body.
func readEvents(body io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id:"):
				ev.id = strings.TrimSpace(line[3:])
			case strings.HasPrefix(line, "event:"):
				ev.name = strings.TrimSpace(line[6:])
			case strings.HasPrefix(line, "data:"):
				ev.data += strings.TrimSpace(line[5:])
			}
		}
	}()
	return ch
}

// A client whose connection drops during a long execution gets the result
// by resuming the stream: GET with Last-Event-ID (the priming event's id)
// replays what it missed, the tool result included.
func TestResumeAfterDroppedConnection(t *testing.T) {
	p, srv := startShared(t, "resume-token")
	dir := srv.Subdir(t)
	r := newRPC(t, p.Endpoint, p.Token)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + harness.ProtocolVersion +
		`","capabilities":{},"clientInfo":{"name":"resume","version":"1"}}}`
	if code, body, _, err := r.post(ctx, []byte(init), nil); err != nil || code != http.StatusOK {
		t.Fatalf("initialize: %d %v %s", code, err, body)
	}
	if code, body, _, err := r.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil); err != nil || code/100 != 2 {
		t.Fatalf("initialized: %d %v %s", code, err, body)
	}
	use := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"use_notebook","arguments":{"notebook_name":"resume","notebook_path":%q,"mode":"create"}}}`, dir+"/resume.ipynb")
	if code, body, _, err := r.post(ctx, []byte(use), nil); err != nil || code != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Fatalf("use_notebook: %d %v %s", code, err, body)
	}

	// The call, on a connection of its own that the test drops after the
	// first event.
	callCtx, drop := context.WithCancel(ctx)
	defer drop()
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"import time; time.sleep(3); print(\"done\")"}}}`
	req, _ := http.NewRequestWithContext(callCtx, http.MethodPost, p.Endpoint, strings.NewReader(call))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+p.Token)
	req.Header.Set("Mcp-Session-Id", r.session)
	req.Header.Set("Mcp-Protocol-Version", harness.ProtocolVersion)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("execute_code: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readEvents(resp.Body)
	prime, ok := <-events
	if !ok || prime.id == "" {
		t.Fatalf("no priming event with an id: %+v", prime)
	}
	t.Logf("priming event: id=%q event=%q", prime.id, prime.name)
	drop()
	resp.Body.Close()
	for ev := range events {
		if strings.Contains(ev.data, `"id":3`) {
			t.Fatalf("the result arrived before the drop; the test proves nothing: %s", ev.data)
		}
	}

	// Resume. Until the server has seen the drop, the stream is still
	// attached to the dropped request and a resume answers 409 Conflict:
	// a client tries again.
	var gresp *http.Response
	for {
		get, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.Endpoint, nil)
		get.Header.Set("Accept", "text/event-stream")
		get.Header.Set("Authorization", "Bearer "+p.Token)
		get.Header.Set("Mcp-Session-Id", r.session)
		get.Header.Set("Mcp-Protocol-Version", harness.ProtocolVersion)
		get.Header.Set("Last-Event-ID", prime.id)
		gresp, err = (&http.Client{Transport: tr}).Do(get)
		if err != nil {
			t.Fatal(err)
		}
		if gresp.StatusCode != http.StatusConflict {
			break
		}
		gresp.Body.Close()
		select {
		case <-ctx.Done():
			t.Fatal("the stream stayed attached to the dropped request")
		case <-time.After(50 * time.Millisecond):
		}
	}
	defer gresp.Body.Close()
	if gresp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(gresp.Body)
		t.Fatalf("GET with Last-Event-ID: %d %s", gresp.StatusCode, b)
	}
	for ev := range readEvents(gresp.Body) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result *struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(ev.data), &m) != nil || string(m.ID) != "3" || m.Result == nil {
			continue
		}
		var text bytes.Buffer
		for _, c := range m.Result.Content {
			text.WriteString(c.Text)
		}
		if m.Result.IsError || !strings.Contains(text.String(), "done") {
			t.Fatalf("replayed result: error=%v %q", m.Result.IsError, text.String())
		}
		t.Logf("replayed result (event %s): %q", ev.id, text.String())
		return
	}
	t.Fatal("the resumed stream ended without the tool result")
}

// kernelIDs is the set of kernels srv runs.
func kernelIDs(t *testing.T, c *jupyter.Client) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ks, err := c.ListKernels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, k := range ks {
		ids[k.ID] = true
	}
	return ids
}

// kernelOf is the kernel id use_notebook's answer names.
func kernelOf(t *testing.T, text string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "Connected to kernel '")
	id, _, ok2 := strings.Cut(rest, "'")
	if !ok || !ok2 || id == "" {
		t.Fatalf("no kernel id in %q", text)
	}
	return id
}

// Against an external Jupyter, kernels this process started are shut down
// when their notebook is released and when the process exits; a kernel it
// attached to by id is left running.
func TestKernelsStartedAreShutDown(t *testing.T) {
	p, srv := startShared(t, "kernels-token")
	c := srv.Client()
	dir := srv.Subdir(t)
	theirs := srv.StartKernel(t)
	cs := p.Connect(t)

	text, _ := ok(t, cs, "use_notebook", map[string]any{"notebook_name": "a", "notebook_path": dir + "/a.ipynb", "mode": "create"})
	released := kernelOf(t, text)
	text, _ = ok(t, cs, "use_notebook", map[string]any{"notebook_name": "b", "notebook_path": dir + "/b.ipynb", "mode": "create"})
	atExit := kernelOf(t, text)
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "c", "notebook_path": dir + "/c.ipynb", "mode": "create", "kernel_id": theirs.ID})
	if ids := kernelIDs(t, c); !ids[released] || !ids[atExit] || !ids[theirs.ID] {
		t.Fatalf("kernels before: %v", ids)
	}

	text, _ = ok(t, cs, "unuse_notebook", map[string]any{"notebook_name": "a"})
	if !strings.Contains(text, "was shut down") {
		t.Errorf("unuse_notebook of a notebook on a kernel we started: %q", text)
	}
	if kernelIDs(t, c)[released] {
		t.Errorf("kernel %s is still running after its notebook was released", released)
	}
	text, _ = ok(t, cs, "unuse_notebook", map[string]any{"notebook_name": "c"})
	if !strings.Contains(text, "keeps running") {
		t.Errorf("unuse_notebook of a notebook on a kernel attached by id: %q", text)
	}
	if !kernelIDs(t, c)[theirs.ID] {
		t.Fatalf("kernel %s, attached by id, was shut down", theirs.ID)
	}
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "c", "notebook_path": dir + "/c.ipynb", "kernel_id": theirs.ID})

	p.Stop(60 * time.Second)
	ids := kernelIDs(t, c)
	if ids[atExit] {
		t.Errorf("kernel %s, started by the process, outlived it", atExit)
	}
	if !ids[theirs.ID] {
		t.Errorf("kernel %s, attached by id, was shut down at exit", theirs.ID)
	}
}

// --keep-kernels leaves the kernels this process started running, on
// release and at exit.
func TestKeepKernelsLeavesThemRunning(t *testing.T) {
	p, srv := startShared(t, "keep-token", "--keep-kernels")
	c := srv.Client()
	dir := srv.Subdir(t)
	cs := p.Connect(t)
	text, _ := ok(t, cs, "use_notebook", map[string]any{"notebook_name": "a", "notebook_path": dir + "/a.ipynb", "mode": "create"})
	released := kernelOf(t, text)
	text, _ = ok(t, cs, "use_notebook", map[string]any{"notebook_name": "b", "notebook_path": dir + "/b.ipynb", "mode": "create"})
	atExit := kernelOf(t, text)
	text, _ = ok(t, cs, "unuse_notebook", map[string]any{"notebook_name": "a"})
	if !strings.Contains(text, "keeps running") {
		t.Errorf("unuse_notebook with --keep-kernels: %q", text)
	}
	p.Stop(60 * time.Second)
	ids := kernelIDs(t, c)
	if !ids[released] || !ids[atExit] {
		t.Errorf("with --keep-kernels, kernels %s (released) and %s (at exit) should run: %v", released, atExit, ids)
	}
}
