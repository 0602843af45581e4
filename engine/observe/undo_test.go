package observe

import (
	"bytes"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// A person's undo is an entry of the timeline, and the state marks what it
// reverted (internal/contract tests that a replay against a build skips it).
func TestUndoEntries(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	rec := NewRecordWriter(&buf, nil)
	evs := []event.Event{
		{Time: t0, Type: event.EvCallStarted, Call: &event.CallEvent{ID: "a", Session: "S1", Tool: "insert_cell", Args: []byte(`{"cell_index":0}`), Status: event.CallRunning}},
		{Time: t0, Type: event.EvCallFinished, Call: &event.CallEvent{ID: "a", Status: event.CallOK, Undoable: true}},
		{Time: t0, Type: event.EvCallStarted, Call: &event.CallEvent{ID: "undo-1", Tool: "undo", Status: event.CallRunning, Summary: "undo of insert_cell 09:26:00 by the person", UndoOf: "a"}},
		{Time: t0, Type: event.EvCallFinished, Call: &event.CallEvent{ID: "undo-1", Tool: "undo", Status: event.CallOK, UndoOf: "a", Undoable: true}},
	}
	st := NewState(nil)
	for _, ev := range evs {
		if err := rec.Write(ev); err != nil {
			t.Fatal(err)
		}
		st.Apply(ev)
	}
	if a, u := st.Call("a"), st.Call("undo-1"); a.Undoable || !u.Undoable || u.Summary == "" || u.UndoOf != "a" {
		t.Fatalf("state: a %+v, undo %+v", a, u)
	}
}
