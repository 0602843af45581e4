package ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/invisible"
)

// The held-call card: a call held for approval takes the person's attention
// and keeps it until they decide it or put it aside.
//
//   - It is brought into view whatever the person looks at: the card opens
//     over the panes (the right column on a wide screen, the whole body on a
//     narrow one), with a bell and, where the terminal has them, a desktop
//     notice (attention.go). Calls held while it is open queue behind it,
//     named on the card; deciding one shows the next.
//   - The decision lands on the call on screen: while a held call is shown
//     (on the card, or selected in the timeline) new calls never move the
//     selection, and a decision key pressed within cardSettle of what it
//     would act on changing (another call, a fresh preview) asks again
//     instead of acting.
//   - It shows every character that runs (cardview.go, codeview.go), says how
//     big the code is, and allowing a call whose card was not read to its
//     end, or whose code was not all carried here, asks once more.

// cardSettle is how long after the held call on screen changed a decision
// key asks again rather than acts: longer than a key already on its way
// takes to land, shorter than anyone reads a card in.
const cardSettle = time.Second

// decidePending is how long the second press of an "are you sure" decision
// may take.
const decidePending = 4 * time.Second

// cardState is the card and what it remembers of the held calls.
type cardState struct {
	callID string // the held call on the card; "" when it is closed
	open   bool   // the card is up, over the panes
	want   bool   // a held call waits for the card (an input has the keyboard)
	full   bool   // the card has the whole body, even on a wide screen (z)

	offset    int    // first line of the card's scrolling part
	offsetFor string // the hold (holdKey) that offset scrolls

	// What the decision keys act on (a call and its preview), and when
	// that last changed.
	target  string
	changed time.Time

	// Holds (holdKey: a call held again is a new hold) announced (bell,
	// notice), put aside (esc), decided here and waiting for the engine
	// to say so, and read to their end.
	known   map[string]bool
	aside   map[string]bool
	decided map[string]bool
	seenEnd map[string]bool
	facts   map[string]*heldFacts       // what the raw events said, before the sanitizer
	flagged map[string]invisible.Report // calls whose arguments hold hidden characters

	prevSel    string // the selection the card took over
	prevFollow bool
}

// heldFacts are what a held call's raw preview said: the sanitizer turns
// hidden characters into markers, so they are counted before it.
type heldFacts struct {
	hidden    invisible.Report // in the code, the sources it writes, the diff and the arguments
	codeBytes int              // the code's size as the agent sent it
}

// holdKey names one hold of call c: its id, its countdown and its preview.
// A call held again (bind: what it would do changed after the person was
// shown it) keeps its id but gets a fresh preview and countdown, so it is
// a new hold: announced, unread and undecided like a new call, and a
// change of what the decision keys act on.
func holdKey(c *observe.Call) string {
	return fmt.Sprintf("%s|%d|%p", c.ID, c.HeldUntil.UnixNano(), c.Preview)
}

// awaitsDecision reports whether c is held for a person to allow or deny (a
// call held by a pause waits for the resume instead).
func awaitsDecision(c *observe.Call) bool {
	return c != nil && c.Status == event.CallHeld &&
		(!c.HeldUntil.IsZero() || c.Preview != nil || strings.HasPrefix(c.Progress, "waiting for approval"))
}

// heldQueue is every call awaiting a decision, the first to be denied
// first.
func (m *Model) heldQueue() []*observe.Call {
	var q []*observe.Call
	for _, c := range m.st.Calls {
		if awaitsDecision(c) && !m.card.decided[holdKey(c)] {
			q = append(q, c)
		}
	}
	sort.SliceStable(q, func(i, j int) bool {
		a, b := q[i].HeldUntil, q[j].HeldUntil
		if a.IsZero() || b.IsZero() {
			return false
		}
		return a.Before(b)
	})
	return q
}

// cardCall is the call on the card, or nil when it is closed.
func (m *Model) cardCall() *observe.Call {
	if !m.card.open {
		return nil
	}
	if c := m.st.Call(m.card.callID); awaitsDecision(c) {
		return c
	}
	return nil
}

// shownHeld is the held call the decision keys act on: the card's, else the
// selected call when it awaits a decision.
func (m *Model) shownHeld() *observe.Call {
	if c := m.cardCall(); c != nil {
		return c
	}
	if c := m.selectedCall(); awaitsDecision(c) && !m.card.decided[holdKey(c)] {
		return c
	}
	return nil
}

// readOnly reports whether the backend takes no action (a replay).
func (m *Model) readOnly() bool {
	ro, ok := m.backend.(interface{ ReadOnly() bool })
	return ok && ro.ReadOnly()
}

// inputOpen reports whether an input has the keyboard: the card waits for
// it to close rather than take keys meant for it.
func (m *Model) inputOpen() bool {
	return m.calls.filtering || m.editing() && m.held.callID != m.card.callID
}

// noteRaw records, before the sanitizer rewrites it, what a call event says
// about hidden characters: the card flags the call and counts them.
func (m *Model) noteRaw(ev event.Event) {
	c := ev.Call
	if c == nil {
		return
	}
	if len(c.Args) > 0 {
		if r := argsHidden(c.Args); r.Any() {
			if m.card.flagged == nil {
				m.card.flagged = map[string]invisible.Report{}
			}
			m.card.flagged[c.ID] = r
		}
	}
	if ev.Type != event.EvCallHeld || c.Preview == nil {
		return
	}
	p := c.Preview
	f := &heldFacts{codeBytes: len(p.Code) + p.CodeCut}
	f.hidden.Add(invisible.Inspect(p.Code))
	f.hidden.Add(invisible.Inspect(p.Diff))
	for _, cell := range p.Cells {
		if cell.Role != event.PreviewCellContext {
			f.hidden.Add(invisible.Inspect(cell.Source))
		}
	}
	// The arguments, but for the code and sources counted already.
	shown := []string{p.Code}
	for _, cell := range p.Cells {
		shown = append(shown, cell.Source)
	}
	f.hidden.Add(argsHidden(c.Args, shown...))
	if m.card.facts == nil {
		m.card.facts = map[string]*heldFacts{}
	}
	m.card.facts[c.ID] = f
}

// argsHidden counts the hidden characters in the strings (keys included) of
// raw JSON arguments, but for values equal to one of skip. Arguments of
// plain text (the usual case) are told from the bytes, without decoding.
func argsHidden(raw json.RawMessage, skip ...string) invisible.Report {
	suspect := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c >= 0x80 || c < 0x20 && c != '\n' && c != '\t' {
			suspect = true
			break
		}
		if c == '\\' && i+1 < len(raw) {
			switch raw[i+1] {
			case 'u', 'r', 'b', 'f':
				suspect = true
			}
			i++
		}
	}
	var r invisible.Report
	if !suspect {
		return r
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return invisible.Inspect(string(raw))
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for _, sk := range skip {
				if v == sk {
					return
				}
			}
			r.Add(invisible.Inspect(v))
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				r.Add(invisible.Inspect(k))
				walk(e)
			}
		}
	}
	walk(v)
	return r
}

// followHeld keeps the card on what is held, after events: a call held for
// the first time is announced and brought into view; a call decided,
// timed out or cancelled leaves the card for the next one.
func (m *Model) followHeld() tea.Cmd {
	st := &m.card
	if st.known == nil {
		st.known, st.aside, st.decided, st.seenEnd = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	q := m.heldQueue()
	held := map[string]bool{} // the holds in the queue
	fresh := 0
	for _, c := range q {
		k := holdKey(c)
		held[k] = true
		if !st.known[k] {
			st.known[k] = true
			fresh++
		}
	}
	// Forget the holds that ended (the engine has said so), or were
	// replaced by a new hold of the same call.
	for _, set := range []map[string]bool{st.known, st.aside, st.seenEnd} {
		for k := range set {
			if !held[k] {
				delete(set, k)
			}
		}
	}
	if len(st.decided) > 0 || len(st.facts) > 0 {
		awaiting := map[string]bool{} // holds and calls awaiting a decision, decided here or not
		for _, c := range m.st.Calls {
			if awaitsDecision(c) {
				awaiting[holdKey(c)], awaiting[c.ID] = true, true
			}
		}
		for k := range st.decided {
			if !awaiting[k] {
				delete(st.decided, k)
			}
		}
		for id := range st.facts {
			if !awaiting[id] {
				delete(st.facts, id)
			}
		}
	}
	if len(st.flagged) > 2*observe.MaxCalls {
		for id := range st.flagged {
			if m.st.Call(id) == nil {
				delete(st.flagged, id)
			}
		}
	}
	if m.readOnly() {
		// A replay shows what was held; no one can decide it here.
		return nil
	}
	if fresh > 0 {
		st.want = true
	}
	if st.open && m.cardCall() == nil {
		m.showNextHeld("")
	}
	m.openWanted()
	if fresh == 0 {
		return nil
	}
	return m.announceCmd(len(q))
}

// openWanted opens the card that a new held call wants, once no input has
// the keyboard.
func (m *Model) openWanted() {
	if !m.card.want || m.inputOpen() {
		return
	}
	m.card.want = false
	if m.card.open {
		return // it queues behind the call on the card
	}
	for _, c := range m.heldQueue() {
		if !m.card.aside[holdKey(c)] {
			m.openCard(c)
			return
		}
	}
}

// openCard brings call c onto the card, over whatever the person was
// looking at.
func (m *Model) openCard(c *observe.Call) {
	if !m.card.open {
		m.card.prevSel, m.card.prevFollow = m.calls.selected, m.calls.follow
		m.card.open = true
	}
	m.card.callID = c.ID
	delete(m.card.aside, holdKey(c))
	// Whatever had the window gives it to the card.
	m.img, m.showHelp = nil, false
	m.calls.selected, m.calls.follow = c.ID, false
	m.calls.clampSelection(m)
	m.syncDetail()
}

// closeCard takes the card down and gives the timeline back its selection.
func (m *Model) closeCard() {
	if !m.card.open {
		return
	}
	m.card.open, m.card.callID, m.card.full = false, "", false
	m.calls.follow = m.card.prevFollow
	if m.st.Call(m.card.prevSel) != nil {
		m.calls.selected = m.card.prevSel
	}
	m.calls.clampSelection(m)
	m.syncDetail()
}

// showNextHeld moves the card to the next held call after the one with id
// after ("" the first), skipping those put aside and decided; with none it
// closes.
func (m *Model) showNextHeld(after string) {
	q := m.heldQueue()
	start := 0
	for i, c := range q {
		if c.ID == after {
			start = i + 1
		}
	}
	for k := 0; k < len(q); k++ {
		c := q[(start+k)%len(q)]
		if c.ID != after && !m.card.aside[holdKey(c)] {
			m.openCard(c)
			return
		}
	}
	m.closeCard()
}

// noteTarget notices when what the decision keys act on changes, for the
// settle guard, and starts the card of a new call at its top.
func (m *Model) noteTarget() {
	id := ""
	if c := m.shownHeld(); c != nil {
		id = holdKey(c) // another call, or the same call held again
		if id != m.card.offsetFor {
			m.card.offset, m.card.offsetFor = 0, id
		}
	}
	if id != m.card.target {
		m.card.target, m.card.changed = id, m.now()
	}
}

// decision is one of the keys that settle a held call.
type decision int

const (
	decideAllow decision = iota
	decideAllowSession
	decideDeny
)

func (d decision) key() string {
	switch d {
	case decideAllowSession:
		return "a"
	case decideDeny:
		return "n"
	}
	return "y"
}

func (d decision) verb() string {
	switch d {
	case decideAllowSession:
		return "allow it for the session"
	case decideDeny:
		return "deny it"
	}
	return "allow it"
}

// decide settles held call c as d says, unless the guards ask first: a key
// within cardSettle of the call on screen changing never acts, and
// allowing a call not read to its end (or not all carried here) takes a
// second press.
func (m Model) decide(c *observe.Call, d decision) (Model, tea.Cmd) {
	target := c.ID + "|" + d.key()
	if m.now().Sub(m.card.changed) < cardSettle {
		return m.askAgain(target, "changed", fmt.Sprintf("the held call on screen just changed (now %s %s): press %s again to %s", c.Tool, c.ID, d.key(), d.verb()))
	}
	if d != decideDeny {
		if why := m.unseen(c); why != "" && (m.pending.kind != pendingDecide || m.pending.target != target || m.pending.why != "unseen") {
			return m.askAgain(target, "unseen", why+": press "+d.key()+" again to "+d.verb()+" anyway")
		}
	}
	m.pending, m.status = pending{}, ""
	var cmd tea.Cmd
	switch d {
	case decideAllow:
		cmd = m.decideCmd(c.ID, true)
	case decideDeny:
		cmd = m.decideCmd(c.ID, false)
	case decideAllowSession:
		cmd = m.settleCmd(c.ID, calls.Verdict{Allow: true, ForSession: true}, "allowed "+c.Tool+" for session "+short(c.Session, 8))
	}
	m.card.decided[holdKey(c)] = true
	if m.card.open {
		m.showNextHeld(c.ID)
	}
	return m, cmd
}

// askAgain arms the second press of a decision and says why it is needed.
func (m Model) askAgain(target, why, what string) (Model, tea.Cmd) {
	m.seq++
	m.pending = pending{kind: pendingDecide, target: target, why: why, seq: m.seq}
	m.status, m.statusErr = what, false
	seq := m.seq
	return m, tea.Tick(decidePending, func(time.Time) tea.Msg { return pendingExpiredMsg{seq} })
}

// unseen says why allowing c would allow what was not shown, or "".
func (m *Model) unseen(c *observe.Call) string {
	if cut := notCarried(c); cut > 0 {
		return fmt.Sprintf("%d bytes of this call were never carried to the workbench, so no one has seen them", cut)
	}
	if !m.card.seenEnd[holdKey(c)] {
		if f := m.cardFrameFor(c); f != nil {
			below := len(f.body) - (m.card.offset + f.bodyH)
			return fmt.Sprintf("you have not read this call to its end (%d more lines below)", max(below, 1))
		}
		return "you have not read this call to its end"
	}
	return ""
}

// notCarried is how many bytes of what a held call would run or write did
// not reach the workbench.
func notCarried(c *observe.Call) int {
	n := c.ArgsCut
	if p := c.Preview; p != nil {
		n += p.CodeCut + p.DiffCut
		for _, cell := range p.Cells {
			if cell.Role != event.PreviewCellContext {
				n += cell.SourceCut
			}
		}
	}
	return n
}

// trackSeen records how far the shown held call's card has been read.
func (m *Model) trackSeen() {
	c := m.shownHeld()
	if c == nil || m.card.seenEnd[holdKey(c)] {
		return
	}
	f := m.cardFrameFor(c)
	if f == nil {
		return
	}
	m.card.offset = clamp(m.card.offset, 0, max(len(f.body)-f.bodyH, 0))
	if m.card.offset+f.bodyH >= len(f.body) {
		m.card.seenEnd[holdKey(c)] = true
	}
}

// cardFrameFor lays out c's card where it is shown: on the open card, else
// in the detail pane.
func (m *Model) cardFrameFor(c *observe.Call) *cardFrame {
	if m.width < minWidth || m.height < minHeight {
		return nil
	}
	w, h := m.cardSize()
	if !m.card.open {
		l := m.layout()
		w, h = l.rightW-2, l.detailH-2
	}
	f := m.cardFrame(c, w, h)
	return &f
}

// cardSize is the inside of the open card's box.
func (m *Model) cardSize() (w, h int) {
	l := m.layout()
	body := max(m.height-l.headerH-l.footerH, 6)
	if m.cardWide() {
		return l.rightW - 2, body - 2
	}
	return m.width - 2, body - 2
}

// cardWide reports whether the open card takes the right column only,
// leaving the timeline in view: on a screen wide enough for code there.
func (m *Model) cardWide() bool { return m.width >= 120 && !m.card.full && !m.zoomed }

// scrollCard moves the card's scrolling part.
func (m *Model) scrollCard(msg tea.KeyMsg) bool {
	c := m.shownHeld()
	if c == nil {
		return false
	}
	f := m.cardFrameFor(c)
	if f == nil {
		return false
	}
	k := m.keys
	page := max(f.bodyH-1, 1)
	switch {
	case key.Matches(msg, k.Up):
		m.card.offset--
	case key.Matches(msg, k.Down):
		m.card.offset++
	case key.Matches(msg, k.PageUp):
		m.card.offset -= page
	case key.Matches(msg, k.PageDown):
		m.card.offset += page
	case key.Matches(msg, k.Top):
		m.card.offset = 0
	case key.Matches(msg, k.Bottom):
		m.card.offset = len(f.body)
	default:
		return false
	}
	m.card.offset = clamp(m.card.offset, 0, max(len(f.body)-f.bodyH, 0))
	return true
}

// handleCardKey gives a key to the open card. Keys that act elsewhere are
// not taken while it is up: they would act on panes it covers.
func (m Model) handleCardKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	c := m.cardCall()
	k := m.keys
	switch {
	case key.Matches(msg, k.Approve):
		return m.decide(c, decideAllow)
	case key.Matches(msg, k.Deny):
		return m.decide(c, decideDeny)
	case key.Matches(msg, k.AllowSession):
		return m.decide(c, decideAllowSession)
	case key.Matches(msg, k.DenyReason):
		return m, m.startReason(c)
	case key.Matches(msg, k.EditArgs):
		return m, m.startEdit(c)
	case key.Matches(msg, k.Cancel):
		return m.press(pendingCancel)
	case key.Matches(msg, k.NextHeld):
		m.showNextHeld(c.ID)
		return m, nil
	case key.Matches(msg, k.Later):
		m.card.aside[holdKey(c)] = true
		m.closeCard()
		what := fmt.Sprintf("%s %s put aside: still held, H brings it back", c.Tool, c.ID)
		return m, func() tea.Msg { return actionDoneMsg{what, nil} }
	case key.Matches(msg, k.Zoom):
		m.card.full = !m.card.full
		return m, nil
	case key.Matches(msg, k.CopyCall):
		return m, m.copyCallCmd()
	case key.Matches(msg, k.CopyToken):
		return m, m.copyTokenCmd()
	case key.Matches(msg, k.Pause):
		return m, m.setPausedCmd(!m.st.Server.Paused)
	case key.Matches(msg, k.RevokeAll):
		if len(m.st.Server.Allowed) > 0 {
			return m, m.revokeCmd()
		}
	}
	if m.scrollCard(msg) {
		return m, nil
	}
	m.status, m.statusErr = "a held call is on screen: y allow · n deny · esc later (it stays held)", false
	return m, nil
}

// updateCardKeys offers the held-call card's keys, and while it is open
// only those: the others would act on panes it covers.
func (m *Model) updateCardKeys() {
	k := &m.keys
	open := m.cardCall() != nil
	held := len(m.heldQueue())
	k.NextHeld.SetEnabled(held > 0 && !m.readOnly() && !m.showStats)
	k.Later.SetEnabled(open)
	if !open {
		k.NextHeld.SetHelp("H", "show the held calls")
		return
	}
	k.NextHeld.SetHelp("H", "next held call")
	k.NextHeld.SetEnabled(held > 1)
	k.Zoom.SetHelp("z", "card over the whole window")
	if m.card.full {
		k.Zoom.SetHelp("z", "card beside the timeline")
	}
	k.Zoom.SetEnabled(m.width >= 120)
	for _, b := range []*key.Binding{&k.NextPane, &k.PrevPane, &k.Wider, &k.Narrower, &k.Taller, &k.Shorter,
		&k.Filter, &k.ClearFilter, &k.NextMatch, &k.PrevMatch, &k.Toggle, &k.OpenImage, &k.PrevNotebook, &k.NextNotebook,
		&k.Interrupt, &k.Undo, &k.Resend, &k.Export, &k.Stats, &k.StatsSort, &k.StatsOpen, &k.ReplayPause, &k.ReplayStep} {
		b.SetEnabled(false)
	}
}
