package observe

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// lockedBuffer is a bytes.Buffer safe to read while the recorder writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRecordRedactsAndReplays(t *testing.T) {
	t.Parallel()
	const token = "tok-9f8e7d6c5b4a"
	bus := event.NewBus()
	var buf lockedBuffer
	rec := NewBusRecorder(&buf, bus, []string{token, "ab"}) // "ab" is too short to redact
	evs := scenario(t)
	// Secrets show up in arguments, in text and inside URLs.
	evs = append(evs, event.Event{Time: t0.Add(40 * time.Second), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "s1", Tool: "connect_jupyter",
		Args: raw(t, map[string]any{"jupyter_url": "http://h:8888/?token=" + token, "jupyter_token": token}), Status: event.CallRunning}}, event.Event{Time: t0.Add(41 * time.Second), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "s1", Status: event.CallOK, Text: "connected with " + token}},
	)
	for _, ev := range evs {
		bus.Publish(ev)
	}
	waitFor(t, "every event recorded", func() bool { return strings.Count(buf.String(), "\n") >= len(evs) })
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, token) {
		t.Fatal("the recording holds the token")
	}
	if n := strings.Count(out, Redacted); n != 3 {
		t.Errorf("%d redactions, want 3", n)
	}
	if !strings.Contains(out, `"cell_id":"c9d0e1f2"`) {
		t.Error("arguments should stay readable JSON")
	}

	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := Replay(path, ReplayOptions{Speed: -1})
	if err != nil {
		t.Fatal(err)
	}
	if b.Info().Mode != "replaying session.jsonl" {
		t.Errorf("mode %q", b.Info().Mode)
	}
	if err := b.CancelCall("c5"); err != ErrReadOnly {
		t.Errorf("an action on a replay: %v", err)
	}
	events, stopReplay := b.Subscribe()
	defer stopReplay()
	var got []event.Event
	for ev := range events {
		got = append(got, ev)
	}
	if len(got) != len(evs) {
		t.Fatalf("replayed %d events, want %d", len(got), len(evs))
	}
	// Times move to the present, keeping their distances.
	for i := range evs {
		want := got[0].Time.Add(evs[i].Time.Sub(evs[0].Time))
		if got[i].Type != evs[i].Type || !got[i].Time.Equal(want) {
			t.Fatalf("event %d: %s at %v, want %s at %v", i, got[i].Type, got[i].Time, evs[i].Type, want)
		}
	}
	if d := time.Since(got[0].Time); d < 0 || d > time.Minute {
		t.Errorf("the first event is dated %v, want about now", got[0].Time)
	}
	if c := got[3].Call; c == nil || !c.Started.Equal(got[0].Time.Add(time.Second)) {
		t.Errorf("call start not moved with its event: %+v", c)
	}
	var args map[string]string
	if err := json.Unmarshal(got[len(got)-2].Call.Args, &args); err != nil || args["jupyter_token"] != Redacted {
		t.Fatalf("replayed args %s (%v)", got[len(got)-2].Call.Args, err)
	}
}

// TestReplayKeepsTiming plays three events 200 ms apart at double speed.
func TestReplayKeepsTiming(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	rec := NewRecordWriter(&buf, nil)
	for i := 0; i < 3; i++ {
		if err := rec.Write(event.Event{Seq: uint64(i + 1), Time: t0.Add(time.Duration(i) * 200 * time.Millisecond), Type: event.EvMissed, Missed: 1}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := Replay(path, ReplayOptions{Speed: 2})
	if err != nil {
		t.Fatal(err)
	}
	events, stop := b.Subscribe()
	defer stop()
	start := time.Now()
	n := 0
	for range events {
		n++
	}
	took := time.Since(start)
	// The lower bound is the pacing; the upper one only catches a replay
	// that ignores --speed, with room for a loaded machine.
	if n != 3 || took < 180*time.Millisecond || took > 10*time.Second {
		t.Fatalf("%d events in %v, want 3 in about 200ms", n, took)
	}
}

func TestReplayRejectsGarbage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, []byte("{\"type\":\"bus.missed\"}\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Replay(path, ReplayOptions{}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error %v, want one naming line 2", err)
	}
}

// Close writes what the recorder still holds and syncs a file; a device
// (a pipe, /dev/null) is not synced, which would fail for nothing.
func TestRecorderCloseSyncsFiles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bus := event.NewBus()
	rec := NewBusRecorder(f, bus, nil)
	bus.Publish(event.Event{Type: event.EvKernelStatus, Kernel: &event.KernelEvent{ID: "k", State: "idle"}})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), `"kernel.status"`) {
		t.Fatalf("the event published before Close is not in the file: %q", data)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if err := NewBusRecorder(null, event.NewBus(), nil).Close(); err != nil {
		t.Fatalf("closing a recorder on %s: %v", os.DevNull, err)
	}
}
