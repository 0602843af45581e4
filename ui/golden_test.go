package ui

import (
	"fmt"
	"io"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
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
			m = aside(m)
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

// themedStyles are the styles of a terminal with profile, with the named
// theme forced, as --theme does.
func themedStyles(profile termenv.Profile, name string) theme.Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(profile)
	return theme.ForTheme(r, name)
}

// TestGoldenThemes keeps the main screen in colour: the light theme on a
// true-colour terminal, and both themes on a 16-colour one. The goldens
// hold the escape codes; `cat` one in a terminal to see it.
func TestGoldenThemes(t *testing.T) {
	for _, th := range []struct {
		name    string
		profile termenv.Profile
		theme   string
	}{
		{"light", termenv.TrueColor, theme.LightName},
		{"ansi16", termenv.ANSI, theme.DarkName},
		{"ansi16_light", termenv.ANSI, theme.LightName},
	} {
		for _, sz := range goldenSizes {
			t.Run(fmt.Sprintf("%s_%dx%d", th.name, sz.w, sz.h), func(t *testing.T) {
				m := newStyledModel(t, newFakeBackend(), themedStyles(th.profile, th.theme), sz.w, sz.h, scenario(t))
				m = aside(m)
				frame := m.View()
				checkFrame(t, "screen", frame, sz.w, sz.h)
				golden(t, fmt.Sprintf("screen_%s_%dx%d", th.name, sz.w, sz.h), frame)
			})
		}
	}
}

// TestSixteenColourSelection checks that on a 16-colour terminal the
// selected call is shown by reverse video and its marker, not by a colour
// that may equal the text's.
func TestSixteenColourSelection(t *testing.T) {
	for _, name := range []string{theme.DarkName, theme.LightName} {
		m := newStyledModel(t, newFakeBackend(), themedStyles(termenv.ANSI, name), 140, 40, scenario(t))
		m = aside(m)
		var row string
		for _, l := range strings.Split(m.View(), "\n") {
			if strings.Contains(l, "▸") {
				row = l
				break
			}
		}
		if row == "" {
			t.Fatalf("%s: no selected row on screen", name)
		}
		if !strings.Contains(row, "\x1b[7;1m") && !strings.Contains(row, "\x1b[1;7m") {
			t.Errorf("%s: the selected row is not in reverse video: %q", name, row)
		}
		if strings.Contains(row, "48;5;") || strings.Contains(row, "48;2;") {
			t.Errorf("%s: the selected row has a background colour: %q", name, row)
		}
	}
}

// TestTooSmall checks that below 80x24 the workbench says what it needs
// instead of drawing broken panes, takes no key but quit meanwhile, and
// draws the panes again once the terminal is big enough.
func TestTooSmall(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := newTestModel(t, b, 140, 40, scenario(t))
	for _, sz := range [][2]int{{79, 24}, {80, 23}, {60, 20}, {20, 5}} {
		m = send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		frame := m.View()
		checkFrame(t, "too small", frame, sz[0], sz[1])
		flat := strings.Join(strings.Fields(frame), " ")
		want := fmt.Sprintf("the workbench needs at least 80x24; this terminal is %dx%d", sz[0], sz[1])
		if sz[0] >= 20 && sz[1] >= 5 && !strings.Contains(flat, want) {
			t.Errorf("%dx%d: the screen does not say %q:\n%s", sz[0], sz[1], want, frame)
		}
		if strings.Contains(frame, "Calls") || strings.Contains(frame, "┃") {
			t.Errorf("%dx%d: panes drawn in a terminal too small for them:\n%s", sz[0], sz[1], frame)
		}
	}
	// The held call is selected; y would allow it, unseen.
	if c := m.selectedCall(); c == nil || c.Status != event.CallHeld {
		t.Fatalf("selected %+v, want the held call", c)
	}
	m, cmd := pressKey(m, "y")
	if cmd != nil {
		cmd()
		t.Error("y acted in a terminal too small to show what it acts on")
	}
	b.mu.Lock()
	if len(b.decisions) > 0 {
		t.Errorf("decisions %v taken unseen", b.decisions)
	}
	b.mu.Unlock()
	if _, cmd := pressKey(m, "q"); cmd == nil {
		t.Error("q does not quit in a terminal too small")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q does not quit in a terminal too small")
	}
	m = send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	frame := m.View()
	checkFrame(t, "80x24", frame, 80, 24)
	if strings.Contains(frame, "needs at least") || !strings.Contains(frame, "Held delete_cell c6") {
		t.Errorf("80x24 does not draw the panes:\n%s", frame)
	}
}
