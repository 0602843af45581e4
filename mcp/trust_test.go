package mcp

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	testharness "github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// connectHost connects a client the way a stdio host does: over RunIO, on
// pipes, so that its session is the host's.
func (h *harness) connectHost(opts *sdk.ClientOptions) *sdk.ClientSession {
	h.t.Helper()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.s.RunIO(ctx, sr, sw) }()
	cs, err := testharness.NewClient("test-client", opts).Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, testharness.SessionOptions())
	if err != nil {
		cancel()
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

// A session that is not the stdio host's (here an in-memory one, as an HTTP
// one would be) is not asked to approve its own call, and the refusal says
// what would make its answer count; with TrustClientApproval it is asked.
func TestOnlyTheHostApprovesItsOwnCalls(t *testing.T) {
	t.Parallel()
	allow := func(context.Context, string) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
	}
	t.Run("untrusted", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		el := &elicitingClient{}
		cs := h.connectWith(el.options(allow))
		rel := approvalNotebook(t, h, cs, time.Minute)
		res := callTool(t, cs, "delete_cell", map[string]any{"cell_indices": []int{0}})
		if text := textOf(res); !res.IsError || !strings.Contains(text, "--trust-client-approval") {
			t.Fatalf("result (isError %v) %q", res.IsError, text)
		}
		if n := len(el.asked()); n != 0 {
			t.Fatalf("the untrusted client was asked %d times", n)
		}
		if !strings.Contains(string(h.file(rel)), `"a = 1"`) {
			t.Error("the refused delete changed the file")
		}
	})
	t.Run("trusted by the operator", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.s = New(h.e, Options{Version: "test", Images: true, Logger: testLog(t), TrustClientApproval: true})
		el := &elicitingClient{}
		cs := h.connectWith(el.options(allow))
		approvalNotebook(t, h, cs, time.Minute)
		res := callTool(t, cs, "delete_cell", map[string]any{"cell_indices": []int{0}})
		if res.IsError || len(el.asked()) != 1 {
			t.Fatalf("asked %d times; result %q", len(el.asked()), textOf(res))
		}
	})
}

// The stdio host is asked to confirm a pairing: the form wants the code,
// and what the person typed comes back; a host without elicitation cannot
// be asked, and says why before anything is sent.
func TestHostConfirmsPairing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if why := h.s.HostCanPair(); !strings.Contains(why, "not connected") {
		t.Fatalf("before the host connected: %q", why)
	}
	var question string
	var schema any
	h.connectHost(&sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		question, schema = req.Params.Message, req.Params.RequestedSchema
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"code": "K7Q4-HZ2M"}}, nil
	}})
	if why := h.s.HostCanPair(); why != "" {
		t.Fatalf("a host with elicitation cannot pair: %q", why)
	}
	typed, err := h.s.AskHostToPair(context.Background(), []string{"workbench 1, attached 14:02:11 (pid 4242: jupyter-mcp-server attach)"})
	if err != nil || typed != "K7Q4-HZ2M" {
		t.Fatalf("typed %q, %v", typed, err)
	}
	for _, want := range []string{"workbench 1, attached 14:02:11 (pid 4242: jupyter-mcp-server attach)", "type the code it shows", "decline: code running in a notebook"} {
		if !strings.Contains(question, want) {
			t.Errorf("the question %q lacks %q", question, want)
		}
	}
	if s, _ := schema.(map[string]any); s == nil || s["required"] == nil {
		t.Errorf("the form %v", schema)
	}

	h2 := newHarness(t)
	h2.connectHost(nil)
	if why := h2.s.HostCanPair(); !strings.Contains(why, "elicitation") {
		t.Fatalf("a host without elicitation: %q", why)
	}
	if _, err := h2.s.AskHostToPair(context.Background(), nil); err == nil {
		t.Fatal("a host without elicitation was asked")
	}
}
