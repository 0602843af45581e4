package calls

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// A call held again shows a fresh preview saying what changed, takes no
// edit, and is denied or allowed like any held call; a denial ends it as
// denied; the preview it was allowed on is what ShownOf gives the engine.
func TestRehold(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveExecute, time.Hour)
	defer h.e.AttachWorkbench()()
	previews := 0
	start := Start{ID: "x", Session: "s", Tool: "execute_cell", RunsCode: true,
		Check: func(a json.RawMessage) (json.RawMessage, error) { return a, nil },
		Preview: func(context.Context) *event.CallPreview {
			previews++
			return &event.CallPreview{Code: strings.Repeat("v", previews), Bound: []event.BoundFact{{What: "the source", Value: strings.Repeat("v", previews)}}}
		}}
	res, held := heldCall(t, h, start)
	if !held.Editable || held.Preview.Changed != "" {
		t.Fatalf("first hold: %+v", held)
	}
	firstUntil := held.HeldUntil
	if err := h.e.Decide("x", Verdict{Allow: true, By: "the first workbench"}); err != nil {
		t.Fatal(err)
	}
	r := wait(t, res)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if p := ShownOf(r.ctx); p == nil || p.Code != "v" {
		t.Fatalf("ShownOf = %+v, want the preview the call was allowed on", p)
	}

	again := make(chan error, 1)
	go func() { again <- h.e.Rehold(r.ctx, "the source of cell c1") }()
	held = h.next(t, event.EvCallHeld).Call
	if held.Preview == nil || held.Preview.Code != "vv" || held.Preview.Changed != "the source of cell c1" ||
		!strings.Contains(held.Progress, "held again") || !strings.Contains(held.Progress, "approval") {
		t.Fatalf("held again: %+v %+v", held, held.Preview)
	}
	if held.Editable {
		t.Fatal("a call held again offers an edit the running call cannot take")
	}
	// Held again, it counts down afresh to its denial (the card shows it).
	if !held.HeldUntil.After(firstUntil) || time.Until(held.HeldUntil) < 59*time.Minute {
		t.Fatalf("held again until %v, first held until %v: not a fresh countdown", held.HeldUntil, firstUntil)
	}
	if err := h.e.Decide("x", Verdict{Allow: true, Args: json.RawMessage(`{}`)}); err == nil || !strings.Contains(err.Error(), "cannot be edited") {
		t.Fatalf("edit of a call held again: %v", err)
	}
	if err := h.e.Decide("x", Verdict{Allow: true, By: "the second workbench"}); err != nil {
		t.Fatal(err)
	}
	if err := <-again; err != nil {
		t.Fatalf("allowed again: %v", err)
	}
	// Who decided is who allowed it again, not who allowed what it no
	// longer does.
	if p := h.next(t, event.EvCallProgress).Call; p.DecidedBy != "the second workbench" {
		t.Fatalf("allowed again, decided by %q", p.DecidedBy)
	}
	if p := ShownOf(r.ctx); p == nil || p.Code != "vv" {
		t.Fatalf("ShownOf after the second allow = %+v", p)
	}

	go func() { again <- h.e.Rehold(r.ctx, "where the code runs") }()
	h.next(t, event.EvCallHeld)
	if err := h.e.Decide("x", Verdict{By: "the third workbench"}); err != nil {
		t.Fatal(err)
	}
	err := <-again
	if err == nil || !isUserError(err) || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("denied when held again: %v", err)
	}
	r.finish(Outcome{IsError: true, Text: err.Error()})
	if f := h.next(t, event.EvCallFinished).Call; f.Status != event.CallDenied || f.DecidedBy != "the third workbench" {
		t.Fatalf("a call denied when held again finished %s, decided by %q; want denied, by the third workbench", f.Status, f.DecidedBy)
	}
}

// A call whose preview keeps changing is refused after MaxReholds holds
// again; one the approval mode no longer holds runs unbound.
func TestReholdLimits(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveExecute, time.Hour)
	defer h.e.AttachWorkbench()()
	start := Start{ID: "x", Session: "s", Tool: "execute_code", RunsCode: true,
		Preview: func(context.Context) *event.CallPreview { return &event.CallPreview{What: "run"} }}
	res, _ := heldCall(t, h, start)
	_ = h.e.Decide("x", Verdict{Allow: true})
	r := wait(t, res)
	for i := 0; i < MaxReholds; i++ {
		again := make(chan error, 1)
		go func() { again <- h.e.Rehold(r.ctx, "the source") }()
		h.next(t, event.EvCallHeld)
		_ = h.e.Decide("x", Verdict{Allow: true})
		if err := <-again; err != nil {
			t.Fatalf("hold again %d: %v", i+1, err)
		}
	}
	err := h.e.Rehold(r.ctx, "the source")
	if err == nil || !isUserError(err) || !strings.Contains(err.Error(), "changed 4 times") {
		t.Fatalf("held again once too often: %v", err)
	}
	r.finish(Outcome{IsError: true})
	if f := h.next(t, event.EvCallFinished).Call; f.Status != event.CallDenied || !strings.HasPrefix(f.DecidedBy, "no one") {
		t.Fatalf("refused after changing too often: %s, decided by %q", f.Status, f.DecidedBy)
	}

	res, _ = heldCall(t, h, Start{ID: "y", Session: "s", Tool: "execute_code", RunsCode: true, Preview: start.Preview})
	_ = h.e.Decide("y", Verdict{Allow: true})
	r = wait(t, res)
	h.e.SetApproval(ApproveOff, time.Hour)
	if err := h.e.Rehold(r.ctx, "the source"); err != nil || ShownOf(r.ctx) != nil {
		t.Fatalf("approval off: Rehold = %v, ShownOf = %+v; want nil, nil", err, ShownOf(r.ctx))
	}
	r.finish(Outcome{})
	if f := h.next(t, event.EvCallFinished).Call; !strings.Contains(f.DecidedBy, "approval was off") {
		t.Fatalf("run unbound with approval off: decided by %q", f.DecidedBy)
	}
}
