package ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

// How a held call's card is drawn. Its head (the tool, what the call would
// do, the hidden characters it holds, the code's size) and its foot (how
// much is below, the keys, the calls queued behind it) stay in place; the
// body between them scrolls: the diff, the cells, the code once, the other
// arguments, and a last line that says the end was reached.

// cardFrame is a held call's card laid out in w×h.
type cardFrame struct {
	head, body, foot []string
	bodyH            int // rows of body shown at a time
}

// cardBody is a call's card body as drawn, with what its head says of the
// code.
type cardBody struct {
	lines      []string
	codeLines  int // lines of the code
	codeFolded int // of them, blank lines folded
}

// cardFrame lays out c's card in w×h (the inside of its box); the foot's
// first line is left for cardLines' scroll marker.
func (m *Model) cardFrame(c *observe.Call, w, h int) cardFrame {
	body := m.cardBodyOf(c, w)
	f := cardFrame{head: m.cardHead(c, w, body), body: body.lines, foot: m.cardFoot(c, w)}
	for h-len(f.head)-len(f.foot) < 3 && len(f.head) > 1 {
		f.head = f.head[:len(f.head)-1]
	}
	f.bodyH = max(h-len(f.head)-len(f.foot), 1)
	return f
}

// cardLines is the card as drawn at offset: the head, the window of the
// body, the scroll marker and the foot.
func (m *Model) cardLines(c *observe.Call, w, h int) []string {
	f := m.cardFrame(c, w, h)
	off := clamp(m.card.offset, 0, max(len(f.body)-f.bodyH, 0))
	out := append([]string(nil), f.head...)
	end := min(off+f.bodyH, len(f.body))
	out = append(out, f.body[off:end]...)
	for i := end - off; i < f.bodyH; i++ {
		out = append(out, "")
	}
	s := m.styles
	below := len(f.body) - end
	switch {
	case below > 0:
		out = append(out, s.Warning.Render(fmt.Sprintf("▼ more below: %d more lines · j/pgdn scroll, G end", below)))
	case off > 0:
		out = append(out, s.Muted.Render("▲ the end is shown · k/pgup scroll back, g top"))
	default:
		out = append(out, s.Muted.Render("the whole call is shown"))
	}
	return append(out, f.foot[1:]...)
}

// cardTitle names the card in its box's border: the call, its place in the
// queue, and the time left before it is denied.
func (m *Model) cardTitle(c *observe.Call) string {
	t := " Held " + c.Tool + " " + c.ID + " "
	q := m.heldQueue()
	if len(q) > 1 {
		for i, o := range q {
			if o.ID == c.ID {
				t += fmt.Sprintf("· %d of %d held ", i+1, len(q))
			}
		}
	}
	if !c.HeldUntil.IsZero() {
		t += "· denied in " + countdown(c.HeldUntil.Sub(m.clock)) + " "
	} else {
		t += "· held " + formatDuration(m.clock.Sub(c.Started)) + " "
	}
	return t
}

// countdown words the time left, in whole seconds.
func countdown(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	secs := int((d + time.Second - 1) / time.Second)
	if secs >= 60 {
		return fmt.Sprintf("%dm%02ds", secs/60, secs%60)
	}
	return fmt.Sprintf("%ds", secs)
}

// cardHead is what stays on top of the card.
func (m *Model) cardHead(c *observe.Call, w int, body cardBody) []string {
	s := m.styles
	who := "session " + c.Session
	if client := m.st.Sessions[c.Session]; client != "" {
		who += " (" + client + ")"
	} else if c.Preview != nil && c.Preview.Client != "" {
		who += " (" + c.Preview.Client + ")"
	}
	line := s.Bold.Render(c.Tool) + "  " + s.Held.Render("held for you")
	if c.Destructive {
		line += s.Warning.Render(" · destructive")
	}
	line += s.Muted.Render("  " + c.ID + " · " + who)
	head := []string{line}
	p := c.Preview
	if p == nil {
		head = append(head, s.Muted.Render("no preview of what it would do: its arguments are below"))
	} else {
		// What it would do and what that is bound to: what changed when
		// it is held again, the notebook and its file (held_bound.go).
		head = append(head, m.boundLines(p)...)
	}
	switch {
	case p != nil && p.Problem != "" && p.Refused:
		// The call's own refusal, in the words it fails with.
		head = append(head, s.Warning.Render("it will be refused: ")+oneLine(p.Problem)+s.Muted.Render(" (allowed, it fails with these words)"))
	case p != nil && p.Problem != "":
		head = append(head, s.Warning.Render("cannot tell: ")+oneLine(p.Problem)+s.Muted.Render(" (allowed, it runs and fails as usual)"))
	}
	if f := m.card.facts[c.ID]; f != nil && f.hidden.Any() {
		flag := "⚠ hidden characters, shown as ⟨…⟩: " + f.hidden.Summary()
		if f.hidden.LoneCR > 0 {
			flag += " (a line break to Python: ⟨CR⟩ ends its line here too)"
		}
		if f.hidden.FirstLine > 0 && p != nil && p.Code != "" {
			flag += fmt.Sprintf("; first on line %d", f.hidden.FirstLine)
		}
		head = append(head, s.Warning.Render(flag))
	} else if r, ok := m.card.flagged[c.ID]; ok && r.Any() {
		head = append(head, s.Warning.Render("⚠ hidden characters in the arguments, each shown as ⟨…⟩: "+r.Summary()))
	}
	if cut := notCarried(c); cut > 0 {
		head = append(head, s.Error.Render(fmt.Sprintf("✗ %d bytes of this call did not reach the workbench and cannot be shown; allowing it asks again", cut)))
	}
	if p != nil && p.Code != "" {
		lang := p.Language
		if lang == "" {
			lang = "code"
		}
		size := fmt.Sprintf(" · %s · %s", count(body.codeLines, "line"), count(m.codeBytes(c), "byte"))
		if body.codeFolded > 0 {
			size += fmt.Sprintf(" · %d blank lines folded", body.codeFolded)
		}
		head = append(head, s.Title.Render(lang)+s.Muted.Render(size))
	}
	return wrapAll(head, w)
}

// codeBytes is the size of c's code as the agent sent it.
func (m *Model) codeBytes(c *observe.Call) int {
	if f := m.card.facts[c.ID]; f != nil && f.codeBytes > 0 {
		return f.codeBytes
	}
	return len(c.Preview.Code) + c.Preview.CodeCut
}

// count words a count: "1 line", "3,004 lines".
func count(n int, unit string) string {
	return thousands(n) + " " + plural(n, unit, unit+"s")
}

// thousands writes n with a comma between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// cardFoot is what stays at the bottom of the card; its first line is the
// scroll marker's place.
func (m *Model) cardFoot(c *observe.Call, w int) []string {
	s := m.styles
	foot := []string{""}
	if m.held.mode == editReason && m.held.callID == c.ID {
		foot = append(foot, m.held.reason.View(), s.Muted.Render("enter denies with this reason · esc back"))
	}
	keys := "y allow · n deny · N deny with a reason · a allow " + c.Tool + " for the session"
	if c.Editable {
		keys += " · e edit"
	}
	keys += " · x x cancel"
	if m.card.open {
		keys += " · esc later"
	}
	if ansi.StringWidth(keys) > w {
		// The same keys, in words that fit one line of a narrow card.
		keys = "y allow · n deny · N deny + reason · a allow for session"
		if c.Editable {
			keys += " · e edit"
		}
		if m.card.open {
			keys += " · esc later"
		}
	}
	foot = append(foot, wrapAll([]string{s.Held.Render(keys)}, w)...)
	var others []string
	for _, o := range m.heldQueue() {
		if o.ID != c.ID {
			others = append(others, o.Tool+" "+o.ID)
		}
	}
	if len(others) > 0 {
		line := fmt.Sprintf("%d more held: %s", len(others), strings.Join(others, ", "))
		if m.card.open {
			line += " · H next"
		}
		foot = append(foot, fit(s.Warning.Render(line), w))
	}
	return foot
}

// cardBodyOf is c's card body at width w, drawn once per call, preview and
// width.
func (m *Model) cardBodyOf(c *observe.Call, w int) cardBody {
	k := fmt.Sprintf("%s|%p|%p|%d|%d", c.ID, c.Preview, c.Args, len(c.Args), w)
	if m.vc.cardKey == k {
		return m.vc.cardBody
	}
	b := m.drawCardBody(c, w)
	m.vc.cardKey, m.vc.cardBody = k, b
	return b
}

// drawCardBody draws the scrolling part of c's card.
func (m *Model) drawCardBody(c *observe.Call, w int) cardBody {
	s := m.styles
	var b cardBody
	add := func(ls ...string) { b.lines = append(b.lines, ls...) }
	p := c.Preview
	var shown []string // the texts drawn whole above the arguments
	if p != nil {
		if p.Diff != "" {
			add(s.Title.Render("the change"))
			for _, l := range diffLines(m, p.Diff) {
				add(strings.Split(ansi.Hardwrap(l, w, true), "\n")...)
			}
		}
		for _, cell := range p.Cells {
			add(m.cardCellLines(cell, p, w)...)
			if cell.Role == event.PreviewCellNew {
				shown = append(shown, cell.Source)
			}
		}
		if p.Code != "" {
			v := drawCode(p.Code, p.Language, w, m.styles)
			b.codeLines, b.codeFolded = v.source, v.folded
			if len(b.lines) > 0 {
				add(s.Title.Render("the code"))
			}
			add(v.lines...)
			shown = append(shown, p.Code)
		}
		for _, f := range p.Facts {
			add(wrapAll([]string{s.Warning.Render("✗ ") + f}, w)...)
		}
	}
	add(m.cardArgLines(c, shown, w)...)
	add(s.Muted.Render("— end of the call —"))
	return b
}

// cardCellLines draws a cell of the preview: the cell the call writes whole
// (its source is what the person approves), the others cut to a few lines.
func (m *Model) cardCellLines(cell event.PreviewCell, p *event.CallPreview, w int) []string {
	if cell.Role != event.PreviewCellNew {
		return wrapAll(m.previewCellLines(cell), w)
	}
	head := m.previewCellLines(event.PreviewCell{Index: cell.Index, ID: cell.ID, Type: cell.Type, Role: cell.Role})[0]
	if cell.Source == p.Code {
		return []string{head + m.styles.Muted.Render(" · its source is the code below")}
	}
	lang := ""
	if cell.Type == "code" {
		lang = p.Language
	}
	return append([]string{head}, drawCode(cell.Source, lang, w, m.styles).lines...)
}

// cardArgLines lists the call's arguments whole, but for those the card
// already shows (the code, a new cell's source).
func (m *Model) cardArgLines(c *observe.Call, shown []string, w int) []string {
	s := m.styles
	out := []string{s.Title.Render("arguments")}
	var obj map[string]json.RawMessage
	if len(c.Args) == 0 || json.Unmarshal(c.Args, &obj) != nil {
		args := "{}"
		if len(c.Args) > 0 {
			args = string(c.Args)
		}
		out = append(out, wrapAll(indent(args), w)...)
		if c.ArgsCut > 0 {
			out = append(out, s.Error.Render(fmt.Sprintf("  … %d bytes of arguments did not reach the workbench", c.ArgsCut)))
		}
		return out
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name := s.JSONKey.Render(termtext.Name(k)) + ": "
		v := obj[k]
		var str string
		if json.Unmarshal(v, &str) != nil {
			out = append(out, wrapAll([]string{"  " + name + oneLine(string(v))}, w)...)
			continue
		}
		str = termtext.Code(str)
		if contains(shown, str) {
			out = append(out, "  "+name+s.Muted.Render("shown above, whole"))
			continue
		}
		lines := strings.Split(str, "\n")
		if len(lines) == 1 {
			out = append(out, strings.Split(ansi.Hardwrap("  "+name+s.JSONString.Render(str), w, true), "\n")...)
			continue
		}
		out = append(out, "  "+name+s.Muted.Render(count(len(lines), "line")))
		for _, l := range lines {
			out = append(out, strings.Split(ansi.Hardwrap("    "+s.JSONString.Render(expandTabs(l)), w, true), "\n")...)
		}
	}
	if len(obj) == 0 {
		out = append(out, s.Muted.Render("  none"))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// heldHeader is the header's word on the calls awaiting a decision: how
// many, the key that shows them, and the time left to the first denial.
func (m *Model) heldHeader() string {
	q := m.heldQueue()
	if len(q) == 0 {
		return ""
	}
	h := fmt.Sprintf("⚠ %d held", len(q))
	if until := q[0].HeldUntil; !until.IsZero() {
		first := " · denied in "
		if len(q) > 1 {
			first = " · first denied in "
		}
		h += first + countdown(until.Sub(m.clock))
	}
	if !m.card.open && !m.readOnly() {
		h += " (H shows)"
	}
	return h
}
