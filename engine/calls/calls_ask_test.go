package calls

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// askStub is the person at the client: it records that it was asked and
// answers what the test tells it to, or waits for the context.
type askStub struct {
	asked    chan *event.CallPreview
	answer   chan askReply
	returned chan struct{} // one value per ask that returned
}

type askReply struct {
	a   ClientAnswer
	err error
}

func newAskStub() *askStub {
	return &askStub{asked: make(chan *event.CallPreview, 1), answer: make(chan askReply, 1), returned: make(chan struct{}, 1)}
}

func (s *askStub) ask(ctx context.Context, preview *event.CallPreview) (ClientAnswer, error) {
	defer func() { s.returned <- struct{}{} }()
	s.asked <- preview
	select {
	case r := <-s.answer:
		return r.a, r.err
	case <-ctx.Done():
		return ClientAnswer{}, ctx.Err()
	}
}

func TestCallApprovalThroughClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		timeout time.Duration
		reply   *askReply // nil: no answer
		act     func(h *callHarness)
		wantErr string // "" = the call runs
	}{
		{"allowed", 0, &askReply{a: ClientAnswer{Allow: true}}, nil, ""},
		{"declined with a reason", 0, &askReply{a: ClientAnswer{Reason: "  not\nthat cell "}}, nil,
			"the person using host-x 2.0 declined this call: not that cell (the call to delete_cell was not run)"},
		{"declined without a reason", 0, &askReply{a: ClientAnswer{}}, nil,
			"the person using host-x 2.0 declined this call to delete_cell; it was not run"},
		{"dismissed", 0, &askReply{a: ClientAnswer{Dismissed: true}}, nil,
			"the person using host-x 2.0 dismissed the request to approve this call to delete_cell without allowing it"},
		{"client failed", 0, &askReply{err: errors.New("broken pipe")}, nil,
			"asking the person using host-x 2.0 to approve this call to delete_cell failed (broken pipe), so it was not run"},
		{"no answer in time", 40 * time.Millisecond, nil, nil,
			"the person using host-x 2.0 did not answer the request to approve this call to delete_cell within 40ms, so it was not run"},
		{"a workbench attached meanwhile decides", 0, nil, func(h *callHarness) {
			defer h.e.AttachWorkbench()()
			if err := h.e.Decide("x", Verdict{Allow: true}); err != nil {
				panic(err)
			}
		}, ""},
		{"cancelled in the workbench", 0, nil, func(h *callHarness) { _ = h.e.Cancel("x") }, "cancelled in the workbench"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The client named itself so when its session opened.
			h := newCallHarnessWith(t, Options{ClientOf: func(session string) string {
				if session == "s1" {
					return "host-x 2.0"
				}
				return ""
			}})
			h.e.SetApproval(ApproveDestructive, tt.timeout)
			stub := newAskStub()
			res := h.beginAsync(context.Background(), Start{ID: "x", Session: "s1", Tool: "delete_cell", Destructive: true, Ask: stub.ask})
			held := h.next(t, event.EvCallHeld).Call
			if held.Status != event.CallHeld || held.Progress != "waiting for approval from the person using host-x 2.0, asked through their MCP client" {
				t.Errorf("held = %+v", held)
			}
			select {
			case <-stub.asked:
			case <-time.After(5 * time.Second):
				t.Fatal("the client was not asked")
			}
			if tt.reply != nil {
				stub.answer <- *tt.reply
			}
			if tt.act != nil {
				tt.act(h)
			}
			r := wait(t, res)
			// Whatever settled the call (the answer, the timeout, the
			// workbench), the question is withdrawn: nothing is left
			// waiting for the client.
			select {
			case <-stub.returned:
			case <-time.After(30 * time.Second):
				t.Fatal("the request to the client was still waiting after the call was settled")
			}
			if tt.wantErr == "" {
				if r.err != nil {
					t.Fatalf("BeginCall = %v", r.err)
				}
				if p := h.next(t, event.EvCallProgress).Call; p.Status != event.CallRunning || p.Progress != "allowed" {
					t.Errorf("after approval: %+v", p)
				}
				r.finish(Outcome{Text: "done"})
				if f := h.next(t, event.EvCallFinished).Call; f.Status != event.CallOK {
					t.Errorf("finished %+v", f)
				}
				return
			}
			if r.err == nil || !isUserError(r.err) || !strings.Contains(r.err.Error(), tt.wantErr) {
				t.Fatalf("BeginCall error = %v, want a UserError with %q", r.err, tt.wantErr)
			}
			want := event.CallDenied
			if strings.Contains(tt.wantErr, "cancelled") {
				want = event.CallCancelled
			}
			if f := h.next(t, event.EvCallFinished).Call; f.Status != want || f.Error != r.err.Error() {
				t.Errorf("finished %+v, want status %s", f, want)
			}
		})
	}
}

// A client that cannot be asked keeps the immediate refusal, which says
// why; a read in destructive mode is not held and its client never asked.
func TestCallApprovalWithoutAskOrHold(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveDestructive, time.Hour)
	r := wait(t, h.beginAsync(context.Background(), Start{ID: "x", Tool: "delete_cell", Destructive: true}))
	if !errors.Is(r.err, errNoApprover) || !strings.Contains(r.err.Error(), "no workbench is attached") ||
		!strings.Contains(r.err.Error(), "does not support elicitation") {
		t.Fatalf("BeginCall = %v", r.err)
	}
	if f := h.next(t, event.EvCallFinished).Call; f.Status != event.CallDenied {
		t.Errorf("finished %+v", f)
	}

	stub := newAskStub()
	r = wait(t, h.beginAsync(context.Background(), Start{ID: "y", Tool: "read_cell", Ask: stub.ask}))
	if r.err != nil {
		t.Fatal(r.err)
	}
	r.finish(Outcome{})
	select {
	case <-stub.asked:
		t.Error("a call that is not held was asked about")
	default:
	}
}

// The last workbench detaching denies calls it held, but not one whose
// client is being asked: that person can still answer.
func TestDetachLeavesClientAskedCalls(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveAll, time.Hour)
	stub := newAskStub()
	res := h.beginAsync(context.Background(), Start{ID: "x", Tool: "t", Ask: stub.ask})
	h.next(t, event.EvCallHeld)
	<-stub.asked
	h.e.AttachWorkbench()()
	select {
	case r := <-res:
		t.Fatalf("the call was settled by a workbench detaching: %v", r.err)
	case <-time.After(30 * time.Millisecond):
	}
	stub.answer <- askReply{a: ClientAnswer{Allow: true}}
	r := wait(t, res)
	if r.err != nil {
		t.Fatal(r.err)
	}
	r.finish(Outcome{})
}

// The client's own cancellation while it is asked ends the call as
// cancelled, not denied.
func TestClientCancelWhileAsked(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveAll, time.Hour)
	stub := newAskStub()
	ctx, cancel := context.WithCancel(context.Background())
	res := h.beginAsync(ctx, Start{ID: "x", Tool: "t", Ask: stub.ask})
	<-stub.asked
	cancel()
	r := wait(t, res)
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("BeginCall = %v", r.err)
	}
	if f := h.next(t, event.EvCallFinished).Call; f.Status != event.CallCancelled {
		t.Errorf("finished %+v", f)
	}
}
