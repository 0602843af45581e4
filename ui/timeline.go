package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

// What a row of the timeline says of a call beyond its tool: how long it
// ran (the time it was held for a person left out, shown beside the status
// instead: "ok · held 11.5s"), and how it ended, a cell that raised or was
// interrupted named in the error colour ("ok · ZeroDivisionError"): the
// call answered, the code did not succeed.

// tookText is the took column: the run's time, so far while it runs; a
// call still held has not run.
func (m *Model) tookText(c *observe.Call) string {
	if c.Status == event.CallHeld || c.Status == event.CallDenied {
		return "-" // it has not run, or never will
	}
	return formatDuration(c.RunTime(m.clock))
}

// detailTimes is what the Call pane's first line says of a call's time:
// "120ms", "120ms · held 11.5s", "3.1s so far", "held 5.0s so far".
func (m *Model) detailTimes(c *observe.Call) string {
	switch c.Status {
	case event.CallHeld:
		return formatDuration(c.HeldTime(m.clock)) + " so far"
	case event.CallRunning:
		out := formatDuration(c.RunTime(m.clock)) + " so far"
		if c.Held > 0 {
			out += " · held " + formatDuration(c.Held)
		}
		return out
	case event.CallDenied:
		return "not run · held " + formatDuration(c.Held)
	}
	out := formatDuration(c.RunTime(m.clock))
	if c.Held > 0 {
		out += " · held " + formatDuration(c.Held)
	}
	return out
}

// callStatus is the status column, styled: the status, the cell's error,
// the time held.
func (m *Model) callStatus(c *observe.Call) string { return m.statusText(c, false) }

// statusText is callStatus, or in a narrow pane its short form: the cell's
// error alone ("ZeroDivisionError", which says it failed) and "ok held
// 11.5s".
func (m *Model) statusText(c *observe.Call, short bool) string {
	s := m.styles
	if c.Status == event.CallHeld {
		return s.Held.Render("held " + formatDuration(c.HeldTime(m.clock)))
	}
	sep := " · "
	if short {
		sep = " "
	}
	out := m.statusLabel(c.Status)
	switch {
	case c.CellFailed() && short:
		out = s.Failed.Render(c.CellError)
	case c.CellFailed():
		out = s.Failed.Render(string(c.Status) + sep + c.CellError)
	}
	if held := c.HeldTime(m.clock); held > 0 {
		out += s.Muted.Render(sep + "held " + formatDuration(held))
	}
	return out
}

// codeArgs are the argument names that hold code or a cell's source: the
// args column leads with their first line, and the Call pane shows them as
// code (args.go).
var codeArgs = []string{"code", "cell_source", "source", "new_source"}

// leadLine is the first line of code or source in the arguments (the
// first that is not blank), and which argument it came from.
func leadLine(obj map[string]json.RawMessage) (line, from string) {
	for _, k := range codeArgs {
		raw, ok := obj[k]
		if !ok {
			continue
		}
		var src string
		if json.Unmarshal(raw, &src) != nil {
			continue
		}
		// Hidden characters as markers (a lone \r ends the line there,
		// as Python reads it): the row shows what runs, not what hides.
		for _, l := range strings.Split(termtext.Code(src), "\n") {
			if strings.TrimSpace(l) != "" {
				return strings.TrimSpace(l), k
			}
		}
		return "", k
	}
	return "", ""
}

// moreMarks are the timeline's "more above" and "more below" words for a
// list of n calls showing [first, end).
func moreMarks(first, end, n int) (above, below string) {
	if first > 0 {
		above = fmt.Sprintf("↑ %d more above", first)
	}
	if end < n {
		below = fmt.Sprintf(" ↓ %d more below ", n-end)
	}
	return above, below
}

// fitStatus cuts a status to w cells, keeping its styles.
func fitStatus(status string, w int) string {
	if ansi.StringWidth(status) <= w {
		return status
	}
	return ansi.Truncate(status, w, "…")
}
