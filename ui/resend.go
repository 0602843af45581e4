package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

// Resend: r on a finished call opens its arguments in the editor a held
// call's edit uses (held.go); ctrl+s sends them to the backend, which checks
// them against the tool's input schema and runs the call as the
// workbench's own session (calls.WorkbenchSession). The new call is
// selected when it shows up, and its detail is split: the original beside
// the resent, and under both a unified diff of their results.

// resentMsg reports a resend handed to the backend (or refused by it).
type resentMsg struct {
	of, tool string
	err      error
}

// resendTarget is the selected call when it may be resent: a tool call (not
// an undo) that is over.
func (m *Model) resendTarget() *observe.Call {
	if m.focus != FocusCalls && m.focus != FocusDetail {
		return nil
	}
	c := m.selectedCall()
	if c == nil || c.Summary != "" || c.Status == event.CallRunning || c.Status == event.CallHeld {
		return nil
	}
	return c
}

// startResend opens the arguments of call c to be resent, or says why it
// cannot be.
func (m *Model) startResend(c *observe.Call) tea.Cmd {
	if err := m.backend.CanResend(); err != nil {
		return m.flash(err.Error(), true)
	}
	if c.ArgsCut > 0 {
		return m.flash(fmt.Sprintf("this call cannot be resent: its arguments are too long to edit here (%d bytes not kept)", c.ArgsCut), true)
	}
	cmd := m.openArgsEditor(c)
	m.held.resend = true
	if calls.HoldsRedacted(c.Args) {
		m.held.note = "this call cannot be resent as is: a secret in its arguments was redacted, and the workbench never sees it; put the value in place of [redacted] to resend it"
		m.flash("this call cannot be resent as is: a secret in its arguments was redacted", true)
	}
	m.sizeEditor()
	// The resends of c made before this one are not the one to follow.
	m.resendSkip = map[string]bool{}
	for _, o := range m.st.Calls {
		if o.ResendOf == c.ID {
			m.resendSkip[o.ID] = true
		}
	}
	return cmd
}

// resendEditorHead is what the editor shows above the arguments to resend.
func resendEditorHead(s *theme.Styles, h heldEditor) []string {
	head := []string{
		s.Bold.Render("resend "+h.tool+" as the workbench") + s.Muted.Render("  (checked against its input schema before it runs)"),
		s.Own.Render("ctrl+s resend with these arguments · ctrl+o $EDITOR · esc back"),
	}
	if h.note != "" {
		head = append(head, s.Warning.Render(h.note))
	}
	return head
}

// resendCmd hands the edited arguments to the backend.
func (m Model) resendCmd(of, tool string, args json.RawMessage) tea.Cmd {
	b := m.backend
	return func() tea.Msg {
		return resentMsg{of: of, tool: tool, err: b.Resend(calls.Resend{Of: of, Tool: tool, Args: args})}
	}
}

// resent handles the backend's answer: a refusal stays in the editor with
// its reason; else the editor closes and the new call is awaited.
func (m *Model) resent(msg resentMsg) tea.Cmd {
	open := m.held.mode == editArgs && m.held.resend && m.held.callID == msg.of
	if msg.err != nil {
		if open {
			m.held.sending = false
			m.held.problem = termtext.String(msg.err.Error())
			return nil
		}
		return m.flash("resend: "+msg.err.Error(), true)
	}
	if open {
		m.held = heldEditor{}
	}
	m.resendWait = msg.of
	if m.followResend() {
		return nil
	}
	return m.flash("resent "+msg.tool+" as the workbench: its result opens beside the original", false)
}

// followResend selects the call that resends the one awaited, once it is
// in the timeline, and stops following the newest call so that it stays.
func (m *Model) followResend() bool {
	if m.resendWait == "" {
		return false
	}
	for i := len(m.st.Calls) - 1; i >= 0; i-- {
		if c := m.st.Calls[i]; c.ResendOf == m.resendWait && !m.resendSkip[c.ID] {
			m.resendWait = ""
			m.calls.selected, m.calls.follow = c.ID, false
			m.calls.clampSelection(m)
			m.syncDetail()
			return true
		}
	}
	return false
}

// resendPair is the original of the selected call when the selected call
// is a resend of one still in the timeline.
func (m *Model) resendPair(c *observe.Call) *observe.Call {
	if c == nil || c.ResendOf == "" {
		return nil
	}
	return m.st.Call(c.ResendOf)
}

// Bounds of the split detail, in lines per column and of the diff.
const (
	splitArgsLines = 8
	splitTextLines = 12
	splitTreeLines = 12
	resendDiffMax  = 60
)

// resendLines draws a resent call beside its original, and the diff of
// their results under both.
func (m *Model) resendLines(orig, resent *observe.Call, w int) []string {
	s := m.styles
	colW := max((w-3)/2, 10)
	out := []string{s.Own.Render("↻ resent by the person at the workbench") + s.Muted.Render(" (original "+orig.ID+", resent "+resent.ID+")")}
	// Side by side: what each call was and its text, then the diff,
	// then each structuredContent (long, and in the diff already).
	out = append(out, besideLines(m.splitColumn(orig, "original", colW), m.splitColumn(resent, "resent", colW), colW, s.Muted.Render(" │ "))...)
	out = append(out, s.Title.Render("diff of the results (original → resent)"))
	if active(resent) {
		out = append(out, s.Muted.Render("  the resent call is still running"))
	} else if diff := m.resendDiff(orig, resent); diff == "" {
		out = append(out, s.OK.Render("  the same: text and structuredContent did not change"))
	} else {
		lines := diffLines(m, diff)
		if len(lines) > resendDiffMax {
			more := len(lines) - resendDiffMax
			lines = append(lines[:resendDiffMax], s.Muted.Render(fmt.Sprintf("  … %d more lines of diff", more)))
		}
		out = append(out, wrapAll(lines, w)...)
	}
	return append(out, besideLines(m.structuredColumn(orig, colW), m.structuredColumn(resent, colW), colW, s.Muted.Render(" │ "))...)
}

// besideLines sets two columns of lines side by side, the left one fitted
// to w cells.
func besideLines(left, right []string, w int, sep string) []string {
	out := make([]string, 0, max(len(left), len(right)))
	for i := 0; i < max(len(left), len(right)); i++ {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out = append(out, fit(l, w)+sep+r)
	}
	return out
}

// splitColumn is one side of the split: the call's head, arguments, text
// and structuredContent, each bounded, wrapped to w.
func (m *Model) splitColumn(c *observe.Call, label string, w int) []string {
	s := m.styles
	head := s.Title.Render(label) + " " + s.Bold.Render(c.Tool) + " " + m.statusLabel(c.Status)
	if !active(c) {
		head += " " + formatDuration(c.Duration)
	}
	session := "session " + c.Session
	if c.Session == calls.WorkbenchSession {
		session = s.Own.Render("↻ session " + c.Session)
	} else {
		session = s.Muted.Render(session)
	}
	out := []string{head, session, s.Title.Render("arguments")}
	args := "{}"
	if len(c.Args) > 0 {
		args = prettyJSON(c.Args)
	}
	out = append(out, boundText(args, splitArgsLines, w, s.Muted.Render)...)
	if active(c) {
		return wrapAll(append(out, s.Muted.Render("  running…")), w)
	}
	if c.Error != "" {
		out = append(out, s.Failed.Render("error: ")+oneLine(c.Error))
	}
	label = "text"
	if c.IsError {
		label += " (isError)"
	}
	out = append(out, s.Title.Render(label))
	if c.Text == "" {
		out = append(out, s.Muted.Render("  none"))
	} else {
		out = append(out, boundText(c.Text, splitTextLines, w, s.Muted.Render)...)
	}
	return wrapAll(out, w)
}

// structuredColumn is a call's structuredContent for one side of the split.
func (m *Model) structuredColumn(c *observe.Call, w int) []string {
	s := m.styles
	out := []string{s.Title.Render("structuredContent")}
	switch {
	case active(c):
		return nil
	case len(c.Structured) == 0:
		out = append(out, s.Muted.Render("  none"))
	default:
		out = append(out, boundText(prettyJSON(c.Structured), splitTreeLines, w, s.Muted.Render)...)
	}
	return wrapAll(out, w)
}

// resendDiff is the unified diff of two calls' results: their text, then
// their structuredContent pretty-printed; "" when both are the same. It is
// computed once per pair of results (the pane is drawn on every event).
func (m *Model) resendDiff(a, b *observe.Call) string {
	key := a.ID + "\x00" + b.ID + "\x00" + fmt.Sprint(len(a.Text), len(a.Structured), len(b.Text), len(b.Structured), a.Status, b.Status)
	if m.vc.resendKey == key {
		return m.vc.resendDiff
	}
	m.vc.resendKey, m.vc.resendDiff = key, resultDiff(a, b)
	return m.vc.resendDiff
}

// resultDiff diffs the text and the structuredContent of two results.
func resultDiff(a, b *observe.Call) string {
	var out strings.Builder
	out.WriteString(udiff.Unified("original/text", "resent/text", withNewline(a.Text), withNewline(b.Text)))
	out.WriteString(udiff.Unified("original/structuredContent", "resent/structuredContent",
		withNewline(prettyOrEmpty(a.Structured)), withNewline(prettyOrEmpty(b.Structured))))
	return out.String()
}

func prettyOrEmpty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	return prettyJSON(raw)
}

// withNewline ends a non-empty text with a newline, so that a diff of its
// last line does not say "No newline at end of file".
func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}
