package calls

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// A workbench that only watches neither decides nor keeps a held call from
// the person at the client: with only a watcher attached the client is
// asked (or, without a way to ask it, the call is refused at once); the
// header counts it apart.
func TestWatchersDoNotCountForApproval(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveAll, time.Hour)
	unwatch := h.e.AttachWatcher()
	if st := h.e.State(); st.Watchers != 1 || st.Workbenches != 0 {
		t.Fatalf("counts %+v", st)
	}
	r := wait(t, h.beginAsync(context.Background(), Start{ID: "x", Session: "s", Tool: "delete_cell"}))
	if !errors.Is(r.err, errNoApprover) {
		t.Fatalf("with only a watcher: %v", r.err)
	}
	asked := make(chan struct{}, 1)
	ask := func(ctx context.Context, _ *event.CallPreview) (ClientAnswer, error) {
		asked <- struct{}{}
		return ClientAnswer{Allow: true}, nil
	}
	r = wait(t, h.beginAsync(context.Background(), Start{ID: "y", Session: "s", Tool: "delete_cell", Ask: ask}))
	if r.err != nil {
		t.Fatal(r.err)
	}
	r.finish(Outcome{})
	select {
	case <-asked:
	default:
		t.Fatal("the client was not asked while only a watcher was attached")
	}
	unwatch()
	unwatch()
	detach := h.e.AttachWorkbench()
	if st := h.e.State(); st.Watchers != 0 || st.Workbenches != 1 {
		t.Fatalf("counts %+v", st)
	}
	detach()
	if st := h.e.State(); st.Workbenches != 0 {
		t.Fatalf("counts after detach %+v", st)
	}
}

// Every decided call says who decided it.
func TestDecidedBy(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveAll, time.Hour)
	defer h.e.AttachWorkbench()()

	res, _ := heldCall(t, h, Start{ID: "a", Session: "s", Tool: "delete_cell"})
	if err := h.e.Decide("a", Verdict{Allow: true, ForSession: true, By: "workbench 2, attached 14:02:11"}); err != nil {
		t.Fatal(err)
	}
	r := wait(t, res)
	if p := h.next(t, event.EvCallProgress).Call; p.DecidedBy != "workbench 2, attached 14:02:11" {
		t.Fatalf("allowed: %q", p.DecidedBy)
	}
	r.finish(Outcome{})
	if f := h.next(t, event.EvCallFinished).Call; f.DecidedBy != "workbench 2, attached 14:02:11" {
		t.Fatalf("finished: %q", f.DecidedBy)
	}
	// The rule that allowed the tool for the session lets the next call by.
	r = wait(t, h.beginAsync(context.Background(), Start{ID: "b", Session: "s", Tool: "delete_cell"}))
	r.finish(Outcome{})
	if f := h.next(t, event.EvCallFinished).Call; f.DecidedBy != "an allow rule: delete_cell for this session, set by workbench 2, attached 14:02:11" {
		t.Fatalf("by the rule: %q", f.DecidedBy)
	}

	res, _ = heldCall(t, h, Start{ID: "c", Session: "t", Tool: "delete_cell"})
	if err := h.e.Decide("c", Verdict{}); err != nil {
		t.Fatal(err)
	}
	wait(t, res)
	if f := h.next(t, event.EvCallFinished).Call; f.Status != event.CallDenied || f.DecidedBy != "a workbench" {
		t.Fatalf("denied: %+v", f)
	}

	h.e.SetApproval(ApproveAll, 50*time.Millisecond)
	wait(t, h.beginAsync(context.Background(), Start{ID: "d", Session: "t", Tool: "delete_cell"}))
	if f := h.next(t, event.EvCallFinished).Call; !strings.HasPrefix(f.DecidedBy, "no one: the approval timed out") {
		t.Fatalf("timed out: %q", f.DecidedBy)
	}
}
