package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

// A held call, with the facts in view: what it would do (the engine's
// preview: a diff, cells, code, the state a restart loses), and the
// person's answers beyond allow and deny: allow the tool for the session,
// deny with a reason the agent reads, edit the arguments before allowing.

// editMode is what the person is typing for a held call.
type editMode int

const (
	editNone   editMode = iota
	editReason          // the reason for a denial (N)
	editArgs            // the call's arguments as JSON (e)
)

// heldEditor is the inline input for a held call: a one-line reason or the
// arguments in a text area. The same text area edits the arguments of a
// call to resend (resend.go): then callID is the call resent.
type heldEditor struct {
	mode    editMode
	callID  string
	tool    string
	reason  textinput.Model
	args    textarea.Model
	problem string // why the engine refused the last edit
	sending bool   // an edit is on its way to the engine
	resend  bool   // ctrl+s resends the call rather than allowing it
	note    string // a warning above the arguments (resend: a secret was redacted)
}

// Messages of the held-call actions.
type (
	// settledMsg reports a verdict sent for a held call.
	settledMsg struct {
		callID string
		what   string
		edit   bool // it carried edited arguments
		err    error
	}
	// editorDoneMsg brings back the arguments edited in $EDITOR.
	editorDoneMsg struct {
		callID string
		text   string
		err    error
	}
)

// editing reports whether an inline input has the keyboard.
func (m *Model) editing() bool { return m.held.mode != editNone }

// startReason opens the reason input for a denial of call c.
func (m *Model) startReason(c *observe.Call) tea.Cmd {
	ti := textinput.New()
	ti.Prompt = "reason: "
	ti.Placeholder = "what the agent should know"
	ti.CharLimit = 1000
	ti.PromptStyle = m.styles.Held
	ti.TextStyle = m.styles.Text
	ti.PlaceholderStyle = m.styles.Muted
	ti.Cursor.SetMode(cursor.CursorStatic)
	m.held = heldEditor{mode: editReason, callID: c.ID, tool: c.Tool, reason: ti}
	return m.held.reason.Focus()
}

// startEdit opens the arguments of call c in the inline editor.
func (m *Model) startEdit(c *observe.Call) tea.Cmd {
	switch {
	case !c.Editable:
		return m.flash("the arguments of "+c.Tool+" cannot be edited", true)
	case c.ArgsCut > 0:
		return m.flash(fmt.Sprintf("the arguments of this call are too long to edit here (%d bytes not kept)", c.ArgsCut), true)
	}
	return m.openArgsEditor(c)
}

// openArgsEditor opens the arguments of call c in the inline text area.
func (m *Model) openArgsEditor(c *observe.Call) tea.Cmd {
	ta := textarea.New()
	s := m.styles
	style := textarea.Style{Base: s.Text, CursorLine: s.Text, CursorLineNumber: s.Muted, EndOfBuffer: s.Muted,
		LineNumber: s.Muted, Placeholder: s.Muted, Prompt: s.Muted, Text: s.Text}
	ta.FocusedStyle, ta.BlurredStyle = style, style
	ta.Cursor.SetMode(cursor.CursorStatic)
	ta.ShowLineNumbers = false
	ta.Prompt = "│ "
	ta.CharLimit = 0
	ta.MaxHeight = 0
	args := "{}"
	if len(c.Args) > 0 {
		args = prettyJSON(c.Args)
	}
	ta.SetValue(args)
	m.held = heldEditor{mode: editArgs, callID: c.ID, tool: c.Tool, args: ta}
	m.sizeEditor()
	return m.held.args.Focus()
}

// sizeEditor fits the text area to the detail pane.
func (m *Model) sizeEditor() {
	if m.held.mode != editArgs {
		return
	}
	l := m.layout()
	w, h := l.rightW-2, l.detailH-2
	if m.card.open && m.held.callID == m.card.callID {
		w, h = m.cardSize() // the editor takes the card's place
	}
	m.held.args.SetWidth(max(w, 10))
	m.held.args.SetHeight(max(h-len(m.editorHead(w)), 3))
}

// handleEditorKey gives a key to the open input: enter (reason) or ctrl+s
// (arguments) sends, esc goes back, ctrl+o opens $EDITOR on the arguments.
func (m Model) handleEditorKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	h := &m.held
	switch msg.Type {
	case tea.KeyCtrlC:
		return m, tea.Quit
	case tea.KeyEsc:
		m.held = heldEditor{}
		return m, nil
	}
	var cmd tea.Cmd
	switch h.mode {
	case editReason:
		if msg.Type == tea.KeyEnter {
			id, tool, reason := h.callID, h.tool, strings.TrimSpace(h.reason.Value())
			m.held = heldEditor{}
			what := "denied " + tool + " with a reason"
			if reason == "" {
				what = "denied " + tool
			}
			return m, m.settleCmd(id, calls.Verdict{Reason: reason}, what)
		}
		h.reason, cmd = h.reason.Update(msg)
	case editArgs:
		switch msg.Type {
		case tea.KeyCtrlS:
			if h.sending {
				return m, nil
			}
			text := strings.TrimSpace(h.args.Value())
			if !json.Valid([]byte(text)) {
				h.problem = "not valid JSON: " + jsonProblem(text)
				return m, nil
			}
			h.sending, h.problem = true, ""
			if h.resend {
				return m, m.resendCmd(h.callID, h.tool, json.RawMessage(text))
			}
			return m, m.settleCmd(h.callID, calls.Verdict{Allow: true, Args: json.RawMessage(text)}, "allowed "+h.tool+" with edited arguments")
		case tea.KeyCtrlO:
			cmd := m.externalEditCmd()
			return m, cmd
		}
		h.args, cmd = h.args.Update(msg)
	}
	return m, cmd
}

func jsonProblem(text string) string {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return err.Error()
	}
	return "trailing data"
}

// settleCmd sends a verdict for a held call.
func (m Model) settleCmd(callID string, v calls.Verdict, what string) tea.Cmd {
	b := m.backend
	return func() tea.Msg {
		return settledMsg{callID: callID, what: what, edit: v.Args != nil, err: b.Decide(callID, v)}
	}
}

func (m Model) revokeCmd() tea.Cmd {
	b := m.backend
	return func() tea.Msg { return actionDoneMsg{"revoked every tool allowed for a session", b.RevokeAllowed()} }
}

// settled handles a verdict's outcome: a refused edit stays in the editor
// with the engine's reason; anything else ends the input and is reported.
func (m *Model) settled(msg settledMsg) tea.Cmd {
	if msg.edit && m.held.mode == editArgs && m.held.callID == msg.callID {
		m.held.sending = false
		if msg.err != nil {
			m.held.problem = termtext.String(msg.err.Error())
			return nil
		}
		m.held = heldEditor{}
	}
	return func() tea.Msg { return actionDoneMsg{msg.what, msg.err} }
}

// externalEditCmd opens the arguments in $EDITOR (VISUAL first), the
// workbench suspended meanwhile; what is saved comes back into the inline
// editor, to be sent with ctrl+s like any edit.
func (m *Model) externalEditCmd() tea.Cmd {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		return m.flash("set $EDITOR (or $VISUAL) to edit in an editor of your own", true)
	}
	f, err := os.CreateTemp("", "jupyter-mcp-call-*.json")
	if err != nil {
		return m.flash("editor: "+err.Error(), true)
	}
	path, id := f.Name(), m.held.callID
	_, err = f.WriteString(m.held.args.Value() + "\n")
	f.Close()
	if err != nil {
		os.Remove(path)
		return m.flash("editor: "+err.Error(), true)
	}
	fields := strings.Fields(editor)
	cmd := exec.Command(fields[0], append(fields[1:], path)...)
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editorDoneMsg{callID: id, err: err}
		}
		b, err := os.ReadFile(path)
		return editorDoneMsg{callID: id, text: string(b), err: err}
	})
}

// editorDone puts what the editor saved into the inline editor.
func (m *Model) editorDone(msg editorDoneMsg) tea.Cmd {
	if m.held.mode != editArgs || m.held.callID != msg.callID {
		return nil
	}
	if msg.err != nil {
		m.held.problem = termtext.String("the editor failed: " + msg.err.Error())
		return nil
	}
	m.held.args.SetValue(strings.TrimRight(termtext.String(msg.text), "\n"))
	m.held.problem = ""
	return nil
}

// flash puts a sentence on the status line.
func (m *Model) flash(what string, isErr bool) tea.Cmd {
	m.status, m.statusErr = termtext.String(what), isErr
	return nil
}

// heldGone ends an input whose call is no longer held (decided elsewhere,
// timed out, cancelled).
func (m *Model) heldGone() {
	if !m.editing() || m.held.resend {
		return
	}
	if c := m.st.Call(m.held.callID); c == nil || c.Status != event.CallHeld {
		m.held = heldEditor{}
		m.status, m.statusErr = "the call is no longer held: the input was closed", true
	}
}

// editorHead is what the editor shows above the text area.
func (m *Model) editorHead(w int) []string {
	s := m.styles
	h := m.held
	head := []string{
		s.Bold.Render("edit the arguments of "+h.tool) + s.Muted.Render("  (checked against its input schema before it runs)"),
		s.Held.Render("ctrl+s allow with these arguments · ctrl+o $EDITOR · esc back"),
	}
	if h.resend {
		head = resendEditorHead(s, h)
	}
	if h.sending {
		head = append(head, s.Muted.Render("checking…"))
	}
	if h.problem != "" {
		head = append(head, s.Failed.Render("refused: ")+oneLine(h.problem))
	}
	return wrapAll(head, w)
}

// editorLines draws the open arguments editor in the detail pane.
func (m *Model) editorLines(w int) []string {
	return append(m.editorHead(w), strings.Split(m.held.args.View(), "\n")...)
}

// pausedLines say why a call held by the pause waits (a call held for a
// decision has its card instead: cardview.go).
func (m *Model) pausedLines(c *observe.Call) []string {
	if m.st.Server.Paused {
		return []string{m.styles.Held.Render("held: new calls are paused; p resumes them")}
	}
	return []string{m.styles.Held.Render("held: " + oneLine(c.Progress))}
}

// diffLines colours a unified diff by line.
func diffLines(m *Model, diff string) []string {
	s := m.styles
	var out []string
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		l = expandTabs(l)
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			out = append(out, "  "+s.Muted.Render(l))
		case strings.HasPrefix(l, "@@"):
			out = append(out, "  "+s.DiffHunk.Render(l))
		case strings.HasPrefix(l, "+"):
			out = append(out, "  "+s.DiffAdd.Render(l))
		case strings.HasPrefix(l, "-"):
			out = append(out, "  "+s.DiffDel.Render(l))
		default:
			out = append(out, "  "+l)
		}
	}
	return out
}

// previewCellLines draws one cell of a preview: its role, place and source.
func (m *Model) previewCellLines(c event.PreviewCell) []string {
	s := m.styles
	mark, style := "  ", s.Muted
	switch c.Role {
	case event.PreviewCellNew:
		mark, style = "+ ", s.DiffAdd
	case event.PreviewCellGone:
		mark, style = "✗ ", s.DiffDel
	case event.PreviewCellMoved:
		mark, style = "↕ ", s.DiffHunk
	}
	head := fmt.Sprintf("%s%d [%s]", mark, c.Index, c.Type)
	if c.ID != "" {
		head += " · " + c.ID
	}
	switch c.Role {
	case event.PreviewCellNew:
		head += " · new"
	case event.PreviewCellGone:
		head += " · would be deleted"
	case event.PreviewCellContext:
		head += " · neighbour"
	}
	out := []string{"  " + style.Render(head)}
	src := strings.Split(strings.TrimRight(c.Source, "\n"), "\n")
	const maxCellLines = 8
	for i, l := range src {
		if i == maxCellLines {
			out = append(out, s.Muted.Render(fmt.Sprintf("    │ … %d more lines", len(src)-maxCellLines)))
			break
		}
		line := expandTabs(l)
		if c.Role == event.PreviewCellContext {
			line = s.Muted.Render(line)
		}
		out = append(out, "    "+style.Render("│")+" "+line)
	}
	return out
}

// allowedList names the tools allowed for a session, for the header.
func allowedList(allowed []event.AllowedTool) string {
	parts := make([]string, len(allowed))
	for i, a := range allowed {
		parts[i] = a.Tool + "@" + short(a.Session, 8)
	}
	return strings.Join(parts, ", ") + " (A revokes)"
}
