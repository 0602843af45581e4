package calls

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// heldCall starts call id on h (mode all, a workbench attached by the
// caller) and waits until it is held, returning the held event.
func heldCall(t *testing.T, h *callHarness, c Start) (<-chan beginResult, *event.CallEvent) {
	t.Helper()
	res := h.beginAsync(context.Background(), c)
	h.next(t, event.EvCallStarted)
	return res, h.next(t, event.EvCallHeld).Call
}

func TestDenyWithReason(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveAll, time.Hour)
	defer h.e.AttachWorkbench()()
	res, _ := heldCall(t, h, Start{ID: "x", Session: "s", Tool: "delete_cell"})
	if err := h.e.Decide("x", Verdict{Reason: "  keep the data cells, delete the scratch ones instead \n"}); err != nil {
		t.Fatal(err)
	}
	r := wait(t, res)
	want := "the person supervising this server denied this call to delete_cell in the workbench; it was not run. Their reason: keep the data cells, delete the scratch ones instead"
	if r.err == nil || !isUserError(r.err) || r.err.Error() != want {
		t.Fatalf("error = %v, want %q", r.err, want)
	}
	if f := h.next(t, event.EvCallFinished).Call; f.Status != event.CallDenied || f.Error != want {
		t.Fatalf("finished %+v", f)
	}
}

func TestAllowForSession(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveAll, time.Hour)
	h.next(t, event.EvServerState)
	defer h.e.AttachWorkbench()()

	// Two held calls to the same tool from one session, one from another.
	resX, _ := heldCall(t, h, Start{ID: "x", Session: "s1", Tool: "execute_code"})
	resY, _ := heldCall(t, h, Start{ID: "y", Session: "s1", Tool: "execute_code"})
	resZ, _ := heldCall(t, h, Start{ID: "z", Session: "s2", Tool: "execute_code"})
	if err := h.e.Decide("x", Verdict{Allow: true, ForSession: true}); err != nil {
		t.Fatal(err)
	}
	for _, res := range []<-chan beginResult{resX, resY} {
		r := wait(t, res)
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.finish(Outcome{})
	}
	st := h.next(t, event.EvServerState).Server
	if len(st.Allowed) != 1 || st.Allowed[0] != (event.AllowedTool{Session: "s1", Tool: "execute_code"}) {
		t.Fatalf("allowed = %+v", st.Allowed)
	}
	// The other session's call is still held; a later call of s1 is not.
	select {
	case r := <-resZ:
		t.Fatalf("s2's call was let through: %+v", r)
	default:
	}
	r := wait(t, h.beginAsync(context.Background(), Start{ID: "w", Session: "s1", Tool: "execute_code"}))
	if r.err != nil {
		t.Fatal(r.err)
	}
	r.finish(Outcome{})
	h.none(t, event.EvCallHeld)
	if got := h.e.State().Allowed; len(got) != 1 {
		t.Fatalf("ServerState().Allowed = %+v", got)
	}

	// Revoked: held again.
	h.e.RevokeAllowed()
	if st := h.next(t, event.EvServerState).Server; len(st.Allowed) != 0 {
		t.Fatalf("after revoke: %+v", st.Allowed)
	}
	resV, _ := heldCall(t, h, Start{ID: "v", Session: "s1", Tool: "execute_code"})
	for _, id := range []string{"v", "z"} {
		if err := h.e.Decide(id, Verdict{Allow: false}); err != nil {
			t.Fatal(err)
		}
	}
	for _, res := range []<-chan beginResult{resV, resZ} {
		if r := wait(t, res); r.err == nil {
			t.Fatal("a denied call ran")
		}
	}
}

func TestApproveExecuteHoldsOnlyCode(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveExecute, time.Hour)
	defer h.e.AttachWorkbench()()
	r := wait(t, h.beginAsync(context.Background(), Start{ID: "d", Tool: "delete_cell", Destructive: true}))
	if r.err != nil {
		t.Fatalf("a destructive call that runs no code was held or refused: %v", r.err)
	}
	r.finish(Outcome{})
	h.none(t, event.EvCallHeld)
	res, held := heldCall(t, h, Start{ID: "c", Tool: "execute_code", RunsCode: true})
	if held.ID != "c" {
		t.Fatalf("held %+v", held)
	}
	if err := h.e.Decide("c", Verdict{Allow: true}); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, res); r.err != nil {
		t.Fatal(r.err)
	}
}

func TestEditHeldCall(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveAll, time.Hour)
	defer h.e.AttachWorkbench()()
	var checked []string
	check := func(args json.RawMessage) (json.RawMessage, error) {
		checked = append(checked, string(args))
		var m map[string]any
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, err
		}
		if _, ok := m["code"].(string); !ok {
			return nil, errors.New(`"code" must be a string`)
		}
		return json.RawMessage(`{"code":"print(2)","checked":true}`), nil
	}
	res, held := heldCall(t, h, Start{ID: "x", Tool: "execute_code", Args: json.RawMessage(`{"code":"print(1)"}`), Check: check})
	if !held.Editable {
		t.Fatalf("held call with a checker is not editable: %+v", held)
	}
	// A bad edit is refused and the call stays held.
	err := h.e.Decide("x", Verdict{Allow: true, Args: json.RawMessage(`{"code":3}`)})
	if err == nil || !strings.Contains(err.Error(), `"code" must be a string`) || !strings.Contains(err.Error(), "still held") {
		t.Fatalf("bad edit: %v", err)
	}
	select {
	case r := <-res:
		t.Fatalf("the call ran after a bad edit: %+v", r)
	default:
	}
	if err := h.e.Decide("x", Verdict{Allow: true, Args: json.RawMessage(`{"code":"print(2)"}`)}); err != nil {
		t.Fatal(err)
	}
	r := wait(t, res)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if args, ok := EditedArgs(r.ctx); !ok || string(args) != `{"code":"print(2)","checked":true}` {
		t.Fatalf("EditedArgs = %s %v, want what the checker returned", args, ok)
	}
	// What the workbench shows and a recording keeps is what ran: the
	// edited arguments (secrets redacted), marked as edited.
	p := h.next(t, event.EvCallProgress).Call
	if !strings.Contains(p.Progress, "edited") || !p.Edited || string(p.Args) != `{"code":"print(2)","checked":true}` {
		t.Fatalf("progress %+v", p)
	}
	if len(checked) != 2 {
		t.Fatalf("checker called %d times", len(checked))
	}
	r.finish(Outcome{})
	if f := h.next(t, event.EvCallFinished).Call; !f.Edited || string(f.Args) != `{"code":"print(2)","checked":true}` {
		t.Fatalf("finished %+v", f)
	}

	// A secret the edit keeps is not shown.
	secretCheck := func(json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"code":"print(3)","token":"s3cr3t-value"}`), nil
	}
	res, _ = heldCall(t, h, Start{ID: "s", Tool: "execute_code", Args: json.RawMessage(`{"code":"print(1)","token":"[redacted]"}`), Check: secretCheck})
	if err := h.e.Decide("s", Verdict{Allow: true, Args: json.RawMessage(`{"code":"print(3)","token":"[redacted]"}`)}); err != nil {
		t.Fatal(err)
	}
	r = wait(t, res)
	if p := h.next(t, event.EvCallProgress).Call; strings.Contains(string(p.Args), "s3cr3t") || !strings.Contains(string(p.Args), "print(3)") {
		t.Fatalf("edited arguments shown as %s", p.Args)
	}
	r.finish(Outcome{})
	h.next(t, event.EvCallFinished)

	// A call without a checker cannot be edited; one allowed as it came
	// has no edited arguments.
	res, held = heldCall(t, h, Start{ID: "y", Tool: "list_files"})
	if held.Editable {
		t.Fatal("a call without a checker is editable")
	}
	if err := h.e.Decide("y", Verdict{Allow: true, Args: json.RawMessage(`{}`)}); err == nil {
		t.Fatal("editing a call without a checker succeeded")
	}
	if err := h.e.Decide("y", Verdict{Allow: true}); err != nil {
		t.Fatal(err)
	}
	r = wait(t, res)
	if _, ok := EditedArgs(r.ctx); ok || r.err != nil {
		t.Fatalf("unedited call: %v %v", ok, r.err)
	}
}

// A workbench that subscribes after the mode was set learns it when it
// attaches.
func TestAttachWorkbenchPublishesState(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveExecute, time.Hour)
	h.next(t, event.EvServerState)
	defer h.e.AttachWorkbench()()
	if st := h.next(t, event.EvServerState).Server; st.ApprovalMode != ApproveExecute {
		t.Fatalf("state on attach = %+v", st)
	}
}
