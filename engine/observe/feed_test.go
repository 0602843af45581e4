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
	watching int
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
		f.record(fmt.Sprintf("settle %s allow=%v session=%v reason=%q args=%s by=%s", id, v.Allow, v.ForSession, v.Reason, v.Args, v.By))
	case v.Allow:
		f.record("allow " + id + " by=" + v.By)
	default:
		f.record("deny " + id + " by=" + v.By)
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

func (f *fakeEngine) AttachWatcher() func() {
	f.mu.Lock()
	f.watching++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.watching--
		f.mu.Unlock()
	}
}

func (f *fakeEngine) watchingNow() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.watching
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
	// The person at the host types the code the workbench shows.
	codes := make(chan string, 1)
	feed := newFeed(sub.C(), sub.Close, eng, info, FeedOptions{Token: "feed-secret",
		Pair: func(_ context.Context, peers []string) (string, error) { return <-codes, nil }})
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
	if got := b.Info(); got.Token != "" || got.Endpoint != info.Endpoint || got.Mode != "attached to stdio, watching only" {
		t.Fatalf("info %+v (the MCP token is never sent)", got)
	}
	if err := b.Pair(ctx, func(code string) { codes <- code }); err != nil {
		t.Fatal(err)
	}
	if got := b.Info().Mode; got != "attached to stdio, paired" {
		t.Fatalf("mode once paired: %q", got)
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
	by := "by=workbench 1, attached "
	wantActs := []string{"interrupt k1", "cancel c5", "cancel gone", "pause", "deny c6 " + by,
		`settle c8 allow=false session=false reason="not that cell" args= ` + by,
		`settle c9 allow=true session=true reason="" args={"code":"1"} ` + by, "revoke", "undo c2", "undo c3"}
	if len(acts) != len(wantActs) {
		t.Fatalf("actions %v, want %v", acts, wantActs)
	}
	for i := range acts {
		if !strings.HasPrefix(acts[i], wantActs[i]) {
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
	feed := newFeed(sub.C(), sub.Close, &fakeEngine{}, HeaderInfo{Mode: "stdio"}, FeedOptions{})
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
	feed := newFeed(sub.C(), sub.Close, &fakeEngine{}, HeaderInfo{Mode: "stdio"}, FeedOptions{})
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

// A workbench that was not paired watches: it is counted as a watcher, not
// as a workbench that may decide, and every action it sends is refused. A
// code typed at the host that is not its own does not pair it, and a feed
// that cannot ask the host says so at once.
func TestFeedWatcherCannotAct(t *testing.T) {
	t.Parallel()
	bus := event.NewBus()
	sub := bus.Subscribe(16)
	eng := &fakeEngine{}
	var peers []string
	feed := newFeed(sub.C(), sub.Close, eng, HeaderInfo{Mode: "stdio"}, FeedOptions{
		Pair: func(_ context.Context, p []string) (string, error) { peers = p; return "AAAA-AAAA", nil },
	})
	defer feed.Close()
	srv := httptest.NewServer(feed)
	defer srv.Close()
	ctx := context.Background()

	b, err := Dial(ctx, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	shown := ""
	if err := b.Pair(ctx, func(code string) { shown = code }); err == nil || !strings.Contains(err.Error(), "was not this workbench's") {
		t.Fatalf("a wrong code: %v", err)
	}
	if !pairingCode(shown) || codeMatches("AAAA-AAAA", shown) || len(peers) != 1 || !strings.HasPrefix(peers[0], "workbench 1, attached ") {
		t.Fatalf("code %q, peers %q", shown, peers)
	}
	if !codeMatches(strings.ToLower(strings.ReplaceAll(shown, "-", " ")), shown) {
		t.Error("a code typed in lower case with a blank for the dash does not match")
	}
	_, stop := b.Subscribe()
	defer stop()
	waitFor(t, "the watcher to be counted", func() bool { return eng.watchingNow() == 1 })
	if eng.attachedNow() != 0 {
		t.Fatal("a watcher counts as a workbench that decides")
	}
	for _, act := range []func() error{
		func() error { return b.Decide("c1", calls.Verdict{Allow: true}) },
		func() error { return b.Decide("c1", calls.Verdict{Allow: true, ForSession: true}) },
		func() error { return b.CancelCall("c1") },
		func() error { return b.SetPaused(true) },
		func() error { return b.RevokeAllowed() },
		func() error { return b.Undo("c1") },
		func() error { return b.InterruptKernel(ctx, "k1") },
	} {
		if err := act(); err == nil || !strings.Contains(err.Error(), "only watches") {
			t.Errorf("a watcher's action: %v", err)
		}
	}
	eng.mu.Lock()
	acts := eng.actions
	eng.mu.Unlock()
	if len(acts) != 0 {
		t.Fatalf("the engine got a watcher's actions: %v", acts)
	}
	if got := b.Info().Mode; got != "attached to stdio, watching only" {
		t.Errorf("mode %q", got)
	}

	// A feed with no host to ask says so in its hello.
	sub2 := bus.Subscribe(16)
	lone := newFeed(sub2.C(), sub2.Close, eng, HeaderInfo{}, FeedOptions{})
	defer lone.Close()
	srv2 := httptest.NewServer(lone)
	defer srv2.Close()
	b2, err := Dial(ctx, srv2.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if b2.CanPair() == "" {
		t.Fatal("a feed without a host offers pairing")
	}
	if err := b2.Pair(ctx, func(string) {}); err == nil {
		t.Fatal("paired without a host")
	}
}

func pairingCode(s string) bool {
	if len(s) != 9 || s[4] != '-' {
		return false
	}
	for i, r := range s {
		if i != 4 && !strings.ContainsRune(pairingAlphabet, r) {
			return false
		}
	}
	return true
}
