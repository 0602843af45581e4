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

// callHarness is a call registry and a subscription to its bus.
type callHarness struct {
	e   *Registry
	sub *event.Subscription
}

func newCallHarness(t *testing.T) *callHarness {
	t.Helper()
	return newCallHarnessWith(t, Options{})
}

func newCallHarnessWith(t *testing.T, opts Options) *callHarness {
	t.Helper()
	bus := event.NewBus()
	h := &callHarness{e: New(bus, opts), sub: bus.Subscribe(1000)}
	t.Cleanup(h.sub.Close)
	return h
}

// next returns the next event of one of the given types, skipping others.
func (h *callHarness) next(t *testing.T, types ...event.EventType) event.Event {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-h.sub.C():
			for _, ty := range types {
				if ev.Type == ty {
					return ev
				}
			}
		case <-deadline:
			t.Fatalf("no %v event within 5s", types)
		}
	}
}

// none checks that no event of the given types arrives for a short while.
func (h *callHarness) none(t *testing.T, types ...event.EventType) {
	t.Helper()
	deadline := time.After(50 * time.Millisecond)
	for {
		select {
		case ev := <-h.sub.C():
			for _, ty := range types {
				if ev.Type == ty {
					t.Fatalf("unexpected %s event: %+v", ev.Type, ev.Call)
				}
			}
		case <-deadline:
			return
		}
	}
}

type beginResult struct {
	ctx    context.Context
	finish func(Outcome)
	err    error
}

// beginAsync runs Begin in a goroutine since it may block.
func (h *callHarness) beginAsync(ctx context.Context, c Start) <-chan beginResult {
	ch := make(chan beginResult, 1)
	go func() {
		cctx, finish, err := h.e.Begin(ctx, c)
		ch <- beginResult{cctx, finish, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan beginResult) beginResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("BeginCall did not return within 5s")
	}
	return beginResult{}
}

func TestCallLifecycle(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	args := json.RawMessage(`{"cell_index":1}`)
	ctx, finish, err := h.e.Begin(context.Background(), Start{ID: "c1", Session: "s1", Tool: "read_cell", Args: args})
	if err != nil {
		t.Fatal(err)
	}
	started := h.next(t, event.EvCallStarted).Call
	if started.ID != "c1" || started.Session != "s1" || started.Tool != "read_cell" || string(started.Args) != string(args) ||
		started.Status != event.CallRunning || started.Started.IsZero() {
		t.Errorf("started = %+v", started)
	}
	h.e.Progress("c1", "halfway")
	if p := h.next(t, event.EvCallProgress).Call; p.Progress != "halfway" || p.Status != event.CallRunning || p.Tool != "read_cell" {
		t.Errorf("progress = %+v", p)
	}
	h.e.Progress("unknown", "ignored")

	time.Sleep(2 * time.Millisecond)
	ok := true
	out := Outcome{
		Text: "text", Structured: json.RawMessage(`{"kind":"x"}`), Meta: json.RawMessage(`{"m":1}`),
		SchemaOK: &ok, SchemaProblem: "none", CellID: "abc", Notebook: "nb", Images: 2,
	}
	finish(out)
	finish(Outcome{Text: "second"}) // ignored
	f := h.next(t, event.EvCallFinished).Call
	if f.Status != event.CallOK || f.Text != "text" || string(f.Structured) != `{"kind":"x"}` || string(f.Meta) != `{"m":1}` ||
		f.SchemaOK == nil || !*f.SchemaOK || f.SchemaProblem != "none" || f.CellID != "abc" || f.Notebook != "nb" ||
		f.Images != 2 || f.Duration < 2*time.Millisecond || f.Tool != "read_cell" || f.Session != "s1" {
		t.Errorf("finished = %+v", f)
	}
	h.none(t, event.EvCallFinished)
	if ctx.Err() == nil {
		t.Error("the call context is still live after finish")
	}
	if err := h.e.Cancel("c1"); err == nil || !isUserError(err) {
		t.Errorf("CancelCall of a finished call = %v, want a UserError", err)
	}
}

func TestCallFinishStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cancel bool
		out    Outcome
		want   event.CallStatus
	}{
		{"ok", false, Outcome{}, event.CallOK},
		{"tool error", false, Outcome{IsError: true}, event.CallError},
		{"protocol error", false, Outcome{Error: "boom"}, event.CallError},
		{"explicit", false, Outcome{Status: event.CallDenied}, event.CallDenied},
		{"cancelled in workbench", true, Outcome{Error: "context canceled"}, event.CallCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newCallHarness(t)
			ctx, finish, err := h.e.Begin(context.Background(), Start{ID: "c", Tool: "t"})
			if err != nil {
				t.Fatal(err)
			}
			if tt.cancel {
				if err := h.e.Cancel("c"); err != nil {
					t.Fatal(err)
				}
				<-ctx.Done()
				if cause := context.Cause(ctx); !isUserError(cause) || !strings.Contains(cause.Error(), "cancelled in the workbench") {
					t.Errorf("cause = %v", cause)
				}
			}
			finish(tt.out)
			if got := h.next(t, event.EvCallFinished).Call.Status; got != tt.want {
				t.Errorf("status %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCallIDs(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	if _, _, err := h.e.Begin(context.Background(), Start{Tool: "t"}); err == nil {
		t.Error("a call without id was accepted")
	}
	_, finish, err := h.e.Begin(context.Background(), Start{ID: "a", Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.e.Begin(context.Background(), Start{ID: "a", Tool: "t"}); err == nil {
		t.Error("a second call with the same id was accepted")
	}
	finish(Outcome{})
	if _, finish, err := h.e.Begin(context.Background(), Start{ID: "a", Tool: "t"}); err != nil {
		t.Errorf("an id could not be reused after finish: %v", err)
	} else {
		finish(Outcome{})
	}
	if err := h.e.Cancel("nope"); !isUserError(err) {
		t.Errorf("CancelCall(unknown) = %v", err)
	}
}

func TestCallPause(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		release func(h *callHarness, cancel context.CancelFunc)
		wantErr func(error) bool
		status  event.CallStatus // of EvCallFinished when refused
	}{
		{"resume", func(h *callHarness, _ context.CancelFunc) { h.e.SetPaused(false) }, nil, ""},
		{"cancelled in workbench", func(h *callHarness, _ context.CancelFunc) { _ = h.e.Cancel("p") },
			func(err error) bool { return isUserError(err) && strings.Contains(err.Error(), "cancelled") }, event.CallCancelled},
		{"client gave up", func(_ *callHarness, cancel context.CancelFunc) { cancel() },
			func(err error) bool { return errors.Is(err, context.Canceled) }, event.CallCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newCallHarness(t)
			h.e.SetPaused(true)
			h.e.SetPaused(true) // no second state event
			if st := h.next(t, event.EvServerState).Server; !st.Paused || st.ApprovalMode != ApproveOff {
				t.Errorf("state = %+v", st)
			}
			if !h.e.State().Paused {
				t.Error("ServerState does not say paused")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			res := h.beginAsync(ctx, Start{ID: "p", Tool: "insert_cell"})
			h.next(t, event.EvCallStarted)
			if held := h.next(t, event.EvCallHeld).Call; held.Status != event.CallHeld || !strings.Contains(held.Progress, "paused") || !held.HeldUntil.IsZero() {
				t.Errorf("held = %+v", held)
			}
			select {
			case r := <-res:
				t.Fatalf("BeginCall returned while paused: %v", r.err)
			case <-time.After(30 * time.Millisecond):
			}
			tt.release(h, cancel)
			r := wait(t, res)
			if tt.wantErr == nil {
				if r.err != nil {
					t.Fatalf("BeginCall = %v", r.err)
				}
				if p := h.next(t, event.EvCallProgress).Call; p.Status != event.CallRunning || p.Progress != "resumed" {
					t.Errorf("after resume: %+v", p)
				}
				r.finish(Outcome{})
				if f := h.next(t, event.EvCallFinished).Call; f.Status != event.CallOK {
					t.Errorf("finished %+v", f)
				}
				return
			}
			if !tt.wantErr(r.err) {
				t.Fatalf("BeginCall error = %v", r.err)
			}
			r.finish(Outcome{}) // a no-op after a refusal
			if f := h.next(t, event.EvCallFinished).Call; f.Status != tt.status || f.Error == "" {
				t.Errorf("finished %+v", f)
			}
			h.none(t, event.EvCallFinished)
		})
	}
}

func TestCallApproval(t *testing.T) {
	t.Parallel()
	type step func(t *testing.T, h *callHarness)
	decide := func(allow bool) step {
		return func(t *testing.T, h *callHarness) {
			if err := h.e.Decide("x", Verdict{Allow: allow}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name        string
		mode        string
		timeout     time.Duration
		destructive bool
		ui          bool
		held        bool   // expect EvCallHeld
		act         step   // while held
		wantErr     string // "" = the call runs
	}{
		{"off runs destructive", ApproveOff, 0, true, false, false, nil, ""},
		{"destructive mode runs a read", ApproveDestructive, 0, false, false, false, nil, ""},
		{"no workbench refused at once", ApproveDestructive, 0, true, false, false, nil,
			"this call needs approval in the workbench, and no workbench is attached; start with --approve off or attach one"},
		{"all mode no workbench", ApproveAll, 0, false, false, false, nil, "no workbench is attached"},
		{"allowed", ApproveAll, 0, false, true, true, decide(true), ""},
		{"denied names the tool", ApproveDestructive, 0, true, true, true, decide(false), "denied this call to delete_cell"},
		{"timeout denies", ApproveAll, 40 * time.Millisecond, false, true, true, nil, "delete_cell in the workbench within 40ms"},
		{"mode switched off lets it run", ApproveAll, 0, false, true, true,
			func(t *testing.T, h *callHarness) { h.e.SetApproval(ApproveOff, 0) }, ""},
		{"mode switched to destructive lets a read run", ApproveAll, 0, false, true, true,
			func(t *testing.T, h *callHarness) { h.e.SetApproval(ApproveDestructive, 0) }, ""},
		{"cancel while held", ApproveAll, 0, false, true, true,
			func(t *testing.T, h *callHarness) { _ = h.e.Cancel("x") }, "cancelled in the workbench"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newCallHarness(t)
			h.e.SetApproval(tt.mode, tt.timeout)
			if st := h.next(t, event.EvServerState).Server; st.ApprovalMode != tt.mode || st.Paused {
				t.Errorf("state = %+v", st)
			}
			if tt.ui {
				defer h.e.AttachWorkbench()()
			}
			res := h.beginAsync(context.Background(), Start{ID: "x", Tool: "delete_cell", Destructive: tt.destructive})
			h.next(t, event.EvCallStarted)
			if tt.held {
				held := h.next(t, event.EvCallHeld).Call
				if held.Status != event.CallHeld || !strings.Contains(held.Progress, "approval") || held.Destructive != tt.destructive {
					t.Errorf("held = %+v", held)
				}
				// The workbench counts down to the denial.
				limit := tt.timeout
				if limit == 0 {
					limit = DefaultApprovalTimeout
				}
				if left := time.Until(held.HeldUntil); left <= -time.Second || left > limit {
					t.Errorf("held until %v: %v left, want at most %v", held.HeldUntil, left, limit)
				}
				if tt.act != nil {
					tt.act(t, h)
				}
			}
			r := wait(t, res)
			if tt.wantErr == "" {
				if r.err != nil {
					t.Fatalf("BeginCall = %v", r.err)
				}
				if tt.held {
					if p := h.next(t, event.EvCallProgress).Call; p.Status != event.CallRunning || p.Progress != "allowed" {
						t.Errorf("after approval: %+v", p)
					}
				} else {
					h.none(t, event.EvCallHeld)
				}
				r.finish(Outcome{Text: "done"})
				if f := h.next(t, event.EvCallFinished).Call; f.Status != event.CallOK || f.Text != "done" {
					t.Errorf("finished %+v", f)
				}
				return
			}
			if r.err == nil || !isUserError(r.err) || !strings.Contains(r.err.Error(), tt.wantErr) {
				t.Fatalf("BeginCall error = %v, want a UserError with %q", r.err, tt.wantErr)
			}
			ev := h.next(t, event.EvCallHeld, event.EvCallFinished)
			if ev.Type != event.EvCallFinished {
				t.Fatalf("got %s before the call finished", ev.Type)
			}
			f := ev.Call
			want := event.CallDenied
			if strings.Contains(tt.wantErr, "cancelled") {
				want = event.CallCancelled
			}
			if f.Status != want || f.Error != r.err.Error() {
				t.Errorf("finished %+v, want status %s", f, want)
			}
			if err := h.e.Decide("x", Verdict{Allow: true}); err == nil {
				t.Error("Decide on a finished call succeeded")
			}
		})
	}
}

func TestDetachDeniesHeldCalls(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	h.e.SetApproval(ApproveAll, time.Hour)
	detach1 := h.e.AttachWorkbench()
	detach2 := h.e.AttachWorkbench()
	res := h.beginAsync(context.Background(), Start{ID: "x", Tool: "t"})
	h.next(t, event.EvCallHeld)
	detach1()
	detach1() // once only: the second workbench still counts
	select {
	case r := <-res:
		t.Fatalf("call refused with a workbench still attached: %v", r.err)
	case <-time.After(30 * time.Millisecond):
	}
	detach2()
	if r := wait(t, res); !errors.Is(r.err, errNoWorkbench) {
		t.Fatalf("BeginCall = %v", r.err)
	}
}

func TestDecideErrors(t *testing.T) {
	t.Parallel()
	h := newCallHarness(t)
	if err := h.e.Decide("nope", Verdict{Allow: true}); !isUserError(err) {
		t.Errorf("Decide(unknown) = %v", err)
	}
	_, finish, err := h.e.Begin(context.Background(), Start{ID: "running", Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer finish(Outcome{})
	if err := h.e.Decide("running", Verdict{Allow: true}); !isUserError(err) {
		t.Errorf("Decide on a call not held = %v", err)
	}
	if got := h.e.ApprovalTimeout(); got != DefaultApprovalTimeout {
		t.Errorf("default approval timeout %s", got)
	}
}

// isUserError is the engine's IsUserError: err is a problem the caller
// can fix.
func isUserError(err error) bool {
	var u interface{ CallerCanFix() bool }
	return errors.As(err, &u) && u.CallerCanFix()
}
