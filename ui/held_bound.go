package ui

import (
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

// boundLines are the lines of a held call's card that say what it is bound
// to (issue 23): the notebook it acts on and its file, and, on a call held
// again, what changed since the person was last shown it. Kept apart from
// held.go so that the card's layout can change around them.
func (m *Model) boundLines(p *event.CallPreview) []string {
	s := m.styles
	var out []string
	if p.Changed != "" {
		out = append(out, s.Warning.Render("  held again, changed since shown: ")+oneLine(termtext.String(p.Changed)))
	}
	if p.Notebook != "" {
		line := s.Muted.Render("  on notebook ") + oneLine(termtext.String(p.Notebook))
		if p.Path != "" {
			line += s.Muted.Render(" (" + oneLine(termtext.String(p.Path)) + ")")
		}
		out = append(out, line)
	}
	return out
}
