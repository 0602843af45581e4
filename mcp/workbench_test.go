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

// finishedCall waits for the call.finished event of a call that ok
// accepts, and returns the events of that call seen on the way.
func finishedCall(t *testing.T, sub *event.Subscription, ok func(*event.CallEvent) bool) (started, finished *event.CallEvent) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev := <-sub.C():
			if ev.Call == nil || !ok(ev.Call) {
				continue
			}
			switch ev.Type {
			case event.EvCallStarted:
				started = ev.Call
			case event.EvCallHeld:
				t.Fatalf("the call was held: %+v", ev.Call)
			case event.EvCallFinished:
				return started, ev.Call
			}
		case <-timeout:
			t.Fatal("the call never finished")
		}
	}
}

// A resend runs through this server as the workbench's own session: it is
// observed like any call (session "workbench", the call it resends named),
// its arguments go through the checker a held call's edit goes through, it
// is not held by pause or approval (the person asked for it), and a call
// whose secret was redacted is not resent as it is.
func TestResendRunsAsTheWorkbenchSession(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	sub := h.e.Bus().Subscribe(4096)
	defer sub.Close()

	if err := h.e.Calls().Resend(calls.Resend{Of: "c-x", Tool: "execute_code", Args: json.RawMessage(`{"code":"1"}`)}); err == nil ||
		!strings.Contains(err.Error(), "not available") {
		t.Fatalf("resend without a caller: %v", err)
	}
	wc := h.s.WorkbenchCaller()
	defer wc.Close()
	h.e.Calls().SetWorkbenchCaller(wc)
	if err := h.e.Calls().CanResend(); err != nil {
		t.Fatal(err)
	}

	// The workbench's session starts on the notebook most recently
	// activated, as any new session does: its execute_code runs there.
	path := h.writeNotebook("resend.ipynb", "x = 1")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "resend", "notebook_path": path})
	ok(t, cs, "execute_code", map[string]any{"code": "1+1", "timeout": 30})
	_, orig := finishedCall(t, sub, func(c *event.CallEvent) bool { return c.Tool == "execute_code" })
	if orig.Session == calls.WorkbenchSession || !strings.Contains(orig.Text, "2") {
		t.Fatalf("the agent's call: %+v", orig)
	}

	// The person's edit is checked against the input schema first: a
	// refused one sends nothing.
	for _, bad := range []struct{ tool, args, want string }{
		{"execute_code", `{"code": 42}`, "code"},
		{"execute_code", `{"code": "2+2", "timeout": -3}`, "timeout"},
		{"execute_code", `[1]`, "JSON object"},
		{"no_such_tool", `{}`, "no tool named"},
		{"connect_to_jupyter", `{"jupyter_url": "http://localhost:8888", "jupyter_token": "[redacted]"}`, "cannot be resent as is"},
		{"connect_to_jupyter", `{"jupyter_url": "http://localhost:8888/?token=[redacted]"}`, "cannot be resent as is"},
	} {
		err := h.e.Calls().Resend(calls.Resend{Of: orig.ID, Tool: bad.tool, Args: json.RawMessage(bad.args)})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("resend %s %s: %v, want an error saying %q", bad.tool, bad.args, err, bad.want)
		}
	}

	// Pause and approval hold the agents' calls, not the person's own.
	defer h.e.Calls().AttachWorkbench()()
	h.e.Calls().SetApproval(calls.ApproveAll, time.Minute)
	h.e.Calls().SetPaused(true)
	if err := h.e.Calls().Resend(calls.Resend{Of: orig.ID, Tool: "execute_code", Args: json.RawMessage(`{"code": "2+2", "timeout": 30}`)}); err != nil {
		t.Fatal(err)
	}
	started, resent := finishedCall(t, sub, func(c *event.CallEvent) bool { return c.Session == calls.WorkbenchSession })
	if started == nil || started.ResendOf != orig.ID || resent.ResendOf != orig.ID || resent.Tool != "execute_code" {
		t.Fatalf("resent call: started %+v finished %+v", started, resent)
	}
	if resent.Status != event.CallOK || !strings.Contains(resent.Text, "4") || strings.Contains(resent.Text, "2") {
		t.Fatalf("the resent call's result: %s %q", resent.Status, resent.Text)
	}
	if resent.SchemaOK == nil || !*resent.SchemaOK || len(resent.Structured) == 0 {
		t.Fatalf("the resent call's result was not shaped and checked like any: %+v", resent)
	}
	if string(resent.Args) != `{"code":"2+2","timeout":30}` {
		t.Fatalf("the resent call's arguments: %s", resent.Args)
	}
	h.e.Calls().SetPaused(false)
}

// Only the workbench's own session may name a call it resends: an agent
// that sets the same _meta key gets an ordinary call.
func TestResendOfIsTheWorkbenchSessionsOnly(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	sub := h.e.Bus().Subscribe(1024)
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_kernels", Arguments: map[string]any{}, Meta: sdk.Meta{resendOfKey: "c-someone-else"}})
	if err != nil || res.IsError {
		t.Fatal(err, res)
	}
	_, c := finishedCall(t, sub, func(c *event.CallEvent) bool { return c.Tool == "list_kernels" })
	if c.ResendOf != "" || c.Session == calls.WorkbenchSession {
		t.Fatalf("an agent's call: %+v", c)
	}
}
