package mcp

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// A person's undo of an agent's insert_cell reaches that agent on its next
// result on the notebook: one "Note:" line in the text and the same line in
// _meta under io.jupyter-mcp/notices, once. Another agent on the notebook
// is not told.
func TestUndoNoticeReachesTheAgent(t *testing.T) {
	h := newHarness(t)
	connect := httpSessions(t, h)
	a, b := connect("agent-a"), connect("agent-b")
	p := h.writeNotebook("undo.ipynb", "x = 1")
	ok(t, a, "use_notebook", map[string]any{"notebook_name": "nb", "notebook_path": p})
	ok(t, b, "use_notebook", map[string]any{"notebook_name": "nb", "notebook_path": p})

	sub := h.e.Bus().Subscribe(1024)
	defer sub.Close()
	_, _, res := ok(t, a, "insert_cell", map[string]any{"cell_index": 1, "cell_type": "code", "cell_source": "y = 2"})
	cellID, _ := res.Meta[metaCellID].(string)
	if cellID == "" {
		t.Fatalf("insert_cell result has no cell id in _meta: %v", res.Meta)
	}
	// The call's id is the one the timeline shows (call.finished).
	var call *event.CallEvent
	deadline := time.After(10 * time.Second)
	for call == nil {
		select {
		case ev := <-sub.C():
			if ev.Type == event.EvCallFinished && ev.Call.Tool == "insert_cell" {
				call = ev.Call
			}
		case <-deadline:
			t.Fatal("no call.finished event for insert_cell")
		}
	}

	u, err := h.e.Undo(context.Background(), call.ID)
	if err != nil {
		t.Fatalf("Undo: %v", err)
	}
	want := "a person reverted your insert_cell of " + call.Started.Local().Format("15:04:05") + " (cell " + cellID + " removed)"
	if u.Summary != "undo of insert_cell "+call.Started.Local().Format("15:04:05")+" by the person" {
		t.Errorf("summary %q", u.Summary)
	}

	// b's next result on the notebook says nothing of it.
	_, _, rb := ok(t, b, "read_notebook", map[string]any{"notebook_name": "nb"})
	if _, has := rb.Meta[metaNotices]; has || strings.Contains(textOf(rb), "reverted") {
		t.Errorf("another agent was told: %v\n%s", rb.Meta[metaNotices], textOf(rb))
	}
	// a's next result on the notebook carries the notice, in the text and
	// in _meta, and the cell is gone.
	_, _, ra := ok(t, a, "read_notebook", map[string]any{"notebook_name": "nb"})
	notes, _ := ra.Meta[metaNotices].([]any)
	if len(notes) != 1 || notes[0] != want {
		t.Fatalf("_meta notices %#v, want [%q]", ra.Meta[metaNotices], want)
	}
	if text := textOf(ra); !strings.Contains(text, "Note: "+want) || !strings.Contains(text, "Notebook nb has 1 cells.") {
		t.Fatalf("text after the undo:\n%s", text)
	}
	if disk, err := os.ReadFile(h.srv.Path(p)); err != nil || strings.Contains(string(disk), cellID) {
		t.Fatalf("the file still has cell %s (%v)", cellID, err)
	}
	// Once.
	_, _, again := ok(t, a, "read_notebook", map[string]any{"notebook_name": "nb"})
	if _, has := again.Meta[metaNotices]; has {
		t.Errorf("told twice: %v", again.Meta[metaNotices])
	}
}
