package observe

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// writeCalls writes a recording of n calls, each a start and a result a
// second apart, with a kernel event between calls.
func writeCalls(t *testing.T, n int) string {
	t.Helper()
	var buf bytes.Buffer
	rec := NewRecordWriter(&buf, nil)
	s := 0
	next := func() time.Time { s++; return t0.Add(time.Duration(s) * time.Second) }
	for i := 1; i <= n; i++ {
		id := string(rune('a' + i - 1))
		started := next()
		for _, ev := range []event.Event{
			{Time: started, Type: event.EvCallStarted, Call: &event.CallEvent{ID: id, Tool: "list_files", Status: event.CallRunning, Started: started}},
			{Time: next(), Type: event.EvCallFinished, Call: &event.CallEvent{ID: id, Tool: "list_files", Status: event.CallOK, Started: started, Duration: time.Second}},
			{Time: next(), Type: event.EvKernelStatus, Kernel: &event.KernelEvent{ID: "k", State: "idle"}},
		} {
			if err := rec.Write(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// next reads one event, failing after a generous wait.
func nextEvent(t *testing.T, evs <-chan event.Event) event.Event {
	t.Helper()
	select {
	case ev, ok := <-evs:
		if !ok {
			t.Fatal("the replay ended early")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return event.Event{}
}

// quiet checks that nothing is played for a while. It cannot fail a replay
// that is right: a paused replay plays nothing, however long one waits.
func quiet(t *testing.T, evs <-chan event.Event) {
	t.Helper()
	select {
	case ev := <-evs:
		t.Fatalf("a paused replay played %s", ev.Type)
	case <-time.After(200 * time.Millisecond):
	}
}

// Paused, a replay plays nothing; each step plays one call (up to its
// result); resumed, it plays the rest. Speed 0 (as fast as possible) plays
// without waiting yet dates the events as far apart as recorded, plus the
// time spent paused.
func TestReplayPausesAndSteps(t *testing.T) {
	t.Parallel()
	b, err := Replay(writeCalls(t, 3), ReplayOptions{Speed: -1})
	if err != nil {
		t.Fatal(err)
	}
	b.StepReplay() // while playing: nothing to do
	b.SetReplayPaused(true)
	if st := b.ReplayState(); !st.Paused || st.Speed != -1 {
		t.Fatalf("state %+v", st)
	}
	evs, stop := b.Subscribe()
	defer stop()
	quiet(t, evs)

	b.StepReplay()
	if ev := nextEvent(t, evs); ev.Type != event.EvCallStarted || ev.Call.ID != "a" {
		t.Fatalf("first step began with %s %+v", ev.Type, ev.Call)
	}
	first := nextEvent(t, evs)
	if first.Type != event.EvCallFinished || first.Call.ID != "a" {
		t.Fatalf("first step ended with %s", first.Type)
	}
	quiet(t, evs)

	b.StepReplay()
	var got []string
	for len(got) < 3 {
		ev := nextEvent(t, evs)
		got = append(got, string(ev.Type))
	}
	if want := "[kernel.status call.started call.finished]"; fmtList(got) != want {
		t.Fatalf("second step played %v, want %s", got, want)
	}
	quiet(t, evs)

	b.SetReplayPaused(false)
	var last event.Event
	n := 0
	for ev := range evs {
		last, n = ev, n+1
	}
	if n != 4 {
		t.Fatalf("resumed, %d events played, want the 4 left", n)
	}
	// 7 s apart when recorded; the replay was paused for at least 400 ms
	// between the two (the last two quiet checks).
	if d := last.Time.Sub(first.Time); d < 7*time.Second+400*time.Millisecond {
		t.Fatalf("the last event is dated %v after the first result, want at least 7.4s", d)
	}
	if st := b.ReplayState(); st.Paused {
		t.Fatal("still paused")
	}
}

func fmtList(s []string) string {
	var b bytes.Buffer
	b.WriteString("[")
	for i, x := range s {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(x)
	}
	b.WriteString("]")
	return b.String()
}

// Closing a paused replay ends it.
func TestReplayStopWhilePaused(t *testing.T) {
	t.Parallel()
	b, err := Replay(writeCalls(t, 1), ReplayOptions{Speed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b.SetReplayPaused(true)
	evs, stop := b.Subscribe()
	stop()
	select {
	case _, ok := <-evs:
		if ok {
			t.Fatal("an event played after stop while paused")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the replay did not end")
	}
}
