package ui

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// BenchmarkFlood is the in-process equivalent of bench figure 7: a cell
// prints 200,000 lines while a second session makes small calls, and the
// workbench draws on a 256-colour terminal (what tmux reports) at the
// bench's 160×50. One op is the whole flood, fed through Update in the
// bridge's batches with a View after every batch, as bubbletea does; the
// clock advances as in the real flood (about 0.6 s).
//
//	go test ./ui -run XXX -bench Flood -benchtime 3x -cpuprofile cpu.out
func BenchmarkFlood(b *testing.B) {
	const (
		lines = 200_000
		probe = 50 // batches between the probe session's calls
	)
	// The events are built once: the benchmark measures the workbench, not
	// fmt.
	batches := make([]eventsMsg, 0, lines/bridgeBatch)
	for i := 0; i < lines; i += bridgeBatch {
		batch := make(eventsMsg, 0, bridgeBatch+1)
		for j := i; j < i+bridgeBatch; j++ {
			batch = append(batch, event.Event{Type: event.EvExecOutput, Exec: &event.ExecEvent{ID: "x1",
				Output: &event.OutputSnapshot{Kind: "stream", Name: "stdout", Text: fmt.Sprintf("%d\n", j)}}})
		}
		n := i / bridgeBatch
		id := fmt.Sprintf("probe-%d", n/probe)
		switch n % probe {
		case 0:
			batch = append(batch, event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: id,
				Session: "sess-probe", Tool: "read_cell", Status: event.CallRunning, Started: t0.Add(40 * time.Second),
				Args: raw(b, map[string]any{"cell_index": n, "notebook_name": "probe"})}})
		case 1:
			batch = append(batch, event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: id,
				Session: "sess-probe", Tool: "read_cell", Status: event.CallOK, Duration: time.Millisecond,
				Text:       "print(1)",
				Structured: raw(b, map[string]any{"kind": "cell", "result": map[string]any{"index": n, "source": "print(1)"}})}})
		}
		batches = append(batches, batch)
	}

	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(true)
	styles := theme.New(r)

	// every-batch draws after every batch, as tests do; 30fps is Run's
	// setting, where batches closer than a frame show the last frame.
	for _, c := range []struct {
		name  string
		frame time.Duration
	}{{"every-batch", 0}, {"30fps", defaultFrameInterval}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			frames := 0
			for range b.N {
				b.StopTimer()
				clock := t0.Add(30 * time.Second)
				m := NewModel(newFakeBackend(), styles, Options{Now: func() time.Time { return clock }, FrameInterval: c.frame})
				m = send(m, tea.WindowSizeMsg{Width: 160, Height: 50})
				m = send(m, eventsMsg(scenario(b)))
				b.StartTimer()
				for _, batch := range batches {
					// A flood of 200,000 lines takes about 0.6 s of wall
					// time.
					clock = clock.Add(300 * time.Microsecond)
					m = send(m, batch)
					if !m.deferDraw {
						frames++
					}
					_ = m.View()
				}
				// The redraw the last deferred batch asked for.
				m = send(m, redrawMsg{})
				_ = m.View()
			}
			runtime.ReadMemStats(&ms1)
			events := float64(b.N * lines)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/events, "allocs/event")
			b.ReportMetric(float64(frames)/float64(b.N), "frames/flood")
		})
	}
}

// BenchmarkKeyToFrame is the time from a key to its frame: Update with the
// key, then View, as bubbletea does, on a workbench holding the scenario
// and 500 calls, at 160×50 on a 256-colour terminal. Moving the selection
// changes the calls and detail panes, so it is a redraw, not a cache hit.
//
//	go test ./ui -run XXX -bench KeyToFrame
func BenchmarkKeyToFrame(b *testing.B) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(true)
	clock := t0.Add(30 * time.Second)
	m := NewModel(newFakeBackend(), theme.New(r), Options{Now: func() time.Time { return clock }})
	m = send(m, tea.WindowSizeMsg{Width: 160, Height: 50})
	m = send(m, eventsMsg(scenario(b)))
	var calls eventsMsg
	for i := 0; i < 500; i++ {
		id := fmt.Sprintf("k-%d", i)
		calls = append(calls, event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: id, Session: "s", Tool: "read_cell", Status: event.CallRunning, Started: t0}}, event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: id, Session: "s", Tool: "read_cell", Status: event.CallOK, Duration: time.Millisecond,
			Structured: raw(b, map[string]any{"kind": "cell.read", "result": []any{"x"}})}})
	}
	m = send(m, calls)
	keys := []tea.KeyMsg{{Type: tea.KeyUp}, {Type: tea.KeyDown}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		m = send(m, keys[i%2])
		_ = m.View()
	}
}
