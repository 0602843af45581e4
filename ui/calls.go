package ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

// callsPane is the live timeline of tool calls.
type callsPane struct {
	selected  string        // id of the selected call
	follow    bool          // keep the newest call selected
	offset    int           // first visible row
	filter    string        // the applied search, as typed (trimmed)
	query     observe.Query // filter parsed (search.go)
	queryErr  string        // what is wrong with the search being typed
	filtering bool          // the search input has the keyboard
	input     textinput.Model
}

func (p *callsPane) title(m *Model) string {
	t := fmt.Sprintf(" Calls %d ", len(m.st.Calls)+m.st.CallsDropped)
	if above, _ := p.marks(m); above != "" {
		t += "· " + above + " "
	}
	if p.filter != "" {
		t += fmt.Sprintf("· /%s %d of %d match ", p.filter, len(p.visible(m)), len(m.st.Calls))
	}
	if m.st.CallsDropped > 0 {
		t += fmt.Sprintf("· %d oldest dropped ", m.st.CallsDropped)
	}
	if p.follow {
		t += "· following "
	}
	return t
}

// index returns the position of the selected call in vis, or -1.
func (p *callsPane) index(vis []*observe.Call) int {
	for i := len(vis) - 1; i >= 0; i-- {
		if vis[i].ID == p.selected {
			return i
		}
	}
	return -1
}

// clampSelection keeps the selection on a visible call (the newest when
// following or when the selected call is gone) and in view.
func (p *callsPane) clampSelection(m *Model) {
	vis := p.visible(m)
	if len(vis) == 0 {
		p.selected, p.offset = "", 0
		return
	}
	i := p.index(vis)
	// A held call on screen keeps the selection (card.go): a decision
	// key must land on the call the person reads, not on one that
	// arrived meanwhile.
	keep := i >= 0 && (m.card.open && p.selected == m.card.callID || awaitsDecision(vis[i]) && !m.card.decided[holdKey(vis[i])])
	if m.card.open && p.selected == m.card.callID && i < 0 {
		return // hidden by the search: still the card's
	}
	if (p.follow && !keep) || i < 0 {
		i = len(vis) - 1
		p.selected = vis[i].ID
	}
	h := p.rows(m)
	if i < p.offset {
		p.offset = i
	}
	if i >= p.offset+h {
		p.offset = i - h + 1
	}
	p.offset = clamp(p.offset, 0, max(len(vis)-h, 0))
}

// rows is how many calls fit in the pane (one line goes to the column
// header, one to the filter input when it is open).
func (p *callsPane) rows(m *Model) int {
	h := m.layout().callsH - 3
	if p.filtering {
		h--
	}
	return max(h, 1)
}

func (p *callsPane) move(m *Model, delta int) {
	vis := p.visible(m)
	if len(vis) == 0 {
		return
	}
	i := p.index(vis)
	if i < 0 {
		i = len(vis) - 1
	}
	i = clamp(i+delta, 0, len(vis)-1)
	p.selected = vis[i].ID
	p.follow = i == len(vis)-1 && delta > 0
	p.clampSelection(m)
	m.syncDetail()
}

func (p callsPane) handleKey(m Model, msg tea.KeyMsg) (Model, tea.Cmd) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		m.calls.move(&m, -1)
	case key.Matches(msg, k.Down):
		m.calls.move(&m, 1)
	case key.Matches(msg, k.PageUp):
		m.calls.move(&m, -m.calls.rows(&m))
	case key.Matches(msg, k.PageDown):
		m.calls.move(&m, m.calls.rows(&m))
	case key.Matches(msg, k.Top):
		m.calls.move(&m, -len(m.st.Calls))
	case key.Matches(msg, k.Bottom):
		m.calls.follow = true
		m.calls.clampSelection(&m)
		m.syncDetail()
	case key.Matches(msg, k.Filter):
		m.calls.filtering = true
		m.calls.input.SetValue(m.calls.filter)
		m.calls.input.CursorEnd()
		return m, m.calls.input.Focus()
	case key.Matches(msg, k.ClearFilter):
		m.calls.setFilter(&m, "")
	}
	return m, nil
}

// view draws the column header, the rows and the filter input.
func (p *callsPane) view(m *Model, w, h int) []string {
	s := m.styles
	vis := p.visible(m)
	var lines []string
	if p.filtering {
		lines = append(lines, p.inputLine(m, w))
		h--
	}
	first, end := p.offset, min(p.offset+h-1, len(vis))
	// The status column is as wide as the widest status shown (a cell's
	// error, the time held), within what the tool column leaves.
	statusAt := func(short bool) ([]string, int) {
		sts, sw := make([]string, 0, max(end-first, 0)), 9
		for i := first; i < end; i++ {
			st := m.statusText(vis[i], short)
			sts, sw = append(sts, st), max(sw, ansi.StringWidth(st))
		}
		return sts, sw
	}
	statuses, statusW := statusAt(false)
	// Column widths: time 8, session 8, tool flexible, args the rest,
	// duration 7, status as wide as it needs (short in a narrow pane).
	// Narrow panes drop the session and args.
	const durW = 7
	timeW, sessW := 8, 8
	if _, ok := m.st.Sessions[calls.WorkbenchSession]; ok {
		// Room for the workbench's own session, named whole.
		sessW = 9
	}
	if w < 60 {
		sessW = 0
	}
	if w < 50 {
		timeW = 0
	}
	fixed := 2 + durW + 3
	if timeW > 0 {
		fixed += timeW + 1
	}
	if sessW > 0 {
		fixed += sessW + 1
	}
	if room := max(w-fixed-10, 9); statusW > room {
		statuses, statusW = statusAt(true)
		statusW = min(statusW, max(w-fixed-8, 9))
	}
	statusW = min(statusW, 40)
	rest := w - fixed - statusW
	toolW := clamp(rest/2, 10, 22)
	argsW := rest - toolW - 1
	if argsW < 12 {
		toolW, argsW = max(rest, 4), 0
	}
	cols := func(mark, tm, sess, tool, args, dur string) string {
		row := mark + " "
		if timeW > 0 {
			row += fit(tm, timeW) + " "
		}
		if sessW > 0 {
			row += fit(sess, sessW) + " "
		}
		row += fit(tool, toolW) + " "
		if argsW > 0 {
			row += fit(args, argsW) + " "
		}
		return row + padLeft(dur, durW) + " "
	}
	if note := p.queryNote(m); p.filtering && note != "" {
		// While a query is being typed, what is wrong with it takes the
		// place of the column header.
		lines = append(lines, note)
	} else {
		lines = append(lines, s.Muted.Render(cols(" ", "time", "session", "tool", "args", "took")+"status"))
	}
	if len(vis) == 0 {
		msg := "no calls yet: waiting for an agent"
		if p.filter != "" {
			msg = fmt.Sprintf("no call of %d matches /%s", len(m.st.Calls), p.filter)
		}
		return append(lines, s.Muted.Render("  "+msg))
	}
	sel := p.index(vis)
	for i := first; i < end; i++ {
		c := vis[i]
		mark := " "
		if i == sel {
			mark = "▸"
		}
		tool := c.Tool
		own := c.Session == calls.WorkbenchSession
		if own {
			// The person's own call (a resend): marked, and in its colour.
			tool = "↻ " + tool
		}
		row := cols(mark, m.callClock(c).Format("15:04:05"), short(c.Session, sessW), tool, taskNote(c)+argsSummary(c), m.tookText(c))
		switch {
		case i == sel:
			row = s.Selected.Render(row)
		case own:
			row = s.Own.Render(row)
		}
		lines = append(lines, row+fitStatus(statuses[i-first], statusW))
	}
	return lines
}

// marks are the words the pane's borders carry when calls are out of view
// above or below it.
func (p *callsPane) marks(m *Model) (above, below string) {
	vis := p.visible(m)
	h := p.rows(m)
	return moreMarks(p.offset, min(p.offset+h, len(vis)), len(vis))
}

// statusLabel is a call status in its colour. The few labels are styled
// once each: the calls pane draws one per row on every frame.
func (m *Model) statusLabel(st event.CallStatus) string {
	if l, ok := m.vc.labels[st]; ok {
		return l
	}
	s := m.styles
	var style lipgloss.Style
	switch st {
	case event.CallRunning:
		style = s.Running
	case event.CallOK:
		style = s.OK
	case event.CallError:
		style = s.Failed
	case event.CallCancelled:
		style = s.Cancelled
	case event.CallHeld:
		style = s.Held
	case event.CallDenied:
		style = s.Denied
	default:
		style = s.Muted
	}
	l := style.Render(string(st))
	if m.vc.labels == nil {
		m.vc.labels = map[event.CallStatus]string{}
	}
	m.vc.labels[st] = l
	return l
}

// shortArgs renders call arguments as k=v pairs on one line, keys sorted,
// long values cut: enough to recognise a call at a glance.
func shortArgs(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return oneLine(string(raw))
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys)+1)
	// Code leads: the first line of what a call runs or writes says more
	// than its cell_index (timeline.go).
	lead, from := leadLine(obj)
	if lead != "" {
		parts = append(parts, ansi.Truncate(lead, 40, "…"))
	}
	for _, k := range keys {
		if k == from && lead != "" {
			continue
		}
		v := string(obj[k])
		var str string
		if json.Unmarshal(obj[k], &str) == nil {
			// A decoded value holds again what the arguments keep as
			// JSON escapes: shown as markers, never drawn raw.
			v = termtext.Code(str) // its line breaks then go as any whitespace
		}
		v = oneLine(v)
		v = ansi.Truncate(v, 24, "…")
		parts = append(parts, termtext.Name(k)+"="+v)
	}
	return strings.Join(parts, " ")
}

func padLeft(s string, w int) string {
	if n := w - lipgloss.Width(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return s
}
