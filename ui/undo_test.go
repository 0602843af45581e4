package ui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// undoScenario is a finished insert_cell the engine can undo, then a
// finished read_cell it cannot.
func undoScenario() []event.Event {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	return []event.Event{
		{Seq: 1, Time: at(1), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "c1", Session: "s1", Tool: "insert_cell", Status: event.CallRunning, Started: at(1)}},
		{Seq: 2, Time: at(2), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "c1", Session: "s1", Tool: "insert_cell", Status: event.CallOK, Started: at(1), Duration: time.Second, Undoable: true}},
		{Seq: 3, Time: at(3), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "c2", Session: "s1", Tool: "read_cell", Status: event.CallRunning, Started: at(3)}},
		{Seq: 4, Time: at(4), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "c2", Session: "s1", Tool: "read_cell", Status: event.CallOK, Started: at(3), Duration: time.Second}},
	}
}

// u u on an undoable call undoes it; one u only arms; a call the engine
// keeps no change of offers no undo; the undo shows in the timeline.
func TestDoublePressUndo(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := newTestModel(t, b, 160, 30, undoScenario())
	if c := m.selectedCall(); c.ID != "c2" || m.keys.Undo.Enabled() {
		t.Fatalf("on %s undo is enabled=%v, want read_cell and disabled", c.Tool, m.keys.Undo.Enabled())
	}
	m, cmd := pressKey(m, "u")
	if cmd != nil || m.pending.kind != pendingNone {
		t.Fatal("u armed an undo on a call with nothing to undo")
	}
	m = keys(m, "up")
	if !m.keys.Undo.Enabled() {
		t.Fatal("undo should be enabled on a finished insert_cell the engine keeps")
	}
	m, _ = pressKey(m, "u")
	if m.pending.kind != pendingUndo || len(b.undos) != 0 {
		t.Fatalf("first press: pending=%v undos=%v", m.pending, b.undos)
	}
	if !strings.Contains(m.View(), "press u again to undo insert_cell 09:26:01") {
		t.Error("the first press should say how to confirm, naming the call")
	}
	m, cmd = pressKey(m, "u")
	m = run(t, m, cmd)
	if len(b.undos) != 1 || b.undos[0] != "c1" {
		t.Fatalf("undos %v, want [c1]", b.undos)
	}
	if m.status != "undid insert_cell 09:26:01" || m.statusErr {
		t.Fatalf("status %q (error %v)", m.status, m.statusErr)
	}

	// The engine's entry for the undo: "undo of insert_cell 09:26:01 by
	// the person", itself undoable.
	m = send(m, eventsMsg{
		{Seq: 5, Time: t0.Add(5 * time.Second), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "undo-1", Tool: "undo", Status: event.CallRunning, Started: t0.Add(5 * time.Second), Summary: "undo of insert_cell 09:26:01 by the person", UndoOf: "c1"}},
		{Seq: 6, Time: t0.Add(5 * time.Second), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "undo-1", Tool: "undo", Status: event.CallOK, Started: t0.Add(5 * time.Second), Summary: "undo of insert_cell 09:26:01 by the person", UndoOf: "c1", Undoable: true}},
	})
	m = keys(m, "G")
	v := m.View()
	row := false
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, "▸ 09:26:05") && strings.Contains(l, " undo ") && strings.Contains(l, "of insert_cell 09:") {
			row = true
		}
	}
	if !row || !strings.Contains(v, "undo of insert_cell 09:26:01 by the person") {
		t.Errorf("the timeline does not show the undo:\n%s", v)
	}
	// The undo reverted c1: the state no longer offers it.
	if c := m.st.Call("c1"); c.Undoable {
		t.Error("the undone call is still offered for undo")
	}

	// A refusal is shown in the status line with the reason.
	b.undoErr = errors.New("cell 7cb73ed2 was changed by edit_cell_source at 09:26:04 (session s1) after this call; undo that first")
	m, _ = pressKey(m, "u")
	m, cmd = pressKey(m, "u")
	m = run(t, m, cmd)
	if len(b.undos) != 2 || b.undos[1] != "undo-1" || !m.statusErr ||
		m.status != "could not undo undo 09:26:05: cell 7cb73ed2 was changed by edit_cell_source at 09:26:04 (session s1) after this call; undo that first" {
		t.Fatalf("undos %v, status %q (error %v)", b.undos, m.status, m.statusErr)
	}
	// Undoing the undo puts c1 back in effect.
	m = send(m, eventsMsg{
		{Seq: 7, Time: t0.Add(6 * time.Second), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "undo-2", Tool: "undo", Status: event.CallOK, Started: t0.Add(6 * time.Second), Summary: "undo of undo 09:26:05 by the person", UndoOf: "undo-1", Undoable: true}},
	})
	if !m.st.Call("c1").Undoable || m.st.Call("undo-1").Undoable {
		t.Error("after the undo of the undo, c1 should be undoable again and the first undo not")
	}

}
