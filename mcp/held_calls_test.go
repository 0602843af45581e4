package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// heldEvent waits for the next call.held event of tool that is waiting for
// approval.
func heldEvent(t *testing.T, sub *event.Subscription, tool string) *event.CallEvent {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-sub.C():
			if ev.Type == event.EvCallHeld && ev.Call != nil && ev.Call.Tool == tool && strings.Contains(ev.Call.Progress, "approval") {
				return ev.Call
			}
		case <-timeout:
			t.Fatalf("no held %s call", tool)
		}
	}
}

func callAsync(cs *sdk.ClientSession, name string, args map[string]any) <-chan *sdk.CallToolResult {
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		res, _ := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		done <- res
	}()
	return done
}

func answerOf(t *testing.T, done <-chan *sdk.CallToolResult) *sdk.CallToolResult {
	t.Helper()
	select {
	case res := <-done:
		if res == nil {
			t.Fatal("the call failed at the protocol level")
		}
		return res
	case <-time.After(60 * time.Second):
		t.Fatal("the call never answered")
	}
	return nil
}

// With approval on and a workbench watching, a held call carries its
// preview; a denial's reason reaches the agent; an edited call runs with
// the edit and says so; a bad edit is refused and the call stays held.
func TestApprovalWithTheFactsInView(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("approve.ipynb", "x = 1\ny = 2", "print(x)")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "approve", "notebook_path": path})
	sub := h.e.Bus().Subscribe(1024)
	defer sub.Close()
	defer h.e.Calls().AttachWorkbench()()
	h.e.Calls().SetApproval(calls.ApproveAll, time.Minute)

	// The preview of an edit is its diff, with the client named.
	done := callAsync(cs, "edit_cell_source", map[string]any{"cell_index": 0, "old_string": "y = 2", "new_string": "y = 20"})
	held := heldEvent(t, sub, "edit_cell_source")
	p := held.Preview
	if p == nil || p.Problem != "" || !strings.Contains(p.Diff, "-y = 2") || !strings.Contains(p.Diff, "+y = 20") ||
		p.Notebook != "approve" || !strings.Contains(p.Client, "test-client") {
		t.Fatalf("edit preview: %+v", p)
	}
	if !held.Editable {
		t.Fatal("the held call is not editable")
	}
	// Denied with a reason: the agent reads it.
	if err := h.e.Calls().Decide(held.ID, calls.Verdict{Reason: "y must stay 2, the plot below depends on it"}); err != nil {
		t.Fatal(err)
	}
	res := answerOf(t, done)
	want := "Error executing tool edit_cell_source: the person supervising this server denied this call to edit_cell_source in the workbench; it was not run. Their reason: y must stay 2, the plot below depends on it"
	if !res.IsError || textOf(res) != want {
		t.Fatalf("denied with a reason: %v %q, want %q", res.IsError, textOf(res), want)
	}
	if strings.Contains(string(h.file(path)), "y = 20") {
		t.Fatal("the denied edit reached the file")
	}

	// A bad index: the preview says so plainly.
	done = callAsync(cs, "delete_cell", map[string]any{"cell_indices": []int{5}})
	held = heldEvent(t, sub, "delete_cell")
	if held.Preview == nil || !strings.Contains(held.Preview.Problem, "5") || len(held.Preview.Cells) != 0 {
		t.Fatalf("bad index preview: %+v", held.Preview)
	}
	_ = h.e.Calls().Decide(held.ID, calls.Verdict{Allow: false})
	answerOf(t, done)

	// Edited: the schema is checked first, then the edited code runs and
	// the agent is told which argument the person changed, and to what.
	done = callAsync(cs, "execute_code", map[string]any{"code": "print('from the agent')", "timeout": 30})
	held = heldEvent(t, sub, "execute_code")
	if held.Preview == nil || held.Preview.Code != "print('from the agent')" || !strings.Contains(held.Preview.What, "run code on kernel") {
		t.Fatalf("code preview: %+v", held.Preview)
	}
	err := h.e.Calls().Decide(held.ID, calls.Verdict{Allow: true, Args: json.RawMessage(`{"code": 42, "timeout": 30}`)})
	if err == nil || !strings.Contains(err.Error(), "still held") || !strings.Contains(err.Error(), "code") {
		t.Fatalf("bad edit: %v", err)
	}
	err = h.e.Calls().Decide(held.ID, calls.Verdict{Allow: true, Args: json.RawMessage(`{"code": "print('x')", "timeout": -5}`)})
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("edit with a negative timeout: %v", err)
	}
	if err := h.e.Calls().Decide(held.ID, calls.Verdict{Allow: true, Args: json.RawMessage(`{"code": "print('from the person')", "timeout": 30}`)}); err != nil {
		t.Fatal(err)
	}
	res = answerOf(t, done)
	text := textOf(res)
	if res.IsError || !strings.Contains(text, "from the person") || strings.Contains(text, "from the agent") ||
		!strings.Contains(text, `edited this call's arguments before it ran (changed code to "print('from the person')")`) {
		t.Fatalf("edited call answered %v: %s", res.IsError, text)
	}
}

// A value the workbench showed redacted and the person left alone is the
// agent's original, not the placeholder.
func TestCheckEditKeepsRedactedValues(t *testing.T) {
	var d *toolDef
	for _, td := range allTools() {
		if td.name == "connect_to_jupyter" {
			d = td
		}
	}
	args := json.RawMessage(`{"jupyter_url":"http://h:8888","jupyter_token":"s3cret"}`)
	shown := redactArgs(args)
	if strings.Contains(string(shown), "s3cret") {
		t.Fatalf("not redacted: %s", shown)
	}
	var m map[string]any
	_ = json.Unmarshal(shown, &m)
	m["jupyter_url"] = "http://other:8888"
	edited, _ := json.Marshal(m)
	out, err := checkEdit(d, args, shown, edited)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"jupyter_token":"s3cret"`) || !strings.Contains(string(out), "other:8888") {
		t.Fatalf("checked = %s", out)
	}
	if note := editNote(args, out); !strings.Contains(note, `(changed jupyter_url to "http://other:8888")`) || strings.Contains(note, "s3cret") {
		t.Fatalf("note = %q", note)
	}
	// What the person typed is repeated, but never a secret: a token they
	// set, or one in a URL.
	out = json.RawMessage(`{"jupyter_url":"http://h:8888/?token=n3wsecret","jupyter_token":"n3wtoken","extra":[1,2]}`)
	note := editNote(args, out)
	if strings.Contains(note, "n3w") || !strings.Contains(note, "changed jupyter_token to [redacted], jupyter_url to") ||
		!strings.Contains(note, "added extra = [1,2]") {
		t.Fatalf("note = %q", note)
	}
	if note := editNote(json.RawMessage(`{"code":"a","kernel_id":"k"}`), json.RawMessage(`{"code":"`+strings.Repeat("x", 3000)+`"}`)); !strings.Contains(note, "more bytes)") ||
		!strings.Contains(note, "removed kernel_id") || len(note) > 2500 {
		t.Fatalf("long note (%d bytes): %.300q", len(note), note)
	}
}
