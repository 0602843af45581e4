package observe

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// heldCalls is a state with a call held 11.5 s then run for 120 ms, one
// held and refused after 2 min, one that ran a cell that raised, and one
// still held.
func heldCalls(t *testing.T) (*State, time.Time) {
	t.Helper()
	t0 := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	s := NewState(nil)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	s.Apply(event.Event{Time: at(0), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "h1", Session: "s", Tool: "list_files", Status: event.CallRunning, Started: at(0)}})
	s.Apply(event.Event{Time: at(ms(5)), Type: event.EvCallHeld, Call: &event.CallEvent{ID: "h1", Status: event.CallHeld, Started: at(0)}})
	s.Apply(event.Event{Time: at(ms(11505)), Type: event.EvCallProgress, Call: &event.CallEvent{ID: "h1", Status: event.CallRunning, Started: at(0), Progress: "allowed"}})
	// While it runs, the time held is known and left out of the run.
	if c := s.Call("h1"); c.Held != ms(11500) || c.RunTime(at(ms(11555))) != ms(55) {
		t.Fatalf("running after the hold: held %v, run %v", c.Held, c.RunTime(at(ms(11555))))
	}
	// The engine's own count wins once the call is over.
	s.Apply(event.Event{Time: at(ms(11625)), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "h1", Status: event.CallOK, Started: at(0),
		Duration: ms(11625), Held: ms(11502)}})

	s.Apply(event.Event{Time: at(0), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "h2", Session: "s", Tool: "delete_cell", Status: event.CallRunning, Started: at(0)}})
	s.Apply(event.Event{Time: at(ms(2)), Type: event.EvCallHeld, Call: &event.CallEvent{ID: "h2", Status: event.CallHeld, Started: at(0)}})
	// A recording made before the engine counted it: the events tell.
	s.Apply(event.Event{Time: at(2 * time.Minute), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "h2", Status: event.CallDenied, Started: at(0),
		Duration: 2 * time.Minute, Error: "no one approved this call"}})

	s.Apply(event.Event{Time: at(0), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "x1", Session: "s", Tool: "execute_cell", Status: event.CallRunning, Started: at(0),
		Args: json.RawMessage(`{"cell_index":1}`)}})
	s.Apply(event.Event{Time: at(ms(40)), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "x1", Status: event.CallOK, Started: at(0),
		Duration: ms(40), CellError: "ZeroDivisionError", Text: "ZeroDivisionError: division by zero"}})

	s.Apply(event.Event{Time: at(time.Second), Type: event.EvCallHeld, Call: &event.CallEvent{ID: "h3", Session: "s", Tool: "execute_code", Status: event.CallHeld, Started: at(time.Second)}})
	return s, at(4 * time.Second)
}

func TestHeldTimeApartFromRunTime(t *testing.T) {
	t.Parallel()
	s, now := heldCalls(t)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		id        string
		run, held time.Duration
	}{
		{"h1", ms(123), ms(11502)},
		{"h2", ms(2), 2*time.Minute - ms(2)},
		{"x1", ms(40), 0},
		{"h3", 0, 3 * time.Second},
	} {
		c := s.Call(tc.id)
		if got := c.RunTime(now); got != tc.run {
			t.Errorf("%s: run %v, want %v", tc.id, got, tc.run)
		}
		if got := c.HeldTime(now); got != tc.held {
			t.Errorf("%s: held %v, want %v", tc.id, got, tc.held)
		}
	}
	// A snapshot for an attaching workbench carries the time held.
	re := NewState(nil)
	for _, ev := range s.Snapshot() {
		re.Apply(ev)
	}
	if c := re.Call("h1"); c.Held != ms(11502) || c.RunTime(now) != ms(123) {
		t.Errorf("after a snapshot: held %v, run %v", c.Held, c.RunTime(now))
	}
}

func TestStatsMeasureTheRunAndCountCellErrors(t *testing.T) {
	t.Parallel()
	s, _ := heldCalls(t)
	st := ComputeStats(s, 5)
	rows := map[string]StatsRow{}
	for _, r := range st.Tools {
		rows[r.Name] = r
	}
	if r := rows["list_files"]; r.Max != 123*time.Millisecond || r.Held != 11502*time.Millisecond || r.OK != 1 {
		t.Errorf("list_files: max %v held %v ok %d: the time held is counted in the run", r.Max, r.Held, r.OK)
	}
	if r := rows["execute_cell"]; r.OK != 0 || r.CellErrors != 1 || r.ToolErrors != 0 || r.ProtocolErrors != 0 {
		t.Errorf("execute_cell: ok %d cell errors %d tool errors %d protocol errors %d", r.OK, r.CellErrors, r.ToolErrors, r.ProtocolErrors)
	}
	if len(st.Slowest) == 0 || st.Slowest[0].ID != "h1" {
		t.Errorf("slowest %v", st.Slowest)
	}
}

func TestQueryFindsCellErrors(t *testing.T) {
	t.Parallel()
	s, now := heldCalls(t)
	for q, want := range map[string]string{
		"status:cell-error":     "x1",
		"status:error":          "x1",
		"status:ok":             "h1",
		"zerodivisionerror":     "x1",
		"took:>100ms status:ok": "h1",
		"took:>1s":              "",
	} {
		pq, err := ParseQuery(q)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		got := ""
		for _, c := range s.Calls {
			if pq.Match(c, s.Sessions, now) {
				if got != "" {
					got += " "
				}
				got += c.ID
			}
		}
		if got != want {
			t.Errorf("%q matches %q, want %q", q, got, want)
		}
	}
}
