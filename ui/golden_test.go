package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

var goldenSizes = []struct{ w, h int }{{80, 24}, {140, 40}}

// renderPane draws one pane alone, filling the body of the screen.
func renderPane(m Model, f Focus) string {
	m.focus = f
	m.updateKeys()
	w, h := m.width, m.height-3
	switch f {
	case FocusCalls:
		return m.box(m.calls.title(&m), m.calls.view(&m, w-2, h-2), w, h, true)
	case FocusDetail:
		return m.box(m.detail.title(&m), m.detail.view(&m, w-2, h-2), w, h, true)
	case FocusNotebook:
		return m.box(m.notebook.title(&m), m.notebook.view(&m, w-2, h-2), w, h, true)
	case FocusExecs:
		return m.box(m.execs.title(&m), m.execs.view(&m, w-2, h-2), w, h, true)
	}
	return ""
}

// checkFrame asserts a frame is exactly w×h cells: panes that overflow or
// fall short break the layout in a real terminal.
func checkFrame(t *testing.T, name, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Errorf("%s: %d lines, want %d", name, len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Errorf("%s: line %d is %d cells wide, want %d: %q", name, i, got, w, l)
		}
	}
}

func TestGoldenScreens(t *testing.T) {
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			b := newFakeBackend()
			m := newTestModel(t, b, sz.w, sz.h, scenario(t))
			suffix := fmt.Sprintf("_%dx%d", sz.w, sz.h)

			// The whole screen as it opens: the newest call (held) selected.
			frame := m.View()
			checkFrame(t, "screen", frame, sz.w, sz.h)
			golden(t, "screen"+suffix, frame)

			golden(t, "calls"+suffix, renderPane(m, FocusCalls))
			golden(t, "execs"+suffix, renderPane(m, FocusExecs))
			golden(t, "notebook"+suffix, renderPane(m, FocusNotebook))

			// The list_files call: a rows tree and a cache hint counting
			// down (finished at t0+3.042s, clock at t0+30s: 3s left).
			sel := keys(m, "up", "up", "up", "up")
			if c := sel.selectedCall(); c == nil || c.Tool != "list_files" {
				t.Fatalf("selected %+v, want list_files", c)
			}
			golden(t, "detail"+suffix, renderPane(sel, FocusDetail))

			// The overwrite call: acted-on cell highlighted in the notebook.
			acted := keys(m, "up", "up", "up")
			golden(t, "notebook_acted"+suffix, renderPane(acted, FocusNotebook))

			help := keys(m, "?")
			frame = help.View()
			checkFrame(t, "help", frame, sz.w, sz.h)
			golden(t, "help"+suffix, frame)
		})
	}
}
