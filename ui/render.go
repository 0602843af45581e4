package ui

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

// Drawing is kept cheap under an output flood in three ways. bubbletea calls
// View after every message, and a cell printing 200,000 lines sends a batch
// of events every few milliseconds, so:
//
//   - each pane's drawing is cached under a key naming everything it shows
//     (the versions of the state it reads, its selection, size and focus),
//     and a flood of output redraws the executions pane alone;
//   - with Options.FrameInterval set (Run sets it), engine events redraw the
//     screen at most once per interval: the frame in between is the last
//     one, and a redrawMsg scheduled for the end of the interval draws the
//     latest state. Keys and everything else the person does draw at once;
//   - lines of plain ASCII are fitted to a pane without the grapheme
//     segmentation that styled or wide text needs.

// defaultFrameInterval is Run's frame interval: 30 frames a second is
// smooth for a person and half the redraws of bubbletea's 60.
const defaultFrameInterval = time.Second / 30

// redrawMsg draws the state that engine events changed while drawing was
// held back by the frame interval.
type redrawMsg struct{}

// cached is one drawing and the key it was drawn under.
type cached[K comparable] struct {
	ok  bool
	key K
	out string
}

// get returns the drawing for key, drawing it only when key changed.
func (c *cached[K]) get(key K, draw func() string) string {
	if !c.ok || c.key != key {
		c.key, c.out, c.ok = key, draw(), true
	}
	return c.out
}

// paneFrame is what every pane's drawing depends on besides the state it
// shows: its size and focus, the person's last change, and the times it
// shows.
type paneFrame struct {
	w, h    int
	focused bool
	// ui changes with every message that is not an engine event: keys,
	// the filter input, resizes, ticks. It covers what the person changes
	// (folds, filter, scroll) without naming each of those fields.
	ui uint64
	// times are the elapsed times the pane shows, as drawn; clock is the
	// drawing time in nanoseconds when the pane shows a countdown, else
	// zero.
	times string
	clock int64
}

// callsPaneKey names what the calls pane shows.
type callsPaneKey struct {
	paneFrame
	callsVer uint64
	selected string
	offset   int
	follow   bool
}

// execsPaneKey names what the executions pane shows.
type execsPaneKey struct {
	paneFrame
	execsVer, kernelsVer uint64
	selected             string
}

// detailPaneKey names what the detail pane shows.
type detailPaneKey struct {
	paneFrame
	callsVer       uint64
	callID         string
	version        string // what the detail tree was built from
	cursor, offset int
}

// notebookPaneKey names what the notebook pane shows.
type notebookPaneKey struct {
	paneFrame
	notebooksVer, kernelsVer uint64
	name                     string
	cell                     int
	notebookVer              uint64 // the notebook shown
	actedOn                  string // the cell the selected call acted on
	images                   uint64 // the images decoded so far (decode.go)
}

// statsKey names what the stats view shows.
type statsKey struct {
	paneFrame
	callsVer, serverVer uint64
}

// headerKey names what the header shows.
type headerKey struct {
	w                        int
	calls, notebooks, server uint64
	closed                   bool
	replayPaused             bool
	held                     string // the held calls and their countdown
	showToken                bool
}

// imageKey names what the full-window image's frame shows.
type imageKey struct {
	seq   uint64
	ready bool
	w, h  int
}

// footerKey names what the footer shows.
type footerKey struct {
	w         int
	pending   pendingKind
	status    string
	statusErr bool
	enabled   uint32 // one bit per binding of the short help
	paused    bool   // the pause key's help text
	zoomed    bool   // the zoom key's help text
}

// viewCache is shared by every copy of a Model (bubbletea passes the model
// by value), so what one View drew serves the next.
type viewCache struct {
	gen      uint64 // source of Model.uiVer
	header   cached[headerKey]
	footer   cached[footerKey]
	calls    cached[callsPaneKey]
	detail   cached[detailPaneKey]
	notebook cached[notebookPaneKey]
	execs    cached[execsPaneKey]
	// cells are the notebook pane's cells as drawn (notebook.go).
	cells map[cellSlot]cellDrawing

	labels map[event.CallStatus]string // call statuses in their colours
	vis    visCache                    // the calls the search lets through (search.go)
	stats  cached[statsKey]            // the stats view (stats.go)

	// The diff of a resent call's result with its original's (resend.go).
	resendKey, resendDiff string

	// kittyShown says a kitty image was drawn: every frame of the panes
	// starts with its delete from then on (imageview.go says why).
	kittyShown bool
	image      cached[imageKey] // the full-window image's frame
	// The scrolling part of the held-call card (cardview.go).
	cardKey  string
	cardBody cardBody
	images   imageCache // the notebook's images, decoded (decode.go)

	// The detail pane's line count for the layout (split.go).
	detailNeedKey detailNeedKey
	detailNeedN   int
	detailNeedOK  bool

	frame         string    // the last screen drawn
	drawnAt       time.Time // the clock it was drawn at
	redrawPending bool      // a redrawMsg is on its way
}

// nextGen returns a value of Model.uiVer never used before, so that two
// copies of a model that diverged never share a drawing.
func (vc *viewCache) nextGen() uint64 {
	vc.gen++
	return vc.gen
}

// throttle decides, after a batch of engine events, whether the screen
// waits for the end of the frame interval; it returns the command that
// ends the wait, when one is not already on its way.
func (m *Model) throttle() tea.Cmd {
	if m.frameEvery <= 0 || m.vc.frame == "" {
		return nil
	}
	since := m.clock.Sub(m.vc.drawnAt)
	if since >= m.frameEvery || since < 0 {
		return nil
	}
	m.deferDraw = true
	if m.vc.redrawPending {
		return nil
	}
	m.vc.redrawPending = true
	return tea.Tick(m.frameEvery-since, func(time.Time) tea.Msg { return redrawMsg{} })
}

// View draws the whole screen from the cached drawings of the panes whose
// inputs did not change.
func (m Model) View() string {
	vc := m.vc
	if m.width < minWidth || m.height < minHeight {
		vc.frame = ""
		return m.tooSmallView()
	}
	if m.img != nil {
		v := m.img
		vc.frame = ""
		return vc.image.get(imageKey{v.seq, v.ready, m.width, m.height}, m.imageFrame)
	}
	if m.deferDraw && vc.frame != "" {
		return vc.frame
	}
	l := m.layout()
	header := vc.header.get(headerKey{m.width, m.st.CallsVer, m.st.NotebooksVer, m.st.ServerVer, m.closed, m.replayPaused, m.heldHeader(), m.showToken}, m.headerView)
	footer := vc.footer.get(m.footerKey(), m.footerView)
	var body []string
	bodyW := m.width
	switch {
	case m.showHelp:
		body = strings.Split(m.helpView(m.width, m.height-l.headerH-l.footerH), "\n")
	case m.cardCall() != nil:
		body, bodyW = m.cardScreen(l)
	case m.showStats:
		bh := m.height - l.headerH - l.footerH
		body = strings.Split(vc.stats.get(statsKey{paneFrame{w: m.width, h: bh, ui: m.uiVer}, m.st.CallsVer, m.st.ServerVer}, func() string {
			return strings.Join(m.statsLines(m.width, bh), "\n")
		}), "\n")
	case m.startView():
		// Nothing has happened yet: how to connect (connect.go).
		body = m.startScreen(m.width, m.height-l.headerH-l.footerH)
	case m.zoomed:
		// The focused pane alone, the window's width and the body's
		// height (layout measured every pane so).
		body = strings.Split(m.zoomedPane(l), "\n")
		bodyW = l.leftW
	default:
		calls := vc.calls.get(m.callsKey(l), func() string {
			return m.callsBox(l, m.focus == FocusCalls)
		})
		execs := vc.execs.get(m.execsKey(l), func() string {
			return m.box(m.execs.title(&m), m.execs.view(&m, l.leftW-2, l.execsH-2), l.leftW, l.execsH, m.focus == FocusExecs)
		})
		detail := vc.detail.get(m.detailKey(l), func() string {
			return m.box(m.detail.title(&m), m.detail.view(&m, l.rightW-2, l.detailH-2), l.rightW, l.detailH, m.focus == FocusDetail)
		})
		notebook := vc.notebook.get(m.notebookKey(l), func() string {
			return m.box(m.notebook.title(&m), m.notebook.view(&m, l.rightW-2, l.nbH-2), l.rightW, l.nbH, m.focus == FocusNotebook)
		})
		// Every box is exactly its size, so the columns join line by line
		// without measuring a line.
		left := strings.Split(calls+"\n"+execs, "\n")
		right := strings.Split(detail+"\n"+notebook, "\n")
		body = make([]string, max(len(left), len(right)))
		for i := range body {
			if i < len(left) {
				body[i] = left[i]
			}
			if i < len(right) {
				body[i] += right[i]
			}
		}
		bodyW = l.leftW + l.rightW
	}
	// The header and footer are the window's width; on a window narrower
	// than the two columns' minimum they are padded to the body's width,
	// as lipgloss.JoinVertical would.
	pad := ""
	if bodyW > m.width {
		pad = strings.Repeat(" ", bodyW-m.width)
	}
	var sb strings.Builder
	sb.Grow(len(header) + len(footer) + len(body)*(bodyW+16))
	if vc.kittyShown {
		sb.WriteString(m.kittyDeleteSeq())
	}
	for _, line := range strings.Split(header, "\n") {
		sb.WriteString(line + pad + "\n")
	}
	for _, line := range body {
		sb.WriteString(line)
		sb.WriteByte('\n')
	}
	sb.WriteString(footer + pad)
	vc.frame, vc.drawnAt = sb.String(), m.clock
	return vc.frame
}

// cardScreen draws the body with the held-call card open: over the right
// column on a wide screen (the timeline stays in view beside it), over the
// whole body otherwise or when the person asked for it (z).
func (m *Model) cardScreen(l layout) ([]string, int) {
	c := m.cardCall()
	bh := m.height - l.headerH - l.footerH
	// The card's call being edited (e) shows the editor in its place.
	card := func(w int) string {
		if m.held.mode == editArgs && m.held.callID == c.ID {
			lines := m.editorLines(w - 2)
			return m.box(" Edit "+c.ID+" ", lines[:min(len(lines), bh-2)], w, bh, true)
		}
		return m.box(m.cardTitle(c), m.cardLines(c, w-2, bh-2), w, bh, true)
	}
	if !m.cardWide() {
		return strings.Split(card(m.width), "\n"), m.width
	}
	// The panes beside the card are drawn unfocused: the card has the keys.
	vc := m.vc
	ck, ek := m.callsKey(l), m.execsKey(l)
	ck.focused, ek.focused = false, false
	calls := vc.calls.get(ck, func() string {
		return m.box(m.calls.title(m), m.calls.view(m, l.leftW-2, l.callsH-2), l.leftW, l.callsH, false)
	})
	execs := vc.execs.get(ek, func() string {
		return m.box(m.execs.title(m), m.execs.view(m, l.leftW-2, l.execsH-2), l.leftW, l.execsH, false)
	})
	left := strings.Split(calls+"\n"+execs, "\n")
	right := strings.Split(card(l.rightW), "\n")
	body := make([]string, max(len(left), len(right)))
	for i := range body {
		if i < len(left) {
			body[i] = left[i]
		}
		if i < len(right) {
			body[i] += right[i]
		}
	}
	return body, l.leftW + l.rightW
}

// zoomedPane draws the focused pane, from the cache the pane is drawn in
// unzoomed (its key holds its size, so the two drawings never mix).
func (m *Model) zoomedPane(l layout) string {
	vc := m.vc
	switch m.focus {
	case FocusCalls:
		return vc.calls.get(m.callsKey(l), func() string { return m.callsBox(l, true) })
	case FocusExecs:
		return vc.execs.get(m.execsKey(l), func() string {
			return m.box(m.execs.title(m), m.execs.view(m, l.leftW-2, l.execsH-2), l.leftW, l.execsH, true)
		})
	case FocusDetail:
		return vc.detail.get(m.detailKey(l), func() string {
			return m.box(m.detail.title(m), m.detail.view(m, l.rightW-2, l.detailH-2), l.rightW, l.detailH, true)
		})
	}
	return vc.notebook.get(m.notebookKey(l), func() string {
		return m.box(m.notebook.title(m), m.notebook.view(m, l.rightW-2, l.nbH-2), l.rightW, l.nbH, true)
	})
}

// callsBox draws the timeline in its box, the calls out of view counted in
// its borders.
func (m *Model) callsBox(l layout, focused bool) string {
	_, below := m.calls.marks(m)
	return m.boxWith(m.calls.title(m), below, m.calls.view(m, l.leftW-2, l.callsH-2), l.leftW, l.callsH, focused)
}

// The smallest terminal the panes are drawn in. Below it the columns and
// their borders no longer fit, and a clear sentence beats a broken frame.
const (
	minWidth  = 80
	minHeight = 24
)

// tooSmallView fills the terminal with a sentence saying what size the
// workbench needs, wrapped and centred to the terminal's size.
func (m Model) tooSmallView() string {
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		// No size yet (bubbletea draws once before the first resize).
		return ""
	}
	msg := fmt.Sprintf("the workbench needs at least %dx%d; this terminal is %dx%d", minWidth, minHeight, w, h)
	lines := strings.Split(ansi.Wrap(msg, w, ""), "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	top := (h - len(lines)) / 2
	out := make([]string, h)
	for i := range out {
		line := ""
		if j := i - top; j >= 0 && j < len(lines) {
			line = strings.TrimSpace(lines[j])
			line = strings.Repeat(" ", max((w-ansi.StringWidth(line))/2, 0)) + line
		}
		out[i] = fit(m.styles.Warning.Render(line), w)
	}
	return strings.Join(out, "\n")
}

func (m *Model) footerKey() footerKey {
	k := footerKey{w: m.width, pending: m.pending.kind, status: m.status, statusErr: m.statusErr, paused: m.st.Server.Paused, zoomed: m.zoomed}
	for i, b := range m.keys.ShortHelp() {
		if b.Enabled() {
			k.enabled |= 1 << i
		}
	}
	return k
}

// clockIf is the clock for a pane key when the pane shows elapsed times.
func (m *Model) clockIf(shows bool) int64 {
	if shows {
		return m.clock.UnixNano()
	}
	return 0
}

func active(c *observe.Call) bool {
	return c.Status == event.CallRunning || c.Status == event.CallHeld
}

// The calls and executions panes show elapsed times of what runs; their
// keys hold those times as drawn, so a pane is redrawn when a time it shows
// changes (every millisecond under a second, every tenth of a second under
// a minute), not on every frame.

func (m *Model) callsKey(l layout) callsPaneKey {
	vis := m.calls.visible(m)
	var times []byte
	for _, c := range vis[min(m.calls.offset, len(vis)):min(m.calls.offset+l.callsH, len(vis))] {
		if active(c) {
			times = append(append(append(times, m.tookText(c)...), formatDuration(c.HeldTime(m.clock))...), ' ')
		}
	}
	return callsPaneKey{paneFrame: paneFrame{w: l.leftW, h: l.callsH, focused: m.focus == FocusCalls, ui: m.uiVer, times: string(times)},
		callsVer: m.st.CallsVer, selected: m.calls.selected, offset: m.calls.offset, follow: m.calls.follow}
}

func (m *Model) execsKey(l layout) execsPaneKey {
	var times []byte
	for _, x := range m.st.Execs {
		if x.Running() {
			times = append(append(times, formatDuration(m.clock.Sub(x.Started))...), ' ')
		}
	}
	return execsPaneKey{paneFrame: paneFrame{w: l.leftW, h: l.execsH, focused: m.focus == FocusExecs, ui: m.uiVer, times: string(times)},
		execsVer: m.st.ExecsVer, kernelsVer: m.st.KernelsVer, selected: m.execs.selected}
}

func (m *Model) detailKey(l layout) detailPaneKey {
	c := m.selectedCall()
	// A running call shows its time so far; a finished one may show cache
	// TTLs counting down, which only _meta with a ttlMs holds.
	var times string
	if c != nil && active(c) {
		times = m.detailTimes(c)
	}
	ticking := c != nil && bytes.Contains(c.Meta, []byte(`"ttlMs"`))
	k := detailPaneKey{paneFrame: paneFrame{w: l.rightW, h: l.detailH, focused: m.focus == FocusDetail, ui: m.uiVer, times: times, clock: m.clockIf(ticking)},
		callsVer: m.st.CallsVer, callID: m.detail.callID, version: m.detail.version, cursor: m.detail.cursor, offset: m.detail.offset}
	if awaitsDecision(c) {
		// The card counts down to the denial and scrolls on its own.
		k.times, k.offset = m.cardTitle(c), m.card.offset
	}
	return k
}

func (m *Model) notebookKey(l layout) notebookPaneKey {
	k := notebookPaneKey{paneFrame: paneFrame{w: l.rightW, h: l.nbH, focused: m.focus == FocusNotebook, ui: m.uiVer},
		notebooksVer: m.st.NotebooksVer, kernelsVer: m.st.KernelsVer, name: m.notebook.name, cell: m.notebook.cell, images: m.vc.images.gen}
	if nb := m.st.Notebooks[m.notebook.name]; nb != nil {
		k.notebookVer, k.actedOn = nb.Ver, m.actedOnCell(nb)
	}
	return k
}

// box draws a pane of exactly w×h cells with its title in the top border.
func (m *Model) box(title string, lines []string, w, h int, focused bool) string {
	return m.boxWith(title, "", lines, w, h, focused)
}

// boxWith is box with words in the bottom border too (the timeline's "more
// below").
func (m *Model) boxWith(title, bottom string, lines []string, w, h int, focused bool) string {
	b, bs, ts := m.styles.BlurredBorder, m.styles.PaneBlurred, m.styles.TitleBlur
	if focused {
		b, bs, ts = m.styles.FocusedBorder, m.styles.PaneFocused, m.styles.Title
	}
	inner := max(w-2, 0)
	title = ansi.Truncate(termtext.String(title), max(inner-2, 0), "…")
	tw := ansi.StringWidth(title)
	// The side borders are the same on every line: style them once.
	left, right := bs.Render(b.Left), bs.Render(b.Right)
	var sb strings.Builder
	sb.WriteString(bs.Render(b.TopLeft + b.Top))
	sb.WriteString(ts.Render(title))
	sb.WriteString(bs.Render(strings.Repeat(b.Top, max(inner-1-tw, 0)) + b.TopRight))
	plain := m.noColour()
	for i := 0; i < h-2; i++ {
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		if plain {
			line = stripColour(line)
		}
		sb.WriteString("\n")
		sb.WriteString(left)
		sb.WriteString(fit(line, inner))
		sb.WriteString(right)
	}
	if bottom = ansi.Truncate(termtext.String(bottom), max(inner-2, 0), "…"); bottom != "" {
		bw := ansi.StringWidth(bottom)
		sb.WriteString("\n" + bs.Render(b.BottomLeft+b.Bottom) + ts.Render(bottom) + bs.Render(strings.Repeat(b.Bottom, max(inner-1-bw, 0))+b.BottomRight))
		return sb.String()
	}
	sb.WriteString("\n" + bs.Render(b.BottomLeft+strings.Repeat(b.Bottom, inner)+b.BottomRight))
	return sb.String()
}

// fit truncates or pads s (which may hold ANSI styles) to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if plainASCII(s) {
		// One byte is one cell: what ansi.Truncate and StringWidth
		// compute, without segmenting graphemes. Most output lines of a
		// flood take this path.
		if len(s) > w {
			return s[:w-1] + "…"
		}
		if len(s) == w {
			return s
		}
		return s + strings.Repeat(" ", w-len(s))
	}
	// Outside text was sanitized as it entered the Model (sanitize.go);
	// this second pass keeps anything that reached a pane another way
	// harmless. It costs one scan and no allocation on a clean line.
	s = ansi.Truncate(termtext.String(s), w, "…")
	if pad := w - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// plainASCII reports whether s is printable ASCII only: no escapes, no
// control characters, no wide or combining characters.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
