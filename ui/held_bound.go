package ui

import (
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// boundLines are the lines of a held call's card that say what it would do
// and what that is bound to (issue 23): on a call held again, what changed
// since the person was last shown it, first; then what it would do, with
// the notebook it acts on and that notebook's file. The card's head keeps
// them in view (cardview.go). The sanitizer has made the strings safe to
// draw, hidden characters shown as markers.
func (m *Model) boundLines(p *event.CallPreview) []string {
	s := m.styles
	var out []string
	if p.Changed != "" {
		out = append(out, s.Warning.Render("⚠ held again: changed since you were shown it: ")+oneLine(p.Changed))
	}
	line := ""
	if p.What != "" {
		line = s.Text.Render(p.What)
	}
	switch {
	case p.Notebook == "":
	case line == "":
		line = s.Muted.Render("on notebook ") + oneLine(p.Notebook)
		if p.Path != "" {
			line += s.Muted.Render(" (" + oneLine(p.Path) + ")")
		}
	case strings.Contains(p.What, p.Notebook):
		// What names the notebook already: its file is what is left.
		if p.Path != "" {
			line += s.Muted.Render(" · file ") + oneLine(p.Path)
		}
	default:
		line += s.Muted.Render(" · notebook ") + oneLine(p.Notebook)
		if p.Path != "" {
			line += s.Muted.Render(" (" + oneLine(p.Path) + ")")
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
