package observe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/undo"
)

// fakeEngine records the actions the feed server passes on.
type fakeEngine struct {
	mu       sync.Mutex
	actions  []string
	attached int
}

func (f *fakeEngine) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions = append(f.actions, s)
}

func (f *fakeEngine) InterruptKernel(_ context.Context, id string) error {
	f.record("interrupt " + id)
	return nil
}
func (f *fakeEngine) CancelCall(id string) error {
	f.record("cancel " + id)
	if id == "gone" {
		return errors.New("no call gone")
	}
	return nil
}
func (f *fakeEngine) SetPaused(p bool) {
	if p {
		f.record("pause")
	} else {
		f.record("resume")
	}
}
func (f *fakeEngine) Decide(id string, v calls.Verdict) error {
	switch {
	case !v.Plain():
		f.record(fmt.Sprintf("settle %s allow=%v session=%v reason=%q args=%s", id, v.Allow, v.ForSession, v.Reason, v.Args))
	case v.Allow:
		f.record("allow " + id)
	default:
		f.record("deny " + id)
	}
	return nil
}
func (f *fakeEngine) RevokeAllowed() { f.record("revoke") }
func (f *fakeEngine) Undo(_ context.Context, id string) (undo.Result, error) {
	f.record("undo " + id)
	if id == "c3" {
		return undo.Result{}, errors.New("cell 7cb73ed2 was changed by edit_cell_source at 14:32:10 (the person) after this call; undo that first")
	}
	return undo.Result{ID: "undo-1", Of: id}, nil
}
func (f *fakeEngine) AttachWorkbench() func() {
	f.mu.Lock()
	f.attached++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.attached--
		f.mu.Unlock()
	}
}

func (f *fakeEngine) attachedNow() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attached
}

// next reads one event or fails after a while.
func next(t *testing.T, events <-chan event.Event) event.Event {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("event stream closed")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return event.Event{}
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFeedRoundTrip(t *testing.T) {
	t.Parallel()
	bus := event.NewBus()
	sub := bus.Subscribe(1024)
	eng := &fakeEngine{}
	info := HeaderInfo{Endpoint: "http://127.0.0.1:4040/mcp", Token: "tok-0123456789abcdef", Mode: "stdio"}
	feed := newFeed(sub.C(), sub.Close, eng, info, "feed-secret")
	defer feed.Close()
	srv := httptest.NewServer(feed)
	defer srv.Close()

	// What happened before the workbench attached arrives as a snapshot.
	evs := scenario(t)
	for _, ev := range evs {
		bus.Publish(ev)
	}
	waitFor(t, "the feed to apply the scenario", func() bool {
		feed.mu.Lock()
		defer feed.mu.Unlock()
		return feed.st.Applied == uint64(len(evs))
	})

	ctx := context.Background()
	if _, err := Dial(ctx, srv.URL, "wrong"); err == nil || !strings.Contains(err.Error(), "refused the token") {
		t.Fatalf("a wrong token: %v", err)
	}
	b, err := Dial(ctx, srv.URL, "feed-secret")
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Info(); got.Token != info.Token || got.Endpoint != info.Endpoint || got.Mode != "attached to stdio" {
		t.Fatalf("info %+v", got)
	}
	events, stop := b.Subscribe()
	waitFor(t, "the workbench to be attached", func() bool { return eng.attachedNow() == 1 })

	// Rebuild the state from the snapshot and compare with the source.
	want := NewState(decodePNG)
	for _, ev := range evs {
		want.Apply(ev)
	}
	got := NewState(decodePNG)
	for range want.Snapshot() {
		got.Apply(next(t, events))
	}
	if len(got.Calls) != 6 || got.Call("c6").Status != event.CallHeld || got.Call("c2").Tool != "list_files" {
		t.Fatalf("calls after snapshot: %v", toolsOf(got.Calls))
	}
	nb := got.Notebooks["sales"]
	if nb == nil || len(nb.Cells) != 4 || !isImage(nb.Cells[2].Outputs[0].Decoded) {
		t.Fatalf("notebook after snapshot: %+v", nb)
	}
	if x := got.Exec("x1"); x == nil || !x.Running() || x.Tail(1)[0] != "7" {
		t.Fatalf("execution after snapshot: %+v", x)
	}
	if got.Server.Paused || got.Server.ApprovalMode != "destructive" || len(got.Sessions) != 1 {
		t.Fatalf("server state after snapshot: %+v sessions %v", got.Server, got.Sessions)
	}

	// Then live events, in order.
	bus.Publish(event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: "c7", Tool: "list_kernels", Status: event.CallRunning}})
	if ev := next(t, events); ev.Type != event.EvCallStarted || ev.Call.ID != "c7" || ev.Seq == 0 {
		t.Fatalf("live event %+v", ev)
	}

	// Actions reach the engine and their errors come back.
	if err := b.InterruptKernel(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if err := b.CancelCall("c5"); err != nil {
		t.Fatal(err)
	}
	if err := b.CancelCall("gone"); err == nil || err.Error() != "no call gone" {
		t.Fatalf("cancel of an unknown call: %v", err)
	}
	if err := b.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	if err := b.Decide("c6", calls.Verdict{Allow: false}); err != nil {
		t.Fatal(err)
	}
	if err := b.Decide("c8", calls.Verdict{Reason: "not that cell"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Decide("c9", calls.Verdict{Allow: true, ForSession: true, Args: []byte(`{"code":"1"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := b.RevokeAllowed(); err != nil {
		t.Fatal(err)
	}
	if err := b.Undo("c2"); err != nil {
		t.Fatal(err)
	}
	if err := b.Undo("c3"); err == nil || !strings.Contains(err.Error(), "undo that first") {
		t.Fatalf("a refused undo: %v", err)
	}
	eng.mu.Lock()
	acts := append([]string(nil), eng.actions...)
	eng.mu.Unlock()
	wantActs := []string{"interrupt k1", "cancel c5", "cancel gone", "pause", "deny c6",
		`settle c8 allow=false session=false reason="not that cell" args=`,
		`settle c9 allow=true session=true reason="" args={"code":"1"}`, "revoke", "undo c2", "undo c3"}
	if len(acts) != len(wantActs) {
		t.Fatalf("actions %v, want %v", acts, wantActs)
	}
	for i := range acts {
		if acts[i] != wantActs[i] {
			t.Fatalf("actions %v, want %v", acts, wantActs)
		}
	}

	// Detaching ends the attachment; the server notices.
	stop()
	waitFor(t, "the workbench to detach", func() bool { return eng.attachedNow() == 0 })
}

func TestFeedCloseEndsRemoteStream(t *testing.T) {
	t.Parallel()
	bus := event.NewBus()
	sub := bus.Subscribe(16)
	feed := newFeed(sub.C(), sub.Close, &fakeEngine{}, HeaderInfo{Mode: "stdio"}, "")
	srv := httptest.NewServer(feed)
	defer srv.Close()
	b, err := Dial(context.Background(), "ws"+srv.URL[len("http"):], "")
	if err != nil {
		t.Fatal(err)
	}
	events, stop := b.Subscribe()
	defer stop()
	feed.Close()
	select {
	case _, ok := <-events:
		for ok {
			_, ok = <-events
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end when the feed closed")
	}
	if err := b.CancelCall("c1"); err == nil {
		t.Fatal("an action on a closed feed should fail")
	}
}

func TestFeedOverUnixSocket(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "feed.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	bus := event.NewBus()
	sub := bus.Subscribe(16)
	feed := newFeed(sub.C(), sub.Close, &fakeEngine{}, HeaderInfo{Mode: "stdio"}, "")
	defer feed.Close()
	srv := &http.Server{Handler: feed}
	go srv.Serve(ln)
	defer srv.Close()

	b, err := Dial(context.Background(), "unix:"+sock, "")
	if err != nil {
		t.Fatal(err)
	}
	events, stop := b.Subscribe()
	defer stop()
	waitFor(t, "the client to register", func() bool {
		feed.mu.Lock()
		defer feed.mu.Unlock()
		return len(feed.clients) == 1
	})
	bus.Publish(event.Event{Type: event.EvKernelStatus, Kernel: &event.KernelEvent{ID: "k1", State: "busy"}})
	if ev := next(t, events); ev.Kernel == nil || ev.Kernel.State != "busy" {
		t.Fatalf("event %+v", ev)
	}
}

func TestDialUnreachable(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "none.sock")
	b, err := Dial(context.Background(), "unix:"+sock, "")
	if err == nil || b != nil || !strings.Contains(err.Error(), "attach to unix:"+sock) {
		t.Fatalf("attaching to nothing: %v, %v", b, err)
	}
}
