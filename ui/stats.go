package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// statsView is the `s` screen: per tool and per session, how many calls,
// how they ended (cell errors, tool errors, protocol errors, denied,
// cancelled kept apart), how long they ran (p50 / p95 / p99 / max, the
// time held for a person left out and counted beside them) and what their
// results weigh on the wire; then the slowest calls, enter showing one in
// the timeline. It is computed from the calls the timeline holds, so it is
// the same live, attached and in a replay.
type statsView struct {
	sort    observe.SortColumn
	cursor  int // among the slowest calls
	st      observe.Stats
	ver     [2]uint64 // the state versions st was computed at
	have    bool
	slowest []string // ids of the slowest calls, as listed
}

// statsSlowest is how many of the slowest calls are listed (as many as fit
// are shown).
const statsSlowest = 20

// refresh recomputes the stats when the calls or sessions changed, and
// keeps them sorted by the chosen column.
func (v *statsView) refresh(m *Model) {
	ver := [2]uint64{m.st.CallsVer, m.st.ServerVer}
	if !v.have || v.ver != ver {
		v.st = observe.ComputeStats(m.st, statsSlowest)
		v.ver, v.have = ver, true
		v.slowest = v.slowest[:0]
		for _, c := range v.st.Slowest {
			v.slowest = append(v.slowest, c.ID)
		}
	}
	observe.SortStats(v.st.Tools, v.sort)
	observe.SortStats(v.st.Sessions, v.sort)
	v.cursor = clamp(v.cursor, 0, max(len(v.slowest)-1, 0))
}

// handleStatsKey takes every key while the stats view is shown (quit and
// help are handled before).
func (m Model) handleStatsKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Stats), msg.Type == tea.KeyEsc:
		m.showStats = false
	case key.Matches(msg, k.StatsSort):
		m.stats.sort = m.stats.sort.Next()
	case key.Matches(msg, k.Up):
		m.stats.cursor--
	case key.Matches(msg, k.Down):
		m.stats.cursor++
	case key.Matches(msg, k.StatsOpen):
		if m.stats.cursor < len(m.stats.slowest) {
			return m.showCallInTimeline(m.stats.slowest[m.stats.cursor])
		}
	}
	return m, nil
}

// showCallInTimeline closes the stats view and selects the call in the
// timeline, clearing a search that hides it.
func (m Model) showCallInTimeline(id string) (Model, tea.Cmd) {
	m.showStats = false
	if m.st.Call(id) == nil {
		return m, m.say("that call is no longer in the timeline", true)
	}
	var cmd tea.Cmd
	m.calls.selected = id
	if m.calls.searching() && m.calls.index(m.calls.visible(&m)) < 0 {
		m.calls.setFilter(&m, "")
		m.calls.input.SetValue("")
		m.calls.selected = id
		cmd = m.say("search cleared to show the call", false)
	}
	m.focus = FocusCalls
	m.calls.follow = false
	m.calls.clampSelection(&m)
	m.syncDetail()
	return m, cmd
}

// statsCol is one numeric column of the stats tables.
type statsCol struct {
	title string
	w     int
	by    observe.SortColumn // the sort this column shows; SortName for none
	prio  int                // columns of the highest prio go first when the width is short
	val   func(r observe.StatsRow) string
}

func statsCols() []statsCol {
	n := func(v int) string { return itoa(v) }
	dur := func(r observe.StatsRow, d func(observe.StatsRow) string) string {
		if r.Timed == 0 {
			return "-"
		}
		return d(r)
	}
	return []statsCol{
		{"calls", 6, observe.SortCalls, 0, func(r observe.StatsRow) string { return n(r.Calls) }},
		{"ok", 5, observe.SortName, 4, func(r observe.StatsRow) string { return n(r.OK) }},
		{"cell err", 9, observe.SortErrors, 0, func(r observe.StatsRow) string { return n(r.CellErrors) }},
		{"tool err", 9, observe.SortErrors, 0, func(r observe.StatsRow) string { return n(r.ToolErrors) }},
		{"proto err", 10, observe.SortErrors, 0, func(r observe.StatsRow) string { return n(r.ProtocolErrors) }},
		{"denied", 7, observe.SortName, 1, func(r observe.StatsRow) string { return n(r.Denied) }},
		{"cancel", 7, observe.SortName, 1, func(r observe.StatsRow) string { return n(r.Cancelled) }},
		{"p50", 7, observe.SortP50, 2, func(r observe.StatsRow) string {
			return dur(r, func(r observe.StatsRow) string { return formatDuration(r.P50) })
		}},
		{"p95", 7, observe.SortP95, 0, func(r observe.StatsRow) string {
			return dur(r, func(r observe.StatsRow) string { return formatDuration(r.P95) })
		}},
		{"p99", 7, observe.SortP99, 3, func(r observe.StatsRow) string {
			return dur(r, func(r observe.StatsRow) string { return formatDuration(r.P99) })
		}},
		{"max", 7, observe.SortMax, 0, func(r observe.StatsRow) string {
			return dur(r, func(r observe.StatsRow) string { return formatDuration(r.Max) })
		}},
		{"held", 8, observe.SortName, 3, func(r observe.StatsRow) string {
			if r.Held == 0 {
				return "-"
			}
			return formatDuration(r.Held)
		}},
		{"result", 9, observe.SortBytes, 0, func(r observe.StatsRow) string { return formatBytes(r.ResultBytes()) }},
		{"text", 9, observe.SortName, 5, func(r observe.StatsRow) string { return formatBytes(r.TextBytes) }},
		{"struct", 9, observe.SortName, 5, func(r observe.StatsRow) string { return formatBytes(r.StructuredBytes) }},
		{"images", 9, observe.SortName, 5, func(r observe.StatsRow) string { return formatBytes(r.ImageBytes) }},
	}
}

// fitCols drops columns, the highest prio first and of those the last
// listed, until they and a name column of at least minName cells fit in w;
// it returns them and the name width.
func fitCols(cols []statsCol, w, minName, maxName int) ([]statsCol, int) {
	sum := 0
	for _, c := range cols {
		sum += c.w
	}
	cols = append([]statsCol(nil), cols...)
	for sum+minName > w && len(cols) > 0 {
		drop := len(cols) - 1
		for i := len(cols) - 1; i >= 0; i-- {
			if cols[i].prio > cols[drop].prio {
				drop = i
			}
		}
		sum -= cols[drop].w
		cols = append(cols[:drop], cols[drop+1:]...)
	}
	return cols, clamp(w-sum, minName, maxName)
}

// formatBytes prints a size compactly: 512 B, 12.3 KB, 4.0 MB.
func formatBytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// statsLines draws the stats view in w×h cells.
func (m *Model) statsLines(w, h int) []string {
	s := m.styles
	v := &m.stats
	st := v.st
	active := 0
	for _, r := range st.Tools {
		active += r.Active
	}
	head := fmt.Sprintf("%d calls", st.Calls)
	if active > 0 {
		head += fmt.Sprintf(" (%d running or held)", active)
	}
	if st.Dropped > 0 {
		head += fmt.Sprintf(" · %d older calls dropped from the timeline are not counted", st.Dropped)
	}
	head += " · sorted by " + v.sort.String() + " (o: next column)"
	out := []string{s.Title.Render("Stats") + s.Muted.Render(" · "+head)}
	if st.Calls == 0 {
		return append(out, "", s.Muted.Render("  no calls yet: waiting for an agent"))
	}

	cols, nameW := fitCols(statsCols(), w-2, 16, 30)
	table := func(first string, rows []observe.StatsRow, n int, name func(r observe.StatsRow) string) []string {
		t := first
		if v.sort == observe.SortName {
			t += " ▾"
		}
		hdr := "  " + fit(t, nameW)
		for _, c := range cols {
			t := c.title
			if c.by == v.sort && v.sort != observe.SortName {
				t += " ▾"
			}
			hdr += padLeft(t, c.w)
		}
		lines := []string{s.Muted.Render(hdr)}
		for i, r := range rows {
			if i == n-1 && len(rows) > n {
				lines = append(lines, s.Muted.Render(fmt.Sprintf("  … %d more", len(rows)-i)))
				break
			}
			if i >= n {
				break
			}
			line := "  " + fit(name(r), nameW)
			for _, c := range cols {
				line += padLeft(c.val(r), c.w)
			}
			lines = append(lines, line)
		}
		return lines
	}

	// Rows: the tools first, then the sessions, the slowest calls in the
	// rest (each section has a title and a header line, and a blank line
	// before it).
	avail := h - len(out) - 3*3
	nw := min(len(v.slowest), max(avail/4, 3))
	ns := min(len(st.Sessions), max(avail/5, 1))
	nt := min(len(st.Tools), max(avail-nw-ns, 1))
	if left := avail - nt - ns - nw; left > 0 {
		grow := min(left, len(st.Sessions)-ns)
		ns += grow
		nw = min(len(v.slowest), nw+left-grow)
	}

	out = append(out, "", s.Title.Render("By tool"))
	out = append(out, table("tool", st.Tools, nt, func(r observe.StatsRow) string { return r.Name })...)
	out = append(out, "", s.Title.Render("By session"))
	out = append(out, table("session", st.Sessions, ns, func(r observe.StatsRow) string {
		if r.Client == "" {
			return r.Name
		}
		return short(r.Name, 12) + " " + s.Muted.Render(r.Client)
	})...)
	out = append(out, "", s.Title.Render("Slowest calls")+s.Muted.Render(" (that ran; enter shows one in the timeline)"))
	start := 0
	if v.cursor >= nw {
		start = v.cursor - nw + 1
	}
	for i := start; i < min(start+nw, len(v.slowest)); i++ {
		c := m.st.Call(v.slowest[i])
		if c == nil {
			continue
		}
		mark := " "
		if i == v.cursor {
			mark = "▸"
		}
		row := fmt.Sprintf("%s %s %s %s %s ", mark, m.callClock(c).Format("15:04:05"), fit(short(c.Session, 8), 8),
			fit(c.Tool, 24), padLeft(m.tookText(c), 7))
		status := m.callStatus(c)
		if k := c.ErrorKind(); k != "" {
			status += s.Muted.Render(" (" + k + ")")
		}
		args := argsSummary(c)
		if i == v.cursor {
			row = s.Selected.Render(row)
		}
		out = append(out, row+status+" "+s.Muted.Render(args))
	}
	if len(out) > h {
		out = out[:h]
	}
	plain := m.noColour()
	for i := range out {
		if plain {
			out[i] = stripColour(out[i])
		}
		out[i] = fit(out[i], w)
	}
	for len(out) < h {
		out = append(out, strings.Repeat(" ", w))
	}
	return out
}
