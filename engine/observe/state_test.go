package observe

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

func cellIDs(nb *Notebook) string {
	var ids []string
	for _, c := range nb.Cells {
		ids = append(ids, c.ID)
	}
	return strings.Join(ids, ",")
}

func TestNotebookOps(t *testing.T) {
	t.Parallel()
	cell := func(id string) event.CellSnapshot {
		return event.CellSnapshot{ID: id, Type: "code", Source: "src " + id}
	}
	nbev := func(typ event.EventType, ne event.NotebookEvent) event.Event {
		ne.Name = "nb"
		return event.Event{Type: typ, Notebook: &ne}
	}
	tests := []struct {
		name string
		ev   event.Event
		want string
	}{
		{"insert in the middle", nbev(event.EvNotebookChanged, event.NotebookEvent{Op: event.OpInsert, Index: 1, Cells: []event.CellSnapshot{cell("n")}}), "a,n,b,c"},
		{"append", nbev(event.EvNotebookChanged, event.NotebookEvent{Op: event.OpInsert, Index: 3, Cells: []event.CellSnapshot{cell("n")}}), "a,b,c,n"},
		{"delete by ids", nbev(event.EvNotebookChanged, event.NotebookEvent{Op: event.OpDelete, Index: 0, CellIDs: []string{"a", "c"}}), "b"},
		{"move down", nbev(event.EvNotebookChanged, event.NotebookEvent{Op: event.OpMove, From: 0, Index: 2, Cells: []event.CellSnapshot{cell("a")}}), "b,c,a"},
		{"move up", nbev(event.EvNotebookChanged, event.NotebookEvent{Op: event.OpMove, From: 2, Index: 0, Cells: []event.CellSnapshot{cell("c")}}), "c,a,b"},
		{"edit by id", nbev(event.EvNotebookChanged, event.NotebookEvent{Op: event.OpEdit, Index: 0, Cells: []event.CellSnapshot{{ID: "b", Source: "new"}}}), "a,b,c"},
		{"reload", nbev(event.EvNotebookChanged, event.NotebookEvent{Op: event.OpReload, Cells: []event.CellSnapshot{cell("x")}}), "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewState(decodePNG)
			s.Apply(nbev(event.EvNotebookOpened, event.NotebookEvent{Path: "nb.ipynb", Cells: []event.CellSnapshot{cell("a"), cell("b"), cell("c")}}))
			s.Apply(tt.ev)
			nb := s.Notebooks["nb"]
			if got := cellIDs(nb); got != tt.want {
				t.Fatalf("cells %s, want %s", got, tt.want)
			}
			if tt.name == "edit by id" && nb.Cells[1].Source != "new" {
				t.Fatalf("edited source %q", nb.Cells[1].Source)
			}
		})
	}
	s := NewState(decodePNG)
	s.Apply(nbev(event.EvNotebookOpened, event.NotebookEvent{Cells: []event.CellSnapshot{cell("a")}}))
	s.Apply(nbev(event.EvNotebookClosed, event.NotebookEvent{}))
	if len(s.Notebooks) != 0 || len(s.NotebookOrder) != 0 {
		t.Fatal("a closed notebook is still listed")
	}
}

func TestCallMerging(t *testing.T) {
	t.Parallel()
	s := NewState(decodePNG)
	s.Apply(event.Event{Type: event.EvCallStarted, Time: t0, Call: &event.CallEvent{ID: "c", Tool: "execute_cell", Session: "s", Status: event.CallRunning, Started: t0}})
	s.Apply(event.Event{Type: event.EvCallProgress, Call: &event.CallEvent{ID: "c", Progress: "12s of 300s, 3 outputs"}})
	// A finished event without a status is decided from isError.
	s.Apply(event.Event{Type: event.EvCallFinished, Time: t0.Add(2e9), Call: &event.CallEvent{ID: "c", IsError: true, Duration: 2e9}})
	c := s.Call("c")
	if c.Tool != "execute_cell" || c.Session != "s" || c.Status != event.CallError || c.Progress == "" || c.Duration != 2e9 {
		t.Fatalf("merged call %+v", c.CallEvent)
	}
	// A call a person edited shows the arguments that ran, marked so.
	se := NewState(decodePNG)
	se.Apply(event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: "e", Tool: "execute_code", Args: []byte(`{"code":"1"}`), Status: event.CallRunning}})
	se.Apply(event.Event{Type: event.EvCallProgress, Call: &event.CallEvent{ID: "e", Args: []byte(`{"code":"2"}`), Edited: true, Progress: "allowed with arguments edited by the person"}})
	se.Apply(event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: "e", Status: event.CallOK}})
	if e := se.Call("e"); !e.Edited || string(e.Args) != `{"code":"2"}` {
		t.Fatalf("edited call %+v", e.CallEvent)
	}
	for i := 0; i < MaxCalls+10; i++ {
		id := "x" + strconv.Itoa(i)
		s.Apply(event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: id, Status: event.CallOK}})
	}
	if len(s.Calls) != MaxCalls || s.CallsDropped != 11 || s.Call("c") != nil {
		t.Fatalf("kept %d, dropped %d", len(s.Calls), s.CallsDropped)
	}
	// Active calls outlive finished ones when the timeline is trimmed.
	s.Apply(event.Event{Type: event.EvCallHeld, Call: &event.CallEvent{ID: "held", Status: event.CallHeld}})
	for i := 0; i < MaxCalls; i++ {
		s.Apply(event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: "y" + strconv.Itoa(i), Status: event.CallOK}})
	}
	if s.Call("held") == nil {
		t.Fatal("a held call was dropped before finished ones")
	}
}

func TestExecTailSplitsLines(t *testing.T) {
	t.Parallel()
	x := &Exec{}
	x.addOutput(event.OutputSnapshot{Kind: "stream", Text: "abc"})
	x.addOutput(event.OutputSnapshot{Kind: "stream", Text: "def\nghi\n"})
	x.addOutput(event.OutputSnapshot{Kind: "stream", Text: "partial"})
	if got := strings.Join(x.Tail(10), "|"); got != "abcdef|ghi|partial" {
		t.Fatalf("tail %q", got)
	}
	// A line a stream left open ends where another output starts, as the
	// agent reads them apart; the same stream goes on on the same line.
	x = &Exec{}
	x.addOutput(event.OutputSnapshot{Kind: "stream", Name: "stdout", Text: "4"})
	x.addOutput(event.OutputSnapshot{Kind: "execute_result", Text: "[None]"})
	x.addOutput(event.OutputSnapshot{Kind: "stream", Name: "stdout", Text: "a"})
	x.addOutput(event.OutputSnapshot{Kind: "stream", Name: "stderr", Text: "b"})
	x.addOutput(event.OutputSnapshot{Kind: "stream", Name: "stderr", Text: "c\n"})
	if got := strings.Join(x.Tail(10), "|"); got != "4|[None]|a|bc" {
		t.Fatalf("tail across outputs %q", got)
	}
	// One output of many lines keeps only the tail and counts the rest.
	x = &Exec{}
	x.addOutput(event.OutputSnapshot{Kind: "stream", Text: strings.Repeat("l\n", 10_000)})
	if x.KeptLines() > MaxExecTailLines+1 || x.KeptLines()+x.LinesDropped != 10_000 {
		t.Fatalf("kept %d, dropped %d", x.KeptLines(), x.LinesDropped)
	}
}

// A held call's arguments are kept whole (a person approves all of them),
// and cut to the usual bound once it is decided.
func TestHeldArgsKeptWhole(t *testing.T) {
	t.Parallel()
	s := NewState(nil)
	code := strings.Repeat("a", MaxArgsBytes+500)
	args := json.RawMessage(`{"code":"` + code + `"}`)
	s.Apply(event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: "c", Tool: "execute_code", Args: args, Status: event.CallRunning}})
	if c := s.Call("c"); c.ArgsCut == 0 {
		t.Fatal("a running call's arguments were not cut")
	}
	until := time.Now().Add(time.Minute)
	s.Apply(event.Event{Type: event.EvCallHeld, Call: &event.CallEvent{ID: "c", Args: args, Status: event.CallHeld, HeldUntil: until}})
	if c := s.Call("c"); c.ArgsCut != 0 || string(c.Args) != string(args) || !c.HeldUntil.Equal(until) {
		t.Fatalf("held: %d bytes cut, until %v", c.ArgsCut, c.HeldUntil)
	}
	s.Apply(event.Event{Type: event.EvCallProgress, Call: &event.CallEvent{ID: "c", Args: args, Status: event.CallRunning, Progress: "allowed"}})
	if c := s.Call("c"); c.ArgsCut == 0 || !c.HeldUntil.IsZero() {
		t.Fatalf("allowed: %d bytes cut, until %v", c.ArgsCut, c.HeldUntil)
	}
}
