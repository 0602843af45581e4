package ui

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// plotPNG is a plot-sized PNG (1200×900, lines on white with some noise),
// as matplotlib makes them: large in pixels, modest in bytes.
func plotPNG(tb testing.TB, seed int) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 1200, 900))
	for y := 0; y < 900; y++ {
		for x := 0; x < 1200; x++ {
			c := color.RGBA{255, 255, 255, 255}
			if (x*7+y*3+seed)%97 < 3 || (y-x/2-seed*5)%150 == 0 {
				c = color.RGBA{uint8(30 + seed*3), 90, 200, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// sixtyPNGEvents are the events of a cell that displays 60 large PNGs one
// after the other, as the engine publishes them: each output arrives on the
// execution, and the cell, as it now is, in a notebook change (the engine
// copies at most its first 20 outputs into the event).
func sixtyPNGEvents(tb testing.TB) []eventsMsg {
	pngs := make([][]byte, 60)
	for i := range pngs {
		pngs[i] = plotPNG(tb, i)
	}
	var batches []eventsMsg
	for i := range pngs {
		n := min(i+1, 20)
		outs := make([]event.OutputSnapshot, n)
		for j := range outs {
			outs[j] = event.OutputSnapshot{Kind: "display_data", MimeType: "image/png", Image: pngs[j]}
		}
		batches = append(batches, eventsMsg{
			{Type: event.EvExecOutput, Exec: &event.ExecEvent{ID: "x1", Output: &event.OutputSnapshot{Kind: "display_data", MimeType: "image/png", Image: pngs[i]}}},
			{Type: event.EvNotebookChanged, Notebook: &event.NotebookEvent{Name: "sales", Op: event.OpOutput, Index: 3,
				Cells: []event.CellSnapshot{{ID: "f3a4b5c6", Type: "code", Source: "for i in range(60): plot(i)", OutputsOmitted: i + 1 - n, Outputs: outs}}}},
		})
	}
	return batches
}

// BenchmarkSixtyPNGs measures what the UI goroutine spends on a cell that
// displays 60 large PNGs: every batch through Update and View, as
// bubbletea runs them. While it runs, no key is read: a held call cannot be
// decided. One op is the whole cell; ui-ms/op is the part spent in Update
// and View (the UI goroutine), the rest is the commands (decoding, off it).
//
//	go test ./ui -run XXX -bench SixtyPNGs -benchtime 1x
func BenchmarkSixtyPNGs(b *testing.B) {
	batches := sixtyPNGEvents(b)
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(true)
	styles := theme.New(r)
	var worst, onUI time.Duration
	for range b.N {
		b.StopTimer()
		m := NewModel(newFakeBackend(), styles, Options{Now: func() time.Time { return t0.Add(30 * time.Second) }})
		m = send(m, tea.WindowSizeMsg{Width: 200, Height: 60})
		m = send(m, eventsMsg(scenario(b)))
		_ = m.View()
		b.StartTimer()
		for _, batch := range batches {
			start := time.Now()
			nm, cmd := m.Update(batch)
			m = nm.(Model)
			_ = m.View()
			took := time.Since(start)
			worst, onUI = max(worst, took), onUI+took
			// The commands run off the UI goroutine, as bubbletea runs
			// them; what they bring back goes through Update like any
			// message.
			m = runCmds(m, cmd)
		}
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms/batch")
	b.ReportMetric(float64(onUI.Milliseconds())/float64(b.N), "ui-ms/op")
}

// runCmds runs cmd and the commands its messages bring, feeding every
// message back through Update and drawing after each, as bubbletea would;
// ticks are dropped (they would run forever).
func runCmds(m Model, cmd tea.Cmd) Model {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case nil, tickMsg, redrawMsg, statusExpiredMsg, pendingExpiredMsg:
		default:
			nm, next := m.Update(msg)
			m = nm.(Model)
			_ = m.View()
			queue = append(queue, next)
		}
	}
	return m
}
