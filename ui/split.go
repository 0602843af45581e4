package ui

import (
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Room for what is active. Each column holds two panes (calls over
// executions, the call over the notebook), and a fixed split left a pane
// with nothing to show holding rows its neighbour needed: at 200x60 twenty
// empty rows of timeline above an execution whose output was cut to a
// third of the screen. The split follows what is going on instead:
//
//   - a pane is given the rows its content needs, and the active pane of
//     the column (a running execution, the notebook being changed, a held
//     call, else the timeline and the selected call) takes the rest;
//   - when both need more than there is, the active one gets what it
//     needs up to activeShare of the column (more when the other needs
//     less than the rest), and the other the rest;
//   - the person's +/- fixes the column's split where they put it, from
//     then on (the first press starts from the split shown).

const (
	// minPane is the least a pane is given: its borders and three rows.
	minPane = 5
	// activeShare is the percent of a column the active pane gets at
	// least when both panes need more than the column has.
	activeShare = 60
	// changingFor is how long a notebook counts as being changed after
	// its last change.
	changingFor = 15 * time.Second
)

// splitColumns sets the heights of the four panes for a body of the given
// height.
func (m *Model) splitColumns(l *layout, body int) {
	if m.manualLeft {
		l.callsH = clamp(body*m.callsPct/100, 3, body-3)
	} else {
		needCalls := len(m.calls.visible(m)) + 3
		if m.calls.filtering {
			needCalls++
		}
		l.callsH = share(body, needCalls, m.execsNeed(l.leftW-2), !m.execRunning(), m.callsPct)
	}
	l.execsH = body - l.callsH
	if m.manualRight {
		l.detailH = clamp(body*m.detailPct/100, 3, body-3)
	} else {
		l.detailH = share(body, m.detailNeed(l.rightW-2, body), m.notebookNeed(l.rightW-2, body), !m.notebookActive(), m.detailPct)
	}
	l.nbH = body - l.detailH
}

// share is the height of the top pane of a column of body rows whose panes
// need needTop and needBottom rows; the favoured one is active. defPct is
// the top pane's share when neither need decides.
func share(body, needTop, needBottom int, topActive bool, defPct int) int {
	if body < 2*minPane {
		return clamp(body*defPct/100, 3, max(body-3, 3))
	}
	needTop, needBottom = max(needTop, minPane), max(needBottom, minPane)
	if needTop+needBottom <= body {
		if topActive {
			return body - needBottom
		}
		return needTop
	}
	// The active pane gets what it needs up to its floor, and more when
	// the other needs less than the rest.
	floor := body * activeShare / 100
	if topActive {
		floor = max(floor, body*defPct/100)
		return clamp(max(min(needTop, floor), body-needBottom), minPane, body-minPane)
	}
	floor = max(floor, body-body*defPct/100)
	return clamp(body-max(min(needBottom, floor), body-needTop), minPane, body-minPane)
}

// execRunning reports whether an execution is running: the executions
// pane, with its output, is then the left column's active pane.
func (m *Model) execRunning() bool {
	for _, x := range m.st.Execs {
		if x.Running() {
			return true
		}
	}
	return false
}

// execsNeed is the rows the executions pane would fill at inner width w:
// its list, the selected execution's output and the kernels and sandboxes.
func (m *Model) execsNeed(w int) int {
	n := 2 // borders
	list := len(m.st.Execs)
	if list == 0 {
		return n + 1 + m.execsFooterLines()
	}
	n += list + 1
	if x := m.execs.selectedExec(m); x != nil {
		out := x.KeptLines()
		if len(x.Tail(1)) > 0 && x.KeptLines() == 0 {
			out = 1
		}
		if out == 0 && x.Code != "" {
			out = strings.Count(strings.TrimRight(x.Code, "\n"), "\n") + 1
		}
		n += out
	}
	return n + m.execsFooterLines()
}

// execsFooterLines is the kernels and sandboxes lines of the executions
// pane.
func (m *Model) execsFooterLines() int {
	n := 0
	if len(m.st.Kernels) > 0 {
		n++
	}
	if len(m.st.SortedSandboxes()) > 0 {
		n++
	}
	return n
}

// detailNeedKey names what the count of the detail pane's lines depends
// on.
type detailNeedKey struct {
	w, cursor int
	ui, calls uint64
	call, ver string
}

// detailNeed is the rows the detail pane would fill at inner width w,
// counted up to limit (a held call's card, when it shows one). The count is kept until the call, its state or
// anything the person did changes: building the lines is what drawing the
// pane costs.
func (m *Model) detailNeed(w, limit int) int {
	if m.held.mode == editArgs {
		return limit
	}
	k := detailNeedKey{w: w, cursor: m.detail.cursor, ui: m.uiVer, calls: m.st.CallsVer, call: m.calls.selected, ver: m.detail.version}
	vc := m.vc
	if !vc.detailNeedOK || vc.detailNeedKey != k {
		n := 0
		if c := m.selectedCall(); awaitsDecision(c) {
			// The pane shows the call's card (cardview.go): its head,
			// the whole of its body and its foot.
			f := m.cardFrame(c, w, limit)
			n = len(f.head) + len(f.body) + len(f.foot)
		} else {
			lines, _ := m.detailLines(w)
			n = len(lines)
		}
		vc.detailNeedKey, vc.detailNeedN, vc.detailNeedOK = k, n+2, true
	}
	return min(vc.detailNeedN, limit)
}

// notebookActive reports whether the notebook shown is being changed (a
// change in the last changingFor, or a cell of it running), unless a held
// call is selected: the call's detail is then what the person must read.
func (m *Model) notebookActive() bool {
	if c := m.selectedCall(); c != nil && c.Status == event.CallHeld {
		return false
	}
	nb := m.st.Notebooks[m.notebook.name]
	if nb == nil {
		return m.jupyterFailurePane()
	}
	if !nb.Changed.IsZero() && m.clock.Sub(nb.Changed) < changingFor {
		return true
	}
	for _, x := range m.st.Execs {
		if x.Running() && x.Notebook == nb.Name {
			return true
		}
	}
	return false
}

// notebookNeed is the rows the notebook pane would fill at inner width w,
// counted up to limit.
func (m *Model) notebookNeed(w, limit int) int {
	nb := m.st.Notebooks[m.notebook.name]
	if nb == nil {
		if m.jupyterFailurePane() {
			return len(m.failureLines(w)) + 2
		}
		return 3
	}
	n := 2 + 2 // borders, the path line and a "cells above" line
	acted := m.actedOnCell(nb)
	for i := range nb.Cells {
		n += len(m.cellBlock(nb, i, w, acted))
		if n >= limit {
			return limit
		}
	}
	return n
}

// resizeFocused grows (d > 0) or shrinks the focused pane by d percent of
// its column, fixing that column's split from the one shown.
func (m *Model) resizeFocused(d int) {
	l := m.layout()
	body := l.callsH + l.execsH
	switch m.focus {
	case FocusCalls, FocusExecs:
		if !m.manualLeft {
			m.callsPct, m.manualLeft = clamp(l.callsH*100/max(body, 1), 20, 85), true
		}
		if m.focus == FocusExecs {
			d = -d
		}
		m.callsPct = clamp(m.callsPct+d, 20, 85)
	case FocusDetail, FocusNotebook:
		if !m.manualRight {
			m.detailPct, m.manualRight = clamp(l.detailH*100/max(body, 1), 15, 85), true
		}
		if m.focus == FocusNotebook {
			d = -d
		}
		m.detailPct = clamp(m.detailPct+d, 15, 85)
	}
}
