package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// The call registry's tests are in engine/calls; these are the ones about
// what the core gives it: a held call's preview, computed by the engine,
// and the sessions the engine tells the bus of.

// callHarness is an engine with only its bus and call registry, and a
// subscription to the bus.
type callHarness struct {
	e   *Engine
	sub *event.Subscription
}

func newCallHarness(t *testing.T) *callHarness {
	t.Helper()
	bus := event.NewBus()
	e := &Engine{bus: bus}
	e.calls = calls.New(bus, calls.Options{ClientOf: e.clientOf})
	h := &callHarness{e: e, sub: bus.Subscribe(1000)}
	t.Cleanup(h.sub.Close)
	return h
}

// next returns the next event of type ty, skipping others.
func (h *callHarness) next(t *testing.T, ty event.EventType) event.Event {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-h.sub.C():
			if ev.Type == ty {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %v event within 5s", ty)
		}
	}
}

// begin begins c on a goroutine (it may be held) and returns its error
// when it returns.
func (h *callHarness) begin(c calls.Start) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, finish, err := h.e.Calls().Begin(context.Background(), c)
		if err == nil {
			finish(calls.Outcome{})
		}
		ch <- err
	}()
	return ch
}

// previewOf is the engine's preview of req, as mcp/ hands it to a call.
func previewOf(e *Engine, session string, req PreviewRequest) func(ctx context.Context) *event.CallPreview {
	return func(ctx context.Context) *event.CallPreview {
		p := e.Preview(ctx, session, req)
		return &p
	}
}

func waitErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("BeginCall did not return within 5s")
	}
	return nil
}

// The person at the client is shown the same preview a workbench would
// be: here, why there is none (no notebook in use).
func TestClientAskedWithPreview(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.Calls().SetApproval(calls.ApproveDestructive, time.Hour)
	asked := make(chan *event.CallPreview, 1)
	ask := func(ctx context.Context, p *event.CallPreview) (calls.ClientAnswer, error) {
		asked <- p
		return calls.ClientAnswer{Reason: "no"}, nil
	}
	res := h.begin(calls.Start{ID: "x", Tool: "delete_cell", Destructive: true, Ask: ask,
		Preview: previewOf(h.e, "", PreviewRequest{Op: PreviewDelete, Indices: []int{0}})})
	p := <-asked
	if p == nil || !strings.Contains(p.Problem, "notebook") {
		t.Errorf("the client was shown %+v", p)
	}
	if err := waitErr(t, res); err == nil {
		t.Fatal("a denied call ran")
	}
}

func TestHeldCallCarriesPreview(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.Calls().SetApproval(calls.ApproveAll, time.Hour)
	defer h.e.Calls().AttachWorkbench()()
	// No notebook is in use: the preview says so rather than nothing.
	res := h.begin(calls.Start{ID: "x", Session: "s", Tool: "delete_cell",
		Preview: previewOf(h.e, "s", PreviewRequest{Op: PreviewDelete, Indices: []int{0}})})
	held := h.next(t, event.EvCallHeld).Call
	if held.Preview == nil || !strings.Contains(held.Preview.Problem, "notebook") {
		t.Fatalf("held preview = %+v", held.Preview)
	}
	_ = h.e.Calls().Decide("x", calls.Verdict{Allow: false})
	waitErr(t, res)
	// A call without a preview request has none.
	res = h.begin(calls.Start{ID: "y", Tool: "list_files"})
	held = h.next(t, event.EvCallHeld).Call
	if held.Preview != nil {
		t.Fatalf("preview without a request: %+v", held.Preview)
	}
	_ = h.e.Calls().Decide("y", calls.Verdict{Allow: false})
	waitErr(t, res)
}

func TestSessionOpened(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SessionOpened("s9", "claude-code 1.0")
	if s := h.next(t, event.EvSessionOpened).Session; s.ID != "s9" || s.Client != "claude-code 1.0" {
		t.Errorf("session = %+v", s)
	}
}

func TestSessionClosedIsPublished(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SessionClosed("s9")
	if s := h.next(t, event.EvSessionClosed).Session; s == nil || s.ID != "s9" {
		t.Errorf("session = %+v", s)
	}
}
