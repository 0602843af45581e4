package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// notebookPane shows the cells of one notebook in use, updated live.
type notebookPane struct {
	name    string // notebook shown
	cell    int    // selected cell index
	failOff int    // the first line shown of Jupyter's failure, when it is shown (connect.go)
}

// Bounds of a drawn cell.
const (
	cellSourceLines = 8 // source lines per cell
	cellOutputs     = 3 // outputs drawn per cell (the latest)
	outputLines     = 6 // text lines per output (the last)
)

// imageRows is how many character rows an image may take: a third of the
// window's body, so a plot grows with the window (it is never measured
// against the notebook pane's own height, which is split by what the cells
// need).
func (m *Model) imageRows() int {
	return clamp((m.height-3)/3, 4, 40)
}

func (p *notebookPane) title(m *Model) string {
	nb := m.st.Notebooks[p.name]
	if nb == nil {
		return " Notebooks "
	}
	t := fmt.Sprintf(" %s · %d cells ", nb.Name, len(nb.Cells))
	if n := len(m.st.NotebookOrder); n > 1 {
		t += fmt.Sprintf("· %d/%d ←→ ", IndexOf(m.st.NotebookOrder, p.name)+1, n)
	}
	if k, ok := m.st.Kernels[nb.KernelID]; ok {
		t += "· kernel " + k.State + " "
	}
	return t
}

func IndexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// follow keeps the pane on a notebook that exists and, unless the person is
// working in the pane, moves to the cell that changed last.
func (p *notebookPane) follow(m *Model, evs eventsMsg) {
	if _, ok := m.st.Notebooks[p.name]; !ok {
		p.name, p.cell = "", 0
		if n := len(m.st.NotebookOrder); n > 0 {
			p.name = m.st.NotebookOrder[n-1]
		}
	}
	if m.focus != FocusNotebook {
		for i := len(evs) - 1; i >= 0; i-- {
			ev := evs[i]
			if ev.Notebook == nil || ev.Type == event.EvNotebookClosed {
				continue
			}
			if nb := m.st.Notebooks[ev.Notebook.Name]; nb != nil {
				p.name = nb.Name
				changed := ev.Type == event.EvNotebookChanged || ev.Type == event.EvNotebookOutsideEdit
				if at := nb.IndexOf(nb.LastCellID); at >= 0 && changed {
					p.cell = at
				}
			}
			break
		}
	}
	if nb := m.st.Notebooks[p.name]; nb != nil {
		p.cell = clamp(p.cell, 0, max(len(nb.Cells)-1, 0))
	}
}

func (p *notebookPane) handleKey(m *Model, msg tea.KeyMsg) {
	k := m.keys
	nb := m.st.Notebooks[p.name]
	switch {
	case key.Matches(msg, k.PrevNotebook), key.Matches(msg, k.NextNotebook):
		order := m.st.NotebookOrder
		if len(order) == 0 {
			return
		}
		d := 1
		if key.Matches(msg, k.PrevNotebook) {
			d = -1
		}
		i := (IndexOf(order, p.name) + d + len(order)) % len(order)
		p.name, p.cell = order[i], 0
		return
	case nb == nil:
		if m.jupyterFailurePane() {
			p.scrollFailure(m, msg)
		}
		return
	case key.Matches(msg, k.Up):
		p.cell--
	case key.Matches(msg, k.Down):
		p.cell++
	case key.Matches(msg, k.PageUp):
		p.cell -= 5
	case key.Matches(msg, k.PageDown):
		p.cell += 5
	case key.Matches(msg, k.Top):
		p.cell = 0
	case key.Matches(msg, k.Bottom):
		p.cell = len(nb.Cells) - 1
	}
	p.cell = clamp(p.cell, 0, max(len(nb.Cells)-1, 0))
}

// showCall moves the pane to the cell a call acted on, unless the person
// is working in the pane.
func (p *notebookPane) showCall(m *Model, c *observe.Call) {
	if c == nil || c.CellID == "" || m.focus == FocusNotebook {
		return
	}
	name := c.Notebook
	if name == "" {
		name = p.name
	}
	if nb := m.st.Notebooks[name]; nb != nil {
		if at := nb.IndexOf(c.CellID); at >= 0 {
			p.name, p.cell = name, at
		}
	}
}

// actedOnCell is the id of the cell the selected call acted on, when that
// call concerns the notebook shown.
func (m *Model) actedOnCell(nb *observe.Notebook) string {
	c := m.selectedCall()
	if c == nil || c.CellID == "" || (c.Notebook != "" && c.Notebook != nb.Name) {
		return ""
	}
	return c.CellID
}

// view draws the cells from the first one, or from the selected one when
// that would not be visible otherwise.
func (p *notebookPane) view(m *Model, w, h int) []string {
	s := m.styles
	nb := m.st.Notebooks[p.name]
	if nb == nil {
		if m.jupyterFailurePane() {
			return p.failureView(m, w, h)
		}
		return []string{s.Muted.Render("no notebook in use")}
	}
	head := s.Muted.Render(nb.Path)
	if nb.KernelID != "" {
		head += s.Muted.Render(" · kernel " + short(nb.KernelID, 8))
	}
	lines := []string{head}
	if len(nb.Cells) == 0 {
		return append(lines, s.Muted.Render("(empty notebook)"))
	}
	acted := m.actedOnCell(nb)
	start, _ := p.visibleCells(m, nb, w, h)
	if start > 0 {
		lines = append(lines, s.Muted.Render(fmt.Sprintf("… %d %s above", start, plural(start, "cell", "cells"))))
	}
	for i := start; i < len(nb.Cells) && len(lines) < h; i++ {
		lines = append(lines, m.cellBlock(nb, i, w, acted)...)
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return lines
}

// visibleCells is the range of cells the pane shows at w×h: from the first
// cell when the selected one fits below it, otherwise from as far up as
// still shows the selected cell whole, down to the last that starts inside
// the pane.
func (p *notebookPane) visibleCells(m *Model, nb *observe.Notebook, w, h int) (start, end int) {
	acted := m.actedOnCell(nb)
	start, used := p.cell, 2 // the path line and the "cells above" line
	for i := p.cell; i >= 0; i-- {
		used += len(m.cellBlock(nb, i, w, acted))
		if used > h && i < p.cell {
			break
		}
		start = i
	}
	used = 2
	end = start
	for end < len(nb.Cells) && used < h {
		used += len(m.cellBlock(nb, end, w, acted))
		end++
	}
	return start, end
}

// cellSlot is where a drawn cell sits: its notebook and index (the index is
// part of the drawing).
type cellSlot struct {
	nb string
	i  int
}

// cellDrawing is one cell as drawn, with everything the drawing depends on
// besides its slot: the cell's version, the width, and the marks of its
// header.
type cellDrawing struct {
	ver                  uint64
	w, imgRows, decoded  int // decoded: the images of its drawn outputs ready (decode.go)
	mark, changed, acted bool
	lines                []string
}

// cellDrawingsMax bounds the drawings kept: past it they start over.
const cellDrawingsMax = 8192

// cellBlock is cellLines from the cache of drawn cells: a cell is drawn
// again only when it changed (a new version), moved, or its marks or the
// width changed. Scrolling draws only the cells coming into view, and an
// output arriving draws only its own cell.
func (m *Model) cellBlock(nb *observe.Notebook, i, w int, acted string) []string {
	c := &nb.Cells[i]
	key := cellDrawing{ver: c.Ver, w: w, imgRows: m.imageRows(), decoded: decodedCount(c.Outputs),
		mark:    i == m.notebook.cell && m.focus == FocusNotebook,
		changed: c.ID == nb.LastCellID,
		acted:   c.ID != "" && c.ID == acted}
	slot := cellSlot{nb.Name, i}
	if d, ok := m.vc.cells[slot]; ok && d.ver == key.ver && d.w == key.w && d.imgRows == key.imgRows && d.decoded == key.decoded &&
		d.mark == key.mark && d.changed == key.changed && d.acted == key.acted {
		return d.lines
	}
	key.lines = m.cellLines(nb, i, w, acted)
	if m.vc.cells == nil || len(m.vc.cells) >= cellDrawingsMax {
		m.vc.cells = map[cellSlot]cellDrawing{}
	}
	m.vc.cells[slot] = key
	return key.lines
}

// cellLines draws one cell: a header, its source and its latest outputs,
// each bounded, with counts of what was left out.
func (m *Model) cellLines(nb *observe.Notebook, i, w int, acted string) []string {
	s := m.styles
	c := nb.Cells[i]
	mark := "  "
	if i == m.notebook.cell && m.focus == FocusNotebook {
		mark = "▸ "
	}
	label := c.Type
	if c.Type == "code" {
		count := " "
		if c.ExecutionCount != nil {
			count = itoa(*c.ExecutionCount)
		}
		label = "[" + count + "] code"
	}
	header := fmt.Sprintf("%s%d %s · %s", mark, i, label, c.ID)
	if c.ID == nb.LastCellID {
		header += " · changed"
	}
	if c.ID != "" && c.ID == acted {
		header = s.Highlight.Render(fit(header+" ◆ acted on", w))
	} else {
		header = s.Bold.Render(header)
	}
	out := []string{header}

	src := strings.Split(strings.TrimRight(c.Source, "\n"), "\n")
	shown := min(len(src), cellSourceLines)
	for _, l := range src[:shown] {
		out = append(out, s.Muted.Render("  │ ")+strings.ReplaceAll(l, "\t", "    "))
	}
	if more := len(src) - shown; more > 0 {
		out = append(out, s.Muted.Render(fmt.Sprintf("  │ … %d more lines", more)))
	}
	if c.SourceCut > 0 {
		out = append(out, s.Muted.Render(fmt.Sprintf("  │ … %d more bytes not kept", c.SourceCut)))
	}

	outs := c.Outputs
	omitted := c.OutputsOmitted
	if len(outs) > cellOutputs {
		omitted += len(outs) - cellOutputs
		outs = outs[len(outs)-cellOutputs:]
	}
	if omitted > 0 {
		out = append(out, s.Muted.Render(fmt.Sprintf("  ⋮ %d earlier outputs not shown", omitted)))
	}
	for _, o := range outs {
		out = append(out, m.outputLines(o, w)...)
	}
	return out
}

// outputLines draws one output: the tail of its text, or the image in
// half blocks.
func (m *Model) outputLines(o observe.Output, w int) []string {
	s := m.styles
	kind := o.Kind
	if o.Name != "" {
		kind += " " + o.Name
	}
	if o.MimeType != "" && o.MimeType != "text/plain" {
		kind += " " + o.MimeType
	}
	style := s.Muted
	if o.Kind == "error" || o.Name == "stderr" {
		style = s.Error
	}
	out := []string{style.Render("  ⇒ " + kind)}
	if len(o.Image) > 0 {
		var d *decodedImage
		if shown, _ := o.Decoded.(*shownImage); shown != nil {
			d = shown.dec
		}
		switch {
		case d != nil && d.ready && d.img != nil:
			for _, l := range d.art.draw(d.img, w-4, m.imageRows(), m.styles.Renderer.ColorProfile()) {
				out = append(out, "    "+l)
			}
		case d != nil && d.ready:
			out = append(out, s.Error.Render("    cannot draw image: "+d.err))
		case d != nil:
			out = append(out, s.Muted.Render(fmt.Sprintf("    [%s, %s] decoding…", o.MimeType, formatBytes(int64(len(o.Image))))))
		default:
			out = append(out, s.Muted.Render(fmt.Sprintf("    [%s, %s]", o.MimeType, formatBytes(int64(len(o.Image))))))
		}
		return out
	}
	// Only the last lines are drawn, so only they are split: an output
	// of thousands of lines costs no more than a short one.
	body := strings.TrimRight(outputText(&o.OutputSnapshot), "\n")
	total := strings.Count(body, "\n") + 1
	if body == "" {
		total = 0
	}
	start := len(body)
	for i := 0; i < outputLines && start > 0; i++ {
		start = strings.LastIndexByte(body[:start], '\n')
		if start < 0 {
			start = 0
			break
		}
	}
	tail := strings.TrimPrefix(body[start:], "\n")
	var text []string
	if tail != "" {
		text = strings.Split(tail, "\n")
	}
	if hidden := total - len(text); hidden > 0 {
		out = append(out, s.Muted.Render(fmt.Sprintf("    … %d earlier lines", hidden)))
	}
	for _, l := range text {
		out = append(out, "    "+strings.ReplaceAll(l, "\t", "    "))
	}
	return out
}

// outputText is the text the notebook pane draws for a text output, before
// layout: the output model's text, then the note saying where it was cut,
// exactly as the agent reads it (but for the colours kept here).
func outputText(o *event.OutputSnapshot) string {
	if o.Cut == nil {
		return o.Text
	}
	return o.Text + "\n" + o.Cut.Note()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// decodedCount counts the drawn outputs' images being decoded (one each)
// and decoded (two each): a cell's drawing changes with either.
func decodedCount(outs []observe.Output) int {
	n := 0
	for _, o := range drawnOutputs(outs) {
		if si, _ := o.Decoded.(*shownImage); si != nil && si.dec != nil {
			n++
			if si.dec.ready {
				n++
			}
		}
	}
	return n
}

// failureView is the managed Jupyter server's failure to start, whole, in
// the pane that has no notebook to show: scrolled by ↑↓, never cut.
func (p *notebookPane) failureView(m *Model, w, h int) []string {
	lines := append([]string{m.styles.Error.Render("Jupyter failed to start")}, m.failureLines(w)...)
	return m.scrolled(lines, p.failOff, h, "↑ %d more lines above", "↓ %d more lines (↓, or z for the whole window)")
}

// scrollFailure scrolls the failure the pane shows.
func (p *notebookPane) scrollFailure(m *Model, msg tea.KeyMsg) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		p.failOff--
	case key.Matches(msg, k.Down):
		p.failOff++
	case key.Matches(msg, k.Top):
		p.failOff = 0
	}
	p.failOff = clamp(p.failOff, 0, len(m.failureLines(m.layout().rightW-2)))
}
