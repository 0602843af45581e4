package ui

import (
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// fresh draws m with an empty cache: what View must show if every pane key
// names everything its pane shows.
func fresh(m Model) string {
	m.vc = &viewCache{}
	m.deferDraw = false
	return m.View()
}

// TestViewCacheMatchesFreshDraw walks the scenario event by event, with
// output, a moving clock, keys and resizes in between, and checks after
// each step that the cached screen is the one drawn from scratch.
func TestViewCacheMatchesFreshDraw(t *testing.T) {
	t.Parallel()
	clock := t0
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(true)
	m := NewModel(newFakeBackend(), theme.New(r), Options{Now: func() time.Time { return clock }})
	m = send(m, tea.WindowSizeMsg{Width: 120, Height: 36})
	check := func(step string) {
		t.Helper()
		if got, want := m.View(), fresh(m); got != want {
			t.Fatalf("after %s the cached screen differs from a fresh one:\n--- cached:\n%s\n--- fresh:\n%s", step, got, want)
		}
	}
	check("start")
	for i, ev := range scenario(t) {
		clock = ev.Time
		m = send(m, eventsMsg{ev})
		check(fmt.Sprintf("event %d (%s)", i, ev.Type))
		if i%4 == 0 {
			m = send(m, eventsMsg{{Type: event.EvExecOutput, Exec: &event.ExecEvent{ID: "x1",
				Output: &event.OutputSnapshot{Kind: "stream", Name: "stdout", Text: fmt.Sprintf("out %d\n", i)}}}})
			check(fmt.Sprintf("output after event %d", i))
		}
	}
	// Running times tick: the calls, detail and executions panes show them.
	for _, d := range []time.Duration{time.Millisecond, 99 * time.Millisecond, time.Second, time.Minute} {
		clock = clock.Add(d)
		m = send(m, eventsMsg{{Type: event.EvMissed, Missed: 1}})
		check("clock +" + d.String())
	}
	for _, k := range []string{"up", "up", "tab", "down", " ", "tab", "down", "tab", "up", "L", "/", "l", "i", "esc", "?", "x", "tab", "down", "H"} {
		m = keys(m, k)
		check("key " + k)
		m = send(m, eventsMsg{{Type: event.EvExecOutput, Exec: &event.ExecEvent{ID: "x1",
			Output: &event.OutputSnapshot{Kind: "stream", Name: "stdout", Text: "after " + k + "\n"}}}})
		check("output after key " + k)
	}
	for _, sz := range [][2]int{{80, 24}, {41, 12}, {200, 60}} {
		m = send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		check(fmt.Sprintf("resize to %dx%d", sz[0], sz[1]))
	}
}

// TestOutputRedrawsOnlyExecutions checks that a flood of output leaves the
// other panes' drawings untouched.
func TestOutputRedrawsOnlyExecutions(t *testing.T) {
	t.Parallel()
	// 200x60: the plot's cell is in view (images are decoded only then).
	m := aside(newTestModel(t, newFakeBackend(), 200, 60, scenario(t)))
	_ = m.View()
	l := m.layout()
	calls, detail, notebook, execs := m.callsKey(l), m.detailKey(l), m.notebookKey(l), m.execsKey(l)
	notebookOut := m.vc.notebook.out
	for i := 0; i < 50; i++ {
		m = send(m, eventsMsg{{Type: event.EvExecOutput, Exec: &event.ExecEvent{ID: "x1",
			Output: &event.OutputSnapshot{Kind: "stream", Name: "stdout", Text: fmt.Sprintf("flood %d\n", i)}}}})
		frame := m.View()
		if !strings.Contains(frame, fmt.Sprintf("flood %d", i)) {
			t.Fatalf("batch %d: the new line is not on the screen", i)
		}
	}
	if m.callsKey(l) != calls || m.detailKey(l) != detail || m.notebookKey(l) != notebook {
		t.Error("output changed the key of a pane that does not show it")
	}
	if m.execsKey(l) == execs {
		t.Error("output did not change the executions pane's key")
	}
	if m.vc.notebook.out != notebookOut {
		t.Error("the notebook pane was redrawn differently")
	}
	// The image in the notebook was drawn once and kept.
	shown, _ := m.st.Notebooks["sales"].Cells[2].Outputs[0].Decoded.(*shownImage)
	if shown == nil || shown.dec == nil || len(shown.dec.art.lines) == 0 || shown.dec.art.width != l.rightW-2-4 {
		t.Errorf("the image's drawing is not cached: %+v", shown)
	}
}

// TestEventsDrawAtMostOncePerFrame checks the frame interval: events inside
// it show the last frame and ask for one redraw at its end; keys draw at
// once; the redraw shows everything that arrived meanwhile.
func TestEventsDrawAtMostOncePerFrame(t *testing.T) {
	t.Parallel()
	clock := t0.Add(30 * time.Second)
	m := NewModel(newFakeBackend(), asciiStyles(), Options{Now: func() time.Time { return clock }, FrameInterval: defaultFrameInterval})
	m = send(m, tea.WindowSizeMsg{Width: 140, Height: 40})
	m = aside(send(m, eventsMsg(scenario(t))))
	first := m.View()
	output := func(text string) tea.Cmd {
		clock = clock.Add(5 * time.Millisecond)
		nm, cmd := m.Update(eventsMsg{{Type: event.EvExecOutput, Exec: &event.ExecEvent{ID: "x1",
			Output: &event.OutputSnapshot{Kind: "stream", Name: "stdout", Text: text + "\n"}}}})
		m = nm.(Model)
		return cmd
	}
	if cmd := output("held-1"); cmd == nil {
		t.Fatal("an event inside the frame interval asked for no redraw")
	}
	if got := m.View(); got != first {
		t.Error("an event inside the frame interval drew a new frame")
	}
	if cmd := output("held-2"); cmd != nil {
		t.Error("a second redraw was asked for while one is on its way")
	}
	m = send(m, redrawMsg{})
	if got := m.View(); !strings.Contains(got, "held-2") {
		t.Error("the redraw does not show the events that waited")
	}
	// A key draws at once, even inside the interval.
	m, _ = pressKey(m, "tab")
	if got := m.View(); got != fresh(m) || m.focus != FocusDetail {
		t.Error("a key inside the frame interval did not draw at once")
	}
	// Past the interval an event draws at once.
	clock = clock.Add(time.Second)
	if cmd := output("later"); cmd != nil || m.deferDraw {
		t.Error("an event past the frame interval was held back")
	}
	if !strings.Contains(m.View(), "later") {
		t.Error("an event past the frame interval is not on the screen")
	}
}

// TestFitPlainASCII checks the fast path of fit against ansi's measure.
func TestFitPlainASCII(t *testing.T) {
	t.Parallel()
	slow := func(s string, w int) string {
		s = ansi.Truncate(s, w, "…")
		if pad := w - ansi.StringWidth(s); pad > 0 {
			s += strings.Repeat(" ", pad)
		}
		return s
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := make([]byte, rng.Intn(40))
		for j := range b {
			b[j] = byte(0x20 + rng.Intn(0x7f-0x20))
		}
		s, w := string(b), 1+rng.Intn(45)
		if got, want := fit(s, w), slow(s, w); got != want {
			t.Fatalf("fit(%q, %d) = %q, want %q", s, w, got, want)
		}
	}
	for _, s := range []string{"tab\there", "wide 漢字", "\x1b[1mbold\x1b[0m", "é"} {
		if plainASCII(s) {
			t.Errorf("%q taken for plain ASCII", s)
		}
	}
}
