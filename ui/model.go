package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

// Focus is the pane that receives the moving keys.
type Focus int

// Panes, in tab order.
const (
	FocusCalls Focus = iota
	FocusDetail
	FocusNotebook
	FocusExecs
	focusCount
)

func (f Focus) String() string {
	switch f {
	case FocusCalls:
		return "calls"
	case FocusDetail:
		return "detail"
	case FocusNotebook:
		return "notebook"
	case FocusExecs:
		return "execs"
	}
	return "?"
}

// Messages.
type (
	// eventsMsg is a batch of engine events from the bridge.
	eventsMsg []event.Event
	// feedClosedMsg says the event stream ended.
	feedClosedMsg struct{}
	// tickMsg advances the clock once a second (elapsed times, cache TTLs).
	tickMsg time.Time
	// pendingExpiredMsg ends the window for the second press of a
	// double-press action.
	pendingExpiredMsg struct{ seq int }
	// actionDoneMsg reports the outcome of a human action on the backend.
	actionDoneMsg struct {
		what string
		err  error
	}
	// statusExpiredMsg clears the status line if it is still the one set.
	statusExpiredMsg struct{ seq int }
)

// pendingKind is an action waiting for its confirming second press.
type pendingKind int

const (
	pendingNone pendingKind = iota
	pendingInterrupt
	pendingCancel
	pendingUndo
	pendingDecide // a decision on a held call, asked again (card.go)
)

// confirmWindow is how long the second press of a double-press action may
// take.
const confirmWindow = 1500 * time.Millisecond

// pending is the first press of a double-press action.
type pending struct {
	kind   pendingKind
	target string // kernel id or call id (a decision: call id and key)
	why    string // a decision: what the second press confirms
	seq    int
}

// Model is the root model of the workbench. It owns the layout, the focus
// and the routing of keys and events; panes are files of this package.
type Model struct {
	backend Backend
	info    observe.HeaderInfo
	st      *observe.State
	styles  *theme.Styles // a pointer: the model is copied on every message
	keys    KeyMap
	help    help.Model
	now     func() time.Time
	clock   time.Time // the time panes are drawn at, advanced by ticks

	width, height int
	focus         Focus
	leftPct       int // width of the left column, percent
	callsPct      int // height of calls within the left column, percent
	detailPct     int // height of detail within the right column, percent
	showHelp      bool
	zoomed        bool // the focused pane has the whole window
	showStats     bool // the stats view takes the body (stats.go)
	stats         statsView
	manualLeft    bool // the person set the left column's split (split.go)
	manualRight   bool // and the right column's
	showToken     bool // t: the bearer token is shown whole (connect.go)
	startOffset   int  // the start screen's first line shown (connect.go)
	noResend      bool // resend can never work here (a replay, an attached workbench)

	calls    callsPane
	detail   detailPane
	notebook notebookPane
	execs    execsPane

	replay       Replayer // the backend when it plays a recording, else nil
	replayPaused bool     // as last set by the person
	replaySpeed  float64  // the replay's speed; negative: as fast as possible

	held heldEditor // the reason or arguments being typed for a held call (held.go)
	card cardState  // the held-call card (card.go)

	bell   func()                   // rings the terminal's bell, or nil
	notify func(title, body string) // a desktop notice, or nil (attention.go)

	resendWait string          // the call whose resend is to be selected when it shows (resend.go)
	resendSkip map[string]bool // its earlier resends

	pending   pending
	seq       int // for pending and status messages
	status    string
	statusErr bool
	closed    bool // the event stream ended
	copyFn    func(string) error
	exportDir string // where E writes; "" is the working directory

	img       *imageView        // the image open full-window, or nil
	imgTarget imageTarget       // how images are drawn full-window
	cellSize  func() (w, h int) // the terminal's cell in pixels, or nil
	// tmuxOffset is where tmux's pane starts in the terminal around it.
	tmuxOffset func() (rows, cols int)

	vc         *viewCache    // drawings kept between frames (render.go)
	uiVer      uint64        // changes with every message but engine events
	frameEvery time.Duration // engine events redraw at most once per this
	deferDraw  bool          // View shows the last frame: a redraw is on its way
}

// Options tune a Model.
type Options struct {
	// Now is the clock (tests pin it). Default time.Now.
	Now func() time.Time
	// Copy puts a string on the clipboard (OSC 52 on the TTY). Without it
	// the copy key reports that copying is unavailable.
	Copy func(string) error
	// FrameInterval is the least time between two screens drawn for
	// engine events (keys always draw at once). Zero draws after every
	// batch of events, which tests rely on; Run uses 1/30 s.
	FrameInterval time.Duration
	// ExportDir is where the export key writes its file. Default the
	// working directory (the temporary directory when that cannot be
	// written).
	ExportDir string
	// ImageProtocol is how an image opened full-window is drawn (Run
	// detects it); ImageReason says why, on screen; ImageTmux wraps the
	// escapes for tmux's passthrough. Default half blocks.
	ImageProtocol ImageProtocol
	ImageReason   string
	ImageTmux     bool
	// TmuxPaneOffset is where tmux's pane starts in the terminal around
	// tmux (rows above it, columns left of it), asked when an image is
	// opened inside tmux.
	TmuxPaneOffset func() (rows, cols int)
	// CellSize is the terminal's character cell in pixels (0, 0 when it
	// is not known), asked when an image is opened.
	CellSize func() (w, h int)
	// Bell rings the terminal's bell and Notify shows a desktop notice
	// (attention.go): both when a call is held for the person. Either may
	// be nil.
	Bell   func()
	Notify func(title, body string)
}

// NewModel returns the root model drawing with styles.
func NewModel(b Backend, styles theme.Styles, opts Options) Model {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	h := help.New()
	h.Styles = styles.Help
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = searchPlaceholder
	ti.CharLimit = 256
	m := Model{
		backend:    b,
		info:       sanitizeInfo(b.Info()),
		st:         observe.NewState(decodeShown),
		styles:     &styles,
		keys:       DefaultKeyMap(),
		help:       h,
		now:        now,
		clock:      now(),
		width:      80,
		height:     24,
		leftPct:    50,
		callsPct:   65,
		detailPct:  55,
		calls:      callsPane{follow: true, input: ti},
		copyFn:     opts.Copy,
		exportDir:  opts.ExportDir,
		imgTarget:  imageTarget{proto: opts.ImageProtocol, tmux: opts.ImageTmux, reason: opts.ImageReason},
		cellSize:   opts.CellSize,
		tmuxOffset: opts.TmuxPaneOffset,
		vc:         &viewCache{},
		frameEvery: opts.FrameInterval,
		bell:       opts.Bell,
		notify:     opts.Notify,
	}
	if m.imgTarget.proto == "" || m.imgTarget.proto == ImageAuto {
		m.imgTarget.proto = ImageHalfBlocks
	}
	m.detail.expanded = map[string]bool{}
	m.initReplay()
	if err := b.CanResend(); errors.Is(err, observe.ErrResendAttached) || errors.Is(err, observe.ErrResendReplay) {
		m.noResend = true
	}
	m.updateKeys()
	return m
}

// Init starts the clock.
func (m Model) Init() tea.Cmd { return tick() }

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Update routes messages.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	m.deferDraw = false
	switch msg.(type) {
	case eventsMsg, redrawMsg:
	default:
		// Anything but engine events may change what is drawn in ways the
		// pane keys do not name (keys, the filter input, a resize): draw
		// every pane afresh.
		m.uiVer = m.vc.nextGen()
	}
	switch msg := msg.(type) {
	case redrawMsg:
		m.vc.redrawPending = false
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		m.sizeEditor()
		if m.img != nil {
			// Prepared again for the new size; until then the view
			// says it is drawing.
			m.img.ready = false
			cmd = m.prepareImageCmd()
		}
	case imageReadyMsg:
		m.imageReady(msg)
	case imageDecodedMsg:
		m.imageDecoded(msg) // decode.go
	case eventsMsg:
		m.clock = m.now()
		for _, ev := range msg {
			m.noteRaw(ev)                 // card.go: what the sanitizer will turn into markers
			m.st.Apply(sanitizeEvent(ev)) // sanitize.go: where the sanitizer sits
		}
		cmd = tea.Batch(m.afterEvents(msg), m.throttle())
	case feedClosedMsg:
		m.closed = true
		m.status, m.statusErr = "the event stream ended: the server stopped or the recording is over", true
	case tickMsg:
		m.clock = m.now()
		cmd = tick()
	case pendingExpiredMsg:
		if m.pending.seq == msg.seq {
			m.pending = pending{}
		}
	case actionDoneMsg:
		if msg.err != nil {
			m.status, m.statusErr = termtext.String(msg.what+": "+msg.err.Error()), true
		} else {
			m.status, m.statusErr = termtext.String(msg.what), false
		}
		m.seq++
		seq := m.seq
		cmd = tea.Tick(5*time.Second, func(time.Time) tea.Msg { return statusExpiredMsg{seq} })
	case settledMsg:
		cmd = m.settled(msg)
	case editorDoneMsg:
		cmd = m.editorDone(msg)
	case resentMsg:
		cmd = m.resent(msg)
	case statusExpiredMsg:
		if msg.seq == m.seq && m.pending.kind == pendingNone {
			m.status = ""
		}
	case tea.KeyMsg:
		m, cmd = m.handleKey(msg)
	}
	if m.showStats {
		m.stats.refresh(&m)
	}
	// The card (card.go): opened once no input has the keyboard. The
	// panes' heights follow what they hold (split.go): a timeline that
	// grew keeps no blank rows under calls scrolled out of view. Then the
	// card's call is watched for a change, and how far it was read kept.
	m.openWanted()
	m.calls.clampSelection(&m)
	m.noteTarget()
	m.trackSeen()
	m.updateKeys()
	if dec := m.decodeInView(); dec != nil {
		cmd = tea.Batch(cmd, dec)
	}
	return m, cmd
}

// afterEvents keeps selections valid and follows new activity; a call held
// for the person is brought into view and announced (the command).
func (m *Model) afterEvents(evs eventsMsg) tea.Cmd {
	m.calls.clampSelection(m)
	m.heldGone()
	cmd := m.followHeld()
	m.followResend()
	m.notebook.follow(m, evs)
	m.execs.clampSelection(m)
	m.syncDetail()
	return cmd
}

// handleKey routes a key: first the filter input when it is open, then the
// global keys, then the focused pane.
func (m Model) handleKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	if m.width < minWidth || m.height < minHeight {
		// The screen only says it is too small: keys acting on what
		// cannot be seen (allow, cancel, interrupt) are not taken.
		if key.Matches(msg, m.keys.Quit) {
			return m, tea.Quit
		}
		return m, nil
	}
	if m.img != nil {
		return m.handleImageKey(msg)
	}
	if m.calls.filtering {
		return m.calls.handleFilterKey(m, msg)
	}
	if m.editing() {
		return m.handleEditorKey(msg)
	}
	k := m.keys
	if m.pending.kind == pendingDecide && !key.Matches(msg, k.Approve, k.Deny, k.AllowSession) ||
		m.pending.kind != pendingNone && m.pending.kind != pendingDecide && !key.Matches(msg, k.Interrupt, k.Cancel, k.Undo) {
		// A double press means two presses in a row: anything else
		// between them disarms the first.
		m.pending, m.status = pending{}, ""
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
		return m, nil
	}
	if m.showHelp {
		// Any other key closes the help screen.
		m.showHelp = false
		return m, nil
	}
	if m.cardCall() != nil {
		return m.handleCardKey(msg)
	}
	if m.showStats {
		return m.handleStatsKey(msg)
	}
	if m.startView() {
		if nm, ok := m.startScroll(msg); ok {
			return nm, nil
		}
	}
	if m.zoomed && msg.Type == tea.KeyEsc {
		// esc gives the window back before it does anything in the pane.
		m.zoomed = false
		return m, nil
	}
	switch {
	case key.Matches(msg, k.ReplayPause):
		m.replayPaused = !m.replayPaused
		return m, m.replayPauseCmd(m.replayPaused)
	case key.Matches(msg, k.ReplayStep):
		return m, m.replayStepCmd()
	case key.Matches(msg, k.Zoom):
		m.zoomed = !m.zoomed
	case key.Matches(msg, k.NextPane):
		m.focus = (m.focus + 1) % focusCount
	case key.Matches(msg, k.PrevPane):
		m.focus = (m.focus + focusCount - 1) % focusCount
	case key.Matches(msg, k.Wider):
		m.leftPct = min(m.leftPct+5, 80)
	case key.Matches(msg, k.Narrower):
		m.leftPct = max(m.leftPct-5, 20)
	case key.Matches(msg, k.Taller), key.Matches(msg, k.Shorter):
		d := 5
		if key.Matches(msg, k.Shorter) {
			d = -5
		}
		m.resizeFocused(d) // split.go
	case key.Matches(msg, k.CopyToken):
		return m, m.copyTokenCmd()
	case key.Matches(msg, k.ShowToken):
		return m.toggleToken()
	case key.Matches(msg, k.OpenImage):
		return m.openImage()
	case key.Matches(msg, k.CopyCall):
		return m, m.copyCallCmd()
	case key.Matches(msg, k.Export):
		return m, m.exportCmd()
	case key.Matches(msg, k.Stats):
		m.showStats = true
	case key.Matches(msg, k.Pause):
		return m, m.setPausedCmd(!m.st.Server.Paused)
	case key.Matches(msg, k.Interrupt):
		return m.press(pendingInterrupt)
	case key.Matches(msg, k.Cancel):
		return m.press(pendingCancel)
	case key.Matches(msg, k.Undo):
		return m.press(pendingUndo)
	case key.Matches(msg, k.Resend):
		if c := m.resendTarget(); c != nil {
			return m, m.startResend(c)
		}
	case key.Matches(msg, k.Approve), key.Matches(msg, k.Deny):
		d := decideDeny
		if key.Matches(msg, k.Approve) {
			d = decideAllow
		}
		if c := m.shownHeld(); c != nil {
			return m.decide(c, d)
		}
		if c := m.selectedCall(); c != nil && c.Status == event.CallHeld {
			return m, m.decideCmd(c.ID, d == decideAllow)
		}
	case key.Matches(msg, k.AllowSession):
		if c := m.shownHeld(); c != nil {
			return m.decide(c, decideAllowSession)
		}
		if c := m.selectedCall(); c != nil && c.Status == event.CallHeld {
			return m, m.settleCmd(c.ID, calls.Verdict{Allow: true, ForSession: true}, "allowed "+c.Tool+" for session "+short(c.Session, 8))
		}
	case key.Matches(msg, k.NextHeld):
		if q := m.heldQueue(); len(q) > 0 {
			m.openCard(q[0])
		}
	case key.Matches(msg, k.DenyReason):
		if c := m.selectedCall(); c != nil && c.Status == event.CallHeld {
			return m, m.startReason(c)
		}
	case key.Matches(msg, k.EditArgs):
		if c := m.selectedCall(); c != nil && c.Status == event.CallHeld {
			return m, m.startEdit(c)
		}
	case key.Matches(msg, k.RevokeAll):
		if len(m.st.Server.Allowed) > 0 {
			return m, m.revokeCmd()
		}
	// n and N share their keys with deny (and deny with a reason): they
	// are enabled only when the selected call is not held (updateKeys),
	// so a held call takes precedence.
	case key.Matches(msg, k.NextMatch):
		return m.jumpMatch(1)
	case key.Matches(msg, k.PrevMatch):
		return m.jumpMatch(-1)
	default:
		switch m.focus {
		case FocusCalls:
			return m.calls.handleKey(m, msg)
		case FocusDetail:
			m.detail.handleKey(&m, msg)
		case FocusNotebook:
			m.notebook.handleKey(&m, msg)
		case FocusExecs:
			m.execs.handleKey(&m, msg)
		}
	}
	return m, nil
}

// press handles a double-press action: the first press arms it and says so,
// the second within confirmWindow on the same target runs it.
func (m Model) press(kind pendingKind) (Model, tea.Cmd) {
	var target, what string
	switch kind {
	case pendingInterrupt:
		target = m.interruptTarget()
		what = "press i again to interrupt kernel " + short(target, 8)
	case pendingCancel:
		if c := m.selectedCall(); c != nil && (c.Status == event.CallRunning || c.Status == event.CallHeld) {
			target = c.ID
			what = "press x again to cancel " + c.Tool
		}
	case pendingUndo:
		if c := m.undoTarget(); c != nil {
			target = c.ID
			what = "press u again to undo " + callLabel(c)
		}
	}
	if target == "" {
		return m, nil
	}
	if m.pending.kind == kind && m.pending.target == target {
		m.pending = pending{}
		m.status = ""
		switch kind {
		case pendingInterrupt:
			return m, m.interruptCmd(target)
		case pendingUndo:
			return m, m.undoCmd(target)
		}
		return m, m.cancelCmd(target)
	}
	m.seq++
	m.pending = pending{kind: kind, target: target, seq: m.seq}
	m.status, m.statusErr = what, false
	seq := m.seq
	return m, tea.Tick(confirmWindow, func(time.Time) tea.Msg { return pendingExpiredMsg{seq} })
}

// Commands: each calls the backend off the UI goroutine and reports back.

func (m Model) interruptCmd(kernelID string) tea.Cmd {
	b := m.backend
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return actionDoneMsg{"interrupted kernel " + short(kernelID, 8), b.InterruptKernel(ctx, kernelID)}
	}
}

func (m Model) cancelCmd(callID string) tea.Cmd {
	b := m.backend
	return func() tea.Msg { return actionDoneMsg{"cancelled call " + callID, b.CancelCall(callID)} }
}

func (m Model) setPausedCmd(paused bool) tea.Cmd {
	b := m.backend
	what := "resumed new calls"
	if paused {
		what = "paused new calls"
	}
	return func() tea.Msg { return actionDoneMsg{what, b.SetPaused(paused)} }
}

func (m Model) decideCmd(callID string, allow bool) tea.Cmd {
	b := m.backend
	what := "denied call " + callID
	if allow {
		what = "allowed call " + callID
	}
	return func() tea.Msg { return actionDoneMsg{what, b.Decide(callID, calls.Verdict{Allow: allow})} }
}

func (m Model) copyTokenCmd() tea.Cmd {
	tok, copyFn := m.info.Token, m.copyFn
	return func() tea.Msg {
		switch {
		case tok == "":
			return actionDoneMsg{"copy", fmt.Errorf("no token to copy")}
		case copyFn == nil:
			return actionDoneMsg{"copy", fmt.Errorf("no clipboard on this terminal")}
		}
		return actionDoneMsg{copyTokenDone, copyFn(tok)}
	}
}

// selectedCall is the call selected in the calls pane, or nil.
func (m *Model) selectedCall() *observe.Call { return m.st.Call(m.calls.selected) }

// interruptTarget is the kernel the interrupt key acts on: the kernel of the
// selected call's running execution when the calls or detail pane has focus,
// else the kernel of the execution selected in the executions pane, else the
// kernel of the notebook shown.
func (m *Model) interruptTarget() string {
	if m.focus == FocusCalls || m.focus == FocusDetail {
		if c := m.selectedCall(); c != nil {
			for _, x := range m.st.Execs {
				if x.CallID == c.ID && x.Running() && x.KernelID != "" {
					return x.KernelID
				}
			}
		}
	}
	if m.focus == FocusNotebook {
		if nb := m.st.Notebooks[m.notebook.name]; nb != nil && nb.KernelID != "" {
			return nb.KernelID
		}
	}
	if x := m.execs.selectedExec(m); x != nil && x.Running() && x.KernelID != "" {
		return x.KernelID
	}
	return ""
}

// updateKeys enables the bindings that apply now, so help stays honest.
func (m *Model) updateKeys() {
	k := &m.keys
	// Bindings the stats view and the held-call card turn off (below), on
	// again by default.
	for _, b := range []*key.Binding{&k.NextPane, &k.PrevPane, &k.Wider, &k.Narrower, &k.Taller, &k.Shorter, &k.Zoom,
		&k.Pause, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom, &k.Stats} {
		b.SetEnabled(true)
	}
	c := m.selectedCall()
	held := c != nil && c.Status == event.CallHeld
	k.Approve.SetEnabled(held)
	k.Deny.SetEnabled(held)
	k.AllowSession.SetEnabled(held)
	k.DenyReason.SetEnabled(held)
	k.EditArgs.SetEnabled(held && c.Editable)
	k.RevokeAll.SetEnabled(len(m.st.Server.Allowed) > 0)
	k.Cancel.SetEnabled(c != nil && (c.Status == event.CallRunning || held))
	k.Interrupt.SetEnabled(m.interruptTarget() != "")
	k.Undo.SetEnabled(m.undoTarget() != nil)
	k.Resend.SetEnabled(m.resendTarget() != nil && !m.noResend)
	k.Filter.SetEnabled(m.focus == FocusCalls)
	k.ClearFilter.SetEnabled(m.focus == FocusCalls && m.calls.filter != "")
	k.Toggle.SetEnabled(m.focus == FocusDetail && m.detail.root != nil)
	multi := len(m.st.NotebookOrder) > 1
	k.PrevNotebook.SetEnabled(m.focus == FocusNotebook && multi)
	k.NextNotebook.SetEnabled(m.focus == FocusNotebook && multi)
	k.CopyToken.SetEnabled(m.info.Token != "")
	k.ShowToken.SetEnabled(m.info.Token != "")
	if m.showToken {
		k.ShowToken.SetHelp("t", "mask the token")
	} else {
		k.ShowToken.SetHelp("t", "show the token")
	}
	k.CopyCall.SetEnabled(c != nil)
	k.OpenImage.SetEnabled(m.focus == FocusNotebook && m.selectedImage() != nil)
	k.Export.SetEnabled(len(m.st.Calls) > 0)
	if m.zoomed {
		k.Zoom.SetHelp("z/esc", "unzoom pane")
	} else {
		k.Zoom.SetHelp("z", "zoom pane")
	}
	// Resizing the columns means nothing while one pane has the window.
	k.Wider.SetEnabled(!m.zoomed)
	k.Narrower.SetEnabled(!m.zoomed)
	k.Taller.SetEnabled(!m.zoomed)
	k.Shorter.SetEnabled(!m.zoomed)
	if ro, ok := m.backend.(interface{ ReadOnly() bool }); ok && ro.ReadOnly() {
		// A replay has no engine to act on: offer no action.
		for _, b := range []*key.Binding{&k.Pause, &k.Interrupt, &k.Cancel, &k.Undo, &k.Resend, &k.Approve, &k.Deny, &k.AllowSession, &k.RevokeAll, &k.DenyReason, &k.EditArgs} {
			b.SetEnabled(false)
		}
	}
	m.updateReplayKeys()
	// A search's n and N, unless the selected call is held and n denies it.
	matchKeys := m.calls.searching() && (m.focus == FocusCalls || m.focus == FocusDetail) && !k.Deny.Enabled()
	k.NextMatch.SetEnabled(matchKeys)
	k.PrevMatch.SetEnabled(matchKeys)
	k.StatsSort.SetEnabled(m.showStats)
	k.StatsOpen.SetEnabled(m.showStats && len(m.stats.slowest) > 0)
	if m.showStats {
		// The stats view takes the keys: offer only its own.
		k.Stats.SetHelp("s/esc", "close stats")
		for _, b := range []*key.Binding{&k.NextPane, &k.PrevPane, &k.Wider, &k.Narrower, &k.Taller, &k.Shorter, &k.CopyToken, &k.ShowToken,
			&k.Zoom, &k.CopyCall, &k.Export, &k.OpenImage, &k.Resend,
			&k.Pause, &k.Interrupt, &k.Cancel, &k.Undo, &k.Approve, &k.Deny, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom,
			&k.Filter, &k.ClearFilter, &k.NextMatch, &k.PrevMatch, &k.Toggle, &k.PrevNotebook, &k.NextNotebook,
			&k.ReplayPause, &k.ReplayStep} {
			b.SetEnabled(false)
		}
	} else {
		k.Stats.SetHelp("s", "stats")
	}
	if m.st.Server.Paused {
		k.Pause.SetHelp("p", "resume new calls")
	} else {
		k.Pause.SetHelp("p", "pause new calls")
	}
	m.updateCardKeys()
}

// layout is the size of every pane for the current window.
type layout struct {
	headerH, footerH int
	leftW, rightW    int
	callsH, execsH   int
	detailH, nbH     int
}

func (m *Model) layout() layout {
	l := layout{headerH: 2 + len(m.healthLines()), footerH: 1}
	body := max(m.height-l.headerH-l.footerH, 6)
	if m.zoomed {
		// Every pane is measured as if it were the focused one, which
		// alone is drawn: keys that page by a pane's height page by the
		// window's.
		l.leftW, l.rightW = m.width, m.width
		l.callsH, l.execsH, l.detailH, l.nbH = body, body, body, body
		return l
	}
	l.leftW = max(m.width*m.leftPct/100, 20)
	l.rightW = max(m.width-l.leftW, 20)
	m.splitColumns(&l, body) // split.go: room for what is active
	return l
}

// headerView is two lines: where the server is, and what it is doing.
func (m *Model) headerView() string {
	s := m.styles
	kv := func(k, v string) string { return s.HeaderKey.Render(k+" ") + s.HeaderValue.Render(v) }
	sep := s.Muted.Render(" │ ")
	title := "jupyter-mcp"
	if m.info.Version != "" {
		title += " " + m.info.Version
	}
	parts := []string{s.HeaderTitle.Render(title)}
	if m.info.Endpoint != "" {
		parts = append(parts, kv("mcp", m.info.Endpoint))
	}
	if m.info.Token != "" {
		parts = append(parts, kv("token", m.token())+s.Muted.Render(" ("+m.tokenHint()+")"))
	}
	jupyter := m.info.JupyterURL
	if m.st.Server.JupyterURL != "" {
		jupyter = m.st.Server.JupyterURL
	}
	if jupyter != "" {
		parts = append(parts, kv("jupyter", jupyter))
	}
	line1 := strings.Join(parts, sep)

	running, held := 0, 0
	for _, c := range m.st.Calls {
		switch c.Status {
		case event.CallRunning:
			running++
		case event.CallHeld:
			held++
		}
	}
	var stats []string
	if m.info.Mode != "" {
		stats = append(stats, s.HeaderValue.Render(m.info.Mode))
	}
	// Calls held for the person come first (they are denied when their
	// countdown ends), then Jupyter's health (every call fails while it
	// is not up: health.go), then a pause: none may be cut off the end of
	// the line.
	if h := m.heldHeader(); h != "" {
		stats = append(stats, s.Held.Render(h))
	}
	if w := m.jupyterWord(); w != "" {
		stats = append(stats, w)
	}
	if m.st.Server.Paused {
		stats = append(stats, s.Warning.Render("PAUSED: new calls wait"))
	}
	stats = append(stats, m.replayHeader()...)
	// What the person must not miss comes before the counts: the line is
	// cut at the window's width.
	stats = append(stats,
		kv("calls", fmt.Sprintf("%d (%d running, %d held)", len(m.st.Calls)+m.st.CallsDropped, running, held)),
		kv("sessions", itoa(len(m.st.Sessions))),
		kv("notebooks", itoa(len(m.st.NotebookOrder))),
	)
	if mode := m.st.Server.ApprovalMode; mode != "" && mode != calls.ApproveOff {
		stats = append(stats, kv("approval", mode))
	}
	if len(m.st.Server.Allowed) > 0 {
		stats = append(stats, kv("allowed", allowedList(m.st.Server.Allowed)))
	}
	stats = append(stats, m.workbenchesStat()...)
	if m.st.Missed > 0 {
		stats = append(stats, s.Warning.Render(fmt.Sprintf("missed %d events", m.st.Missed)))
	}
	if m.closed {
		stats = append(stats, s.Error.Render("stream ended"))
	}
	line2 := strings.Join(stats, sep)
	out := fit(line1, m.width) + "\n" + fit(line2, m.width)
	for _, l := range m.healthLines() {
		out += "\n" + l
	}
	return out
}

// footerView shows a pending confirmation or status, else the short help.
func (m *Model) footerView() string {
	switch {
	case m.pending.kind != pendingNone:
		return fit(m.styles.Warning.Render(m.status), m.width)
	case m.status != "" && m.statusErr:
		return fit(m.styles.Error.Render(m.status), m.width)
	case m.status != "":
		return fit(m.styles.StatusBar.Render(m.status), m.width)
	case m.cardCall() != nil:
		// The card lists its decisions itself: the footer has the rest.
		k := m.keys
		return fit(m.help.ShortHelpView([]key.Binding{k.NextHeld, k.Later, k.Zoom, k.CopyCall, k.Pause, k.Help, k.Quit}), m.width)
	}
	return fit(m.help.ShortHelpView(m.keys.ShortHelp()), m.width)
}

// short returns s cut to n cells, never inside the SGR it may keep.
func short(s string, n int) string {
	return ansi.Truncate(s, n, "")
}

// oneLine squeezes s to a single line for table cells.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return s
}

// formatDuration prints a duration compactly: 850ms, 12.3s, 4m05s, 2h03m.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0ms"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
