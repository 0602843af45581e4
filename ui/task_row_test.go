package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// A call its client holds as an MCP task shows the task on its row (the
// end of its id, its state, its polls) and in the detail (the whole id);
// x x on it cancels the call, which is the task's cancel.
func TestATasksCallRowShowsTheTask(t *testing.T) {
	t.Parallel()
	evs := scenario(t)
	last := evs[len(evs)-1].Time
	evs = append(evs, event.Event{Seq: evs[len(evs)-1].Seq + 1, Time: last.Add(time.Second), Type: event.EvCallTask,
		Call: &event.CallEvent{ID: "c5", Task: &event.CallTask{ID: "t-a1b2.QwErTyUiOp_-x9Yz", State: "working", Polls: 4}}})
	b := newFakeBackend()
	m := newTestModel(t, b, 140, 40, evs)
	m = aside(m)      // the held call's card
	m = keys(m, "up") // c5, running
	if c := m.selectedCall(); c.ID != "c5" || c.Task == nil {
		t.Fatalf("selected %s with task %v", c.ID, c.Task)
	}
	calls := stripANSI(renderPane(m, FocusCalls))
	var row string
	for _, l := range strings.Split(calls, "\n") {
		if strings.Contains(l, "insert_execute_cell") {
			row = l
		}
	}
	if !strings.Contains(row, "task …_-x9Yz working, 4 polls · ") {
		t.Errorf("the call row: %q", row)
	}
	detail := stripANSI(renderPane(m, FocusDetail))
	if !strings.Contains(detail, "task: t-a1b2.QwErTyUiOp_-x9Yz  working, 4 polls") || !strings.Contains(detail, "x x cancels it") {
		t.Errorf("the detail:\n%s", detail)
	}
	m, _ = pressKey(m, "x")
	m, cmd := pressKey(m, "x")
	run(t, m, cmd)
	if len(b.cancels) != 1 || b.cancels[0] != "c5" {
		t.Fatalf("cancels %v, want [c5]", b.cancels)
	}
}
