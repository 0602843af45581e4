package ui

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"sort"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// plotColors are matplotlib's first line colours.
var plotColors = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255}}

// smallPNG is a 64×48 plot, different for every seed: white page, black
// axes, a curve in one of matplotlib's colours with a blended edge.
func smallPNG(tb testing.TB, seed int) []byte {
	tb.Helper()
	const w, h = 64, 48
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	line := plotColors[seed%len(plotColors)]
	edge := color.RGBA{uint8((int(line.R) + 255) / 2), uint8((int(line.G) + 255) / 2), uint8((int(line.B) + 255) / 2), 255}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, color.RGBA{255, 255, 255, 255})
		}
	}
	for i := 4; i < w; i++ {
		img.SetRGBA(i, h-5, color.RGBA{0, 0, 0, 255})
	}
	for i := 0; i < h-4; i++ {
		img.SetRGBA(4, i, color.RGBA{0, 0, 0, 255})
	}
	for x := 5; x < w; x++ {
		y := (h-6)/2 + int(float64(h/3)*math.Sin(float64(x+seed*7)/6))
		img.SetRGBA(x, y, line)
		img.SetRGBA(x, y+1, edge)
		img.SetRGBA(x, y-1, edge)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// bigNotebookCell is cell i of the benchmark notebook: a few lines of code,
// a stream output, and on every fourth cell a small PNG.
func bigNotebookCell(tb testing.TB, i int) event.CellSnapshot {
	n := i + 1
	c := event.CellSnapshot{ID: fmt.Sprintf("cell-%04d", i), Type: "code", ExecutionCount: &n,
		Source:  fmt.Sprintf("x%d = %d\nfor j in range(3):\n    print(x%d * j)", i, i, i),
		Outputs: []event.OutputSnapshot{{Kind: "stream", Name: "stdout", Text: fmt.Sprintf("0\n%d\n%d\n", i, 2*i)}}}
	if i%4 == 0 {
		c.Outputs = append(c.Outputs, event.OutputSnapshot{Kind: "display_data", MimeType: "image/png", Image: smallPNG(tb, i)})
	}
	return c
}

// bigNotebookModel is a workbench at 160×50 on a 256-colour terminal with
// one notebook of n cells open and the notebook pane focused.
func bigNotebookModel(tb testing.TB, n int) Model {
	tb.Helper()
	cells := make([]event.CellSnapshot, n)
	for i := range cells {
		cells[i] = bigNotebookCell(tb, i)
	}
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(true)
	clock := t0.Add(30 * time.Second)
	m := NewModel(newFakeBackend(), theme.New(r), Options{Now: func() time.Time { return clock }})
	m = send(m, tea.WindowSizeMsg{Width: 160, Height: 50})
	m = send(m, eventsMsg{{Type: event.EvNotebookOpened, Notebook: &event.NotebookEvent{
		Name: "big", Path: "big.ipynb", KernelID: "k-1", Cells: cells}}})
	m.focus = FocusNotebook
	_ = m.View()
	return m
}

// frameTimes reports the p50 and p95 of frame durations as metrics.
func frameTimes(b *testing.B, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	pct := func(p float64) float64 {
		return float64(d[min(len(d)-1, int(p*float64(len(d))))].Nanoseconds()) / 1e6
	}
	b.ReportMetric(pct(0.50), "p50-ms/frame")
	b.ReportMetric(pct(0.95), "p95-ms/frame")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkNotebookScroll is one frame of scrolling the notebook pane:
// Update with a key (down, and page down every tenth frame), then View, as
// bubbletea does, in a notebook of 10 and of 2,000 cells with small PNGs.
// It sweeps the whole notebook and back; each frame's time is its best of
// three sweeps (bestOf).
//
//	go test ./ui -run XXX -bench NotebookScroll
func BenchmarkNotebookScroll(b *testing.B) {
	for _, n := range []int{10, 2000} {
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			down, pgdown, top := tea.KeyMsg{Type: tea.KeyDown}, tea.KeyMsg{Type: tea.KeyPgDown}, tea.KeyMsg{Type: tea.KeyHome}
			frames := bestOf(b, func() func(int) time.Duration {
				m := bigNotebookModel(b, n)
				return func(i int) time.Duration {
					msg := down
					switch {
					case m.notebook.cell >= n-1:
						msg = top
					case i%10 == 9:
						msg = pgdown
					}
					t := time.Now()
					m = send(m, msg)
					_ = m.View()
					return time.Since(t)
				}
			})
			frameTimes(b, frames)
		})
	}
}

// bestOf runs b.N frames on sweeps fresh models (cold caches each time)
// and keeps for each frame its shortest time: on a shared machine a frame
// is sometimes preempted or waits for the collector's share of the CPU, and
// that time is the machine's, not the frame's work, which every sweep
// repeats alike.
func bestOf(b *testing.B, sweep func() func(i int) time.Duration) []time.Duration {
	const sweeps = 3
	var best []time.Duration
	for s := 0; s < sweeps; s++ {
		b.StopTimer()
		frame := sweep()
		b.StartTimer()
		for i := range b.N {
			d := frame(i)
			if s == 0 {
				best = append(best, d)
			} else {
				best[i] = min(best[i], d)
			}
		}
	}
	return best
}

// BenchmarkNotebookOutput is one output arriving for the cell in view (a
// line of stream output, as a running cell prints), Update then View, in a
// notebook of 10 and of 2,000 cells with small PNGs; each event's time is
// its best of three runs (bestOf).
//
//	go test ./ui -run XXX -bench NotebookOutput
func BenchmarkNotebookOutput(b *testing.B) {
	for _, n := range []int{10, 2000} {
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			// The same cell in both: one with a plot, in the middle.
			at := n / 2 / 4 * 4
			frames := bestOf(b, func() func(int) time.Duration {
				m := bigNotebookModel(b, n)
				m.notebook.cell = at
				cell := bigNotebookCell(b, at)
				text := cell.Outputs[0].Text
				return func(i int) time.Duration {
					text += fmt.Sprintf("line %d\n", i)
					cell.Outputs[0].Text = text[max(0, len(text)-2000):]
					ev := eventsMsg{{Type: event.EvNotebookChanged, Notebook: &event.NotebookEvent{
						Name: "big", Op: event.OpOutput, Index: at, Cells: []event.CellSnapshot{cell}}}}
					t := time.Now()
					m = send(m, ev)
					_ = m.View()
					return time.Since(t)
				}
			})
			frameTimes(b, frames)
		})
	}
}
