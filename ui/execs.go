package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// execsPane lists executions (running first) with the selected one's
// streaming output, then kernels and sandboxes.
type execsPane struct {
	selected string // exec id
	pinned   bool   // the person chose an execution; do not follow new ones
}

func (p *execsPane) title(m *Model) string {
	running := 0
	for _, x := range m.st.Execs {
		if x.Running() {
			running++
		}
	}
	return fmt.Sprintf(" Executions %d running ", running)
}

// ordered lists executions: running ones newest first, then finished ones
// newest first.
func (p *execsPane) ordered(m *Model) []*observe.Exec {
	out := make([]*observe.Exec, 0, len(m.st.Execs))
	for i := len(m.st.Execs) - 1; i >= 0; i-- {
		if m.st.Execs[i].Running() {
			out = append(out, m.st.Execs[i])
		}
	}
	for i := len(m.st.Execs) - 1; i >= 0; i-- {
		if !m.st.Execs[i].Running() {
			out = append(out, m.st.Execs[i])
		}
	}
	return out
}

func (p *execsPane) selectedExec(m *Model) *observe.Exec {
	return m.st.Exec(p.selected)
}

// clampSelection follows the newest running execution unless the person
// picked one that still exists.
func (p *execsPane) clampSelection(m *Model) {
	if p.pinned && p.selectedExec(m) != nil {
		return
	}
	p.pinned = false
	if list := p.ordered(m); len(list) > 0 {
		p.selected = list[0].ID
	} else {
		p.selected = ""
	}
}

func (p *execsPane) handleKey(m *Model, msg tea.KeyMsg) {
	list := p.ordered(m)
	if len(list) == 0 {
		return
	}
	i := 0
	for j, x := range list {
		if x.ID == p.selected {
			i = j
		}
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		i--
	case key.Matches(msg, k.Down):
		i++
	case key.Matches(msg, k.Top):
		i = 0
	case key.Matches(msg, k.Bottom):
		i = len(list) - 1
	default:
		return
	}
	i = clamp(i, 0, len(list)-1)
	p.selected, p.pinned = list[i].ID, true
}

// view draws the list, the selected execution's output tail, kernels and
// sandboxes.
func (p *execsPane) view(m *Model, w, h int) []string {
	s := m.styles
	var footer []string
	if ks := m.st.SortedKernels(); len(ks) > 0 {
		parts := make([]string, 0, len(ks))
		for _, k := range ks {
			name := short(k.ID, 8)
			if k.Name != "" {
				name += " " + k.Name
			}
			state := k.State
			if k.Lost != "" {
				state = "lost: " + k.Lost
			}
			parts = append(parts, name+" "+m.kernelState(state))
		}
		footer = append(footer, s.Muted.Render("kernels ")+strings.Join(parts, s.Muted.Render(" · ")))
	}
	if sbs := m.st.SortedSandboxes(); len(sbs) > 0 {
		parts := make([]string, 0, len(sbs))
		for _, sb := range sbs {
			parts = append(parts, sb.Name+" "+s.Muted.Render(sb.Variant)+" "+m.kernelState(sb.State))
		}
		footer = append(footer, s.Muted.Render("sandboxes ")+strings.Join(parts, s.Muted.Render(" · ")))
	}
	if len(footer) > h {
		footer = footer[:h]
	}
	h -= len(footer)

	list := p.ordered(m)
	var lines []string
	if len(list) == 0 {
		lines = append(lines, s.Muted.Render("no executions yet"))
	}
	listH := min(len(list), max(h/3, 1))
	sel := 0
	for i, x := range list {
		if x.ID == p.selected {
			sel = i
		}
	}
	first := clamp(sel-listH+1, 0, max(len(list)-listH, 0))
	for i := first; i < first+listH && i < len(list); i++ {
		lines = append(lines, m.execLine(list[i], i == sel, w))
	}
	if hidden := len(list) - listH; hidden > 0 {
		lines = append(lines, s.Muted.Render(fmt.Sprintf("  … %d more (↑↓)", hidden)))
	}
	if m.st.ExecsDropped > 0 && len(lines) > 0 {
		lines[len(lines)-1] += s.Muted.Render(fmt.Sprintf(" · %d older not kept", m.st.ExecsDropped))
	}
	if x := p.selectedExec(m); x != nil && h-len(lines) > 1 {
		room := h - len(lines) - 1
		tail := x.Tail(room)
		info := fmt.Sprintf("── output: %d outputs", x.Outputs)
		if x.Images > 0 {
			info += fmt.Sprintf(", %d images", x.Images)
		}
		if x.LinesDropped > 0 {
			info += fmt.Sprintf(", %d earlier lines not kept", x.LinesDropped)
		}
		if len(tail) == 0 && x.Code != "" {
			info = "── code"
			tail = strings.Split(strings.TrimRight(x.Code, "\n"), "\n")
			tail = tail[:min(len(tail), room)]
		}
		lines = append(lines, s.Muted.Render(info))
		for _, l := range tail {
			lines = append(lines, "  "+strings.ReplaceAll(l, "\t", "    "))
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return append(lines, footer...)
}

// execLine is one execution in the list.
func (m *Model) execLine(x *observe.Exec, selected bool, w int) string {
	s := m.styles
	mark := "  "
	if selected {
		mark = "▸ "
	}
	elapsed := x.Elapsed
	status := x.Status
	style := s.OK
	switch {
	case x.Running():
		elapsed = m.clock.Sub(x.Started)
		status, style = "running", s.Running
	case status == "error" || status == "died":
		style = s.Failed
	case status != "ok":
		style = s.Cancelled
	}
	where := "code"
	switch {
	case x.Notebook != "":
		where = x.Notebook
		if x.CellID != "" {
			where += "#" + short(x.CellID, 8)
		}
	case x.SandboxID != "":
		where = "sandbox " + x.SandboxID
	}
	on := ""
	if x.KernelID != "" && w >= 60 {
		on = " kernel " + short(x.KernelID, 8)
	}
	row := fmt.Sprintf("%s%-8s %s%s", mark, formatDuration(elapsed), where, s.Muted.Render(on))
	return fit(row, max(w-10, 1)) + " " + style.Render(status)
}

// kernelState colours a kernel or sandbox state.
func (m *Model) kernelState(state string) string {
	s := m.styles
	switch state {
	case "idle", "running":
		return s.OK.Render(state)
	case "busy", "starting", "restarting":
		return s.Running.Render(state)
	case "dead", "failed", "disconnected":
		return s.Failed.Render(state)
	}
	if strings.HasPrefix(state, "lost: ") {
		return s.Failed.Render(state)
	}
	return s.Muted.Render(state)
}
