package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// replayOf writes the scenario as a recording and opens it at speed.
func replayOf(t *testing.T, speed float64) *observe.ReplaySource {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := observe.NewRecordWriter(f, nil)
	for _, ev := range scenario(t) {
		if err := rec.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	r, err := observe.Replay(path, observe.ReplayOptions{Speed: speed})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// In a replay, space pauses and resumes it (it folds nothing), `.` plays
// one call while paused, and the header says it is a replay, its speed and
// that it is paused.
func TestReplayKeys(t *testing.T) {
	t.Parallel()
	r := replayOf(t, 2)
	m := newTestModel(t, r, 140, 40, nil)
	header := func(m Model) string { return strings.Join(strings.Split(m.View(), "\n")[:2], "\n") }
	if h := header(m); !strings.Contains(h, "replaying demo.jsonl") || !strings.Contains(h, "speed 2×") || strings.Contains(h, "PAUSED") {
		t.Fatalf("header of a replay:\n%s", h)
	}
	if m.keys.ReplayStep.Enabled() || !m.keys.ReplayPause.Enabled() {
		t.Fatal("step is offered while playing, or pause is not")
	}

	m, cmd := pressKey(m, " ")
	if cmd == nil {
		t.Fatal("space did nothing")
	}
	cmd()
	if !r.ReplayState().Paused {
		t.Fatal("space did not pause the replay")
	}
	if h := header(m); !strings.Contains(h, "PAUSED: space resumes, . steps one call") {
		t.Fatalf("header of a paused replay:\n%s", h)
	}
	if !m.keys.ReplayStep.Enabled() || !strings.Contains(m.View(), "resume replay") {
		t.Fatalf("paused, step and resume are not offered:\n%s", m.View())
	}

	// `.` plays the first call, up to its result, and no more.
	evs, stop := r.Subscribe()
	defer stop()
	m, cmd = pressKey(m, ".")
	if cmd == nil {
		t.Fatal(". did nothing")
	}
	cmd()
	var played []event.Event
	for len(played) == 0 || played[len(played)-1].Type != event.EvCallFinished {
		select {
		case ev := <-evs:
			played = append(played, ev)
		case <-time.After(10 * time.Second):
			t.Fatalf("the step played %d events and no result", len(played))
		}
	}
	select {
	case ev := <-evs:
		t.Fatalf("a step played past its call: %s", ev.Type)
	case <-time.After(200 * time.Millisecond):
	}

	m, cmd = pressKey(m, " ")
	cmd()
	if r.ReplayState().Paused || strings.Contains(header(m), "PAUSED") {
		t.Fatal("space did not resume the replay")
	}
	if m.keys.ReplayStep.Enabled() {
		t.Fatal("step offered while playing")
	}
}

// Speed 0 (--speed 0) reads as fast as possible in the header.
func TestReplayHeaderAsFastAsPossible(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, replayOf(t, -1), 140, 40, nil)
	if h := m.View(); !strings.Contains(h, "as fast as possible") {
		t.Fatalf("header:\n%s", h)
	}
}

// Outside a replay, space still folds and the replay keys are not offered.
func TestReplayKeysOnlyInAReplay(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 140, 40, scenario(t))
	if m.keys.ReplayPause.Enabled() || m.keys.ReplayStep.Enabled() {
		t.Fatal("replay keys offered on a live backend")
	}
	if got := m.keys.Toggle.Keys(); strings.Join(got, ",") != "enter, " {
		t.Fatalf("toggle keys %q", got)
	}
}
