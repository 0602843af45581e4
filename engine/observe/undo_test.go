package observe

import (
	"bytes"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// A person's undo is an entry of the timeline, and the state marks what it
// reverted (internal/contract tests that a replay against a build skips it).
func TestUndoEntries(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	rec := NewRecordWriter(&buf, nil)
	evs := []engine.Event{
		{Time: t0, Type: engine.EvCallStarted, Call: &engine.CallEvent{ID: "a", Session: "S1", Tool: "insert_cell", Args: []byte(`{"cell_index":0}`), Status: engine.CallRunning}},
		{Time: t0, Type: engine.EvCallFinished, Call: &engine.CallEvent{ID: "a", Status: engine.CallOK, Undoable: true}},
		{Time: t0, Type: engine.EvCallStarted, Call: &engine.CallEvent{ID: "undo-1", Tool: "undo", Status: engine.CallRunning, Summary: "undo of insert_cell 09:26:00 by the person", UndoOf: "a"}},
		{Time: t0, Type: engine.EvCallFinished, Call: &engine.CallEvent{ID: "undo-1", Tool: "undo", Status: engine.CallOK, UndoOf: "a", Undoable: true}},
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
