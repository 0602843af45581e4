package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// t0 is when the recorded calls start.
var t0 = time.Date(2025, 3, 14, 9, 26, 0, 0, time.UTC)

// raw is v as JSON.
func raw(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A person's undo is an entry of the timeline, not a tool call: a replay
// against a build skips it.
func TestUndoEntriesAreNotReplayed(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	rec := observe.NewRecordWriter(&buf, nil)
	evs := []event.Event{
		{Time: t0, Type: event.EvCallStarted, Call: &event.CallEvent{ID: "a", Session: "S1", Tool: "insert_cell", Args: []byte(`{"cell_index":0}`), Status: event.CallRunning}},
		{Time: t0, Type: event.EvCallFinished, Call: &event.CallEvent{ID: "a", Status: event.CallOK, Undoable: true}},
		{Time: t0, Type: event.EvCallStarted, Call: &event.CallEvent{ID: "undo-1", Tool: "undo", Status: event.CallRunning, Summary: "undo of insert_cell 09:26:00 by the person", UndoOf: "a"}},
		{Time: t0, Type: event.EvCallFinished, Call: &event.CallEvent{ID: "undo-1", Tool: "undo", Status: event.CallOK, UndoOf: "a", Undoable: true}},
	}
	for _, ev := range evs {
		if err := rec.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	calls, skipped, err := ReadCalls(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0].Tool != "insert_cell" || len(skipped) != 1 || skipped[0] != (SkippedCall{2, "undo", "an undo made at the workbench"}) {
		t.Fatalf("calls %+v, skipped %+v", calls, skipped)
	}
}
