package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// helpView is the `?` screen: every key that works now, grouped, and what
// the double-press actions do.
func (m *Model) helpView(w, h int) string {
	s := m.styles
	groups := m.keys.FullHelp()
	cols := make([]string, 0, len(groups))
	for i, g := range groups {
		enabled := make([]key.Binding, 0, len(g))
		for _, b := range g {
			if b.Enabled() {
				enabled = append(enabled, b)
			}
		}
		if len(enabled) == 0 {
			continue
		}
		title := s.Title.Render(helpGroupTitles[i])
		cols = append(cols, lipgloss.JoinVertical(lipgloss.Left, title, m.help.FullHelpView([][]key.Binding{enabled}))+"    ")
	}
	lines := []string{
		s.Title.Render("Keys") + s.Muted.Render(" (focus: "+m.focus.String()+"; keys that do not apply now are not listed)"),
		"",
	}
	// Lay the groups out left to right, starting a new row when the next
	// one would not fit.
	var row []string
	flush := func() {
		if len(row) > 0 {
			lines = append(lines, strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, row...), "\n")...)
			lines = append(lines, "")
			row = nil
		}
	}
	used := 0
	for _, c := range cols {
		cw := lipgloss.Width(c)
		if used+cw > w && len(row) > 0 {
			flush()
			used = 0
		}
		row = append(row, c)
		used += cw
	}
	flush()
	for _, note := range []string{
		"Interrupt (i), cancel (x) and undo (u) need a second press within 1.5 s.",
		"u u reverts what the selected finished call changed in a notebook (an undo can be undone); it is refused, saying which, when a later change touched the same cells.",
		"r resends the selected finished call as the workbench's own session (marked ↻ workbench): its arguments open in the editor, ctrl+s checks them against the tool's input schema and runs it; " +
			"the new call opens beside the original, with a diff of the two results. Not in a replay or an attached workbench.",
		"A call held for you opens its card over the panes (bell, desktop notice where the terminal has them, countdown to its denial): " +
			"y / n allow or deny it, esc puts it aside (still held), H brings it back or shows the next. A decision key within a second of the card changing, " +
			"or y on a card not read to its end, asks again. While a held call is selected, n (and N) act on it, not on a search.",
		"/ searches the calls: words match arguments, text, structuredContent and _meta, in any case (\"quote\" a phrase); " +
			"terms tool:GLOB status:ok|error|cell-error|tool-error|protocol-error|denied|cancelled|running|held session:PREFIX " +
			"cell:ID|INDEX kind:KIND took:>1s took:<200ms. All must match. n / N: next / previous match; esc clears.",
		"s: stats per tool and per session, and the slowest calls (o sorts by the next column, enter shows a call).",
		"z gives the focused pane the whole window; z or esc gives it back.",
		"C copies the selected call as JSON; E writes the calls shown to a .jsonl file in a folder of its own, outside the served notebooks (tokens redacted; replay plays it).",
		"t shows the MCP bearer token whole (in the header and the connect lines) until pressed again; c sends it to the terminal clipboard (OSC 52).",
		"enter on a notebook cell with an image opens it full-window (" + string(m.imgTarget.proto) + " here); esc, enter or q closes it.",
		"Any key closes this screen.",
	} {
		for _, l := range strings.Split(ansi.Wrap(note, max(w, 1), ""), "\n") {
			lines = append(lines, s.Muted.Render(l))
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	for i := range lines {
		lines[i] = fit(lines[i], w)
	}
	return strings.Join(lines, "\n")
}
