package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// TestFloodStaysBounded pushes 200,000 output events (and a call storm)
// through the bridge into the model, drawing after every batch as the
// program does, and checks that what the model keeps stays bounded and that
// drawing stays fast.
func TestFloodStaysBounded(t *testing.T) {
	m := newTestModel(t, newFakeBackend(), 140, 40, scenario(t))
	const lines = 200_000
	events := make(chan event.Event, 1024)
	go func() {
		defer close(events)
		for i := 0; i < lines; i++ {
			events <- event.Event{Type: event.EvExecOutput, Exec: &event.ExecEvent{ID: "x1",
				Output: &event.OutputSnapshot{Kind: "stream", Name: "stdout", Text: fmt.Sprintf("line %d\n", i)}}}
			if i%200 == 0 {
				// The notebook cell grows too: the engine sends the cell
				// as it now is (bounded on its side, but large).
				events <- event.Event{Type: event.EvNotebookChanged, Notebook: &event.NotebookEvent{Name: "sales", Op: event.OpOutput, Index: 3,
					Cells: []event.CellSnapshot{{ID: "f3a4b5c6", Type: "code", Source: "flood()", OutputsOmitted: i,
						Outputs: []event.OutputSnapshot{{Kind: "stream", Name: "stdout", Text: strings.Repeat("x\n", 20_000)}}}}}}
				id := fmt.Sprintf("flood-%d", i)
				events <- event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: id, Tool: "read_cell", Session: "s", Status: event.CallRunning, Started: t0}}
				events <- event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: id, Tool: "read_cell", Session: "s", Status: event.CallOK, Text: strings.Repeat("t", 100_000)}}
			}
		}
	}()

	// The program draws after every batch; under -race, which makes
	// drawing ten times slower, every tenth batch is drawn to keep the
	// test short.
	drawEvery := 1
	if raceEnabled {
		drawEvery = 10
	}
	var batches, frames int
	var slowest, drawing time.Duration
	send := func(msg tea.Msg) {
		batches++
		m = send(m, msg)
		if batches%drawEvery != 0 {
			return
		}
		start := time.Now()
		_ = m.View()
		d := time.Since(start)
		frames++
		drawing += d
		slowest = max(slowest, d)
	}
	start := time.Now()
	bridge(events, send, make(chan struct{}))
	took := time.Since(start)

	if !m.closed {
		t.Error("the end of the stream should reach the model")
	}
	x := m.st.Exec("x1")
	if x == nil {
		t.Fatal("execution x1 is gone")
	}
	if x.KeptLines() > 2*observe.MaxExecTailLines {
		t.Errorf("execution tail holds %d lines, bound is %d", x.KeptLines(), 2*observe.MaxExecTailLines)
	}
	if got := x.Tail(1); len(got) != 1 || got[0] != fmt.Sprintf("line %d", lines-1) {
		t.Errorf("last line %q, want line %d", got, lines-1)
	}
	if kept := x.KeptLines() + x.LinesDropped; kept != lines+8 { // +8 lines of the scenario
		t.Errorf("kept %d + dropped %d lines, want %d in all", x.KeptLines(), x.LinesDropped, lines+8)
	}
	if len(m.st.Calls) > observe.MaxCalls || m.st.CallsDropped == 0 {
		t.Errorf("%d calls kept, %d dropped: want at most %d kept", len(m.st.Calls), m.st.CallsDropped, observe.MaxCalls)
	}
	for _, c := range m.st.Calls {
		if len(c.Text) > observe.MaxTextBytes {
			t.Fatalf("call text of %d bytes kept", len(c.Text))
		}
	}
	cell := m.st.Notebooks["sales"].Cells[3]
	for _, o := range cell.Outputs {
		if len(o.Text) > observe.MaxOutputText {
			t.Errorf("cell output text of %d bytes kept, bound %d", len(o.Text), observe.MaxOutputText)
		}
	}
	if cell.OutputsOmitted == 0 {
		t.Error("the omitted output count was lost")
	}
	if !strings.Contains(m.View(), "earlier lines not kept") && !strings.Contains(renderPane(m, FocusExecs), "earlier lines not kept") {
		t.Error("the executions pane should say output lines were dropped")
	}
	if batches > lines/bridgeBatch*2 {
		t.Errorf("%d batches for %d events: the bridge is not batching", batches, lines)
	}
	mean := drawing / time.Duration(max(frames, 1))
	t.Logf("%d events in %d batches, %v; %d frames, mean %v, slowest %v", lines, batches, took, frames, mean, slowest)
	// The state is bounded, so a frame costs the same at the end of the
	// flood as at its start: a few milliseconds.
	if !raceEnabled && mean > 20*time.Millisecond {
		t.Errorf("mean frame took %v", mean)
	}
}

// TestBridgeFlushesLoneEvent checks that a single event is not held back
// waiting for a full batch.
func TestBridgeFlushesLoneEvent(t *testing.T) {
	t.Parallel()
	events := make(chan event.Event)
	got := make(chan tea.Msg, 4)
	done := make(chan struct{})
	defer close(done)
	go bridge(events, func(msg tea.Msg) { got <- msg }, done)
	events <- event.Event{Type: event.EvMissed, Missed: 3}
	select {
	case msg := <-got:
		if b, ok := msg.(eventsMsg); !ok || len(b) != 1 {
			t.Fatalf("got %#v, want a batch of one", msg)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a lone event was not delivered")
	}
}
