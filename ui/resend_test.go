package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// resendEvents is an agent's execute_code of 1+1, finished, and an undo
// entry after it.
func resendEvents(t *testing.T) []event.Event {
	ok := true
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	return []event.Event{
		{Seq: 1, Time: at(0), Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: "sess-7f3a", Client: "claude-code 1.0"}},
		{Seq: 2, Time: at(1), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "c1", Session: "sess-7f3a", Tool: "execute_code",
			Args: raw(t, map[string]any{"code": "1+1"}), Status: event.CallRunning, Started: at(1)}},
		{Seq: 3, Time: at(1.2), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "c1", Session: "sess-7f3a", Tool: "execute_code",
			Status: event.CallOK, Started: at(1), Duration: 200 * time.Millisecond, Text: "2", SchemaOK: &ok,
			Structured: raw(t, map[string]any{"kind": "outputs", "count": 1, "outputs": []any{map[string]any{"type": "execute_result", "text": "2"}}})}},
	}
}

// resentEvents are the workbench's resend of c1 with 2+2, as the engine
// publishes it.
func resentEvents(t *testing.T, text string) []event.Event {
	ok := true
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	return []event.Event{
		{Seq: 10, Time: at(10), Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: calls.WorkbenchSession, Client: "workbench test"}},
		{Seq: 11, Time: at(10), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "c2", Session: calls.WorkbenchSession, Tool: "execute_code",
			Args: raw(t, map[string]any{"code": "2+2"}), Status: event.CallRunning, Started: at(10), ResendOf: "c1"}},
		{Seq: 12, Time: at(10.3), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "c2", Session: calls.WorkbenchSession, Tool: "execute_code",
			Status: event.CallOK, Started: at(10), Duration: 300 * time.Millisecond, Text: text, SchemaOK: &ok, ResendOf: "c1",
			Structured: raw(t, map[string]any{"kind": "outputs", "count": 1, "outputs": []any{map[string]any{"type": "execute_result", "text": text}}})}},
	}
}

func ctrlS(m Model) (Model, tea.Cmd) {
	nm, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	return nm.(Model), cmd
}

// typeInto puts text in the open editor: its last character typed as a
// key, the rest set (the tmux end-to-end test types every key).
func typeInto(m Model, text string) Model {
	rs := []rune(text)
	m.held.args.SetValue(string(rs[:len(rs)-1]))
	nm, _ := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: rs[len(rs)-1:]})
	return nm.(Model)
}

// r opens the selected call's arguments in the held-call editor; ctrl+s
// hands them to the backend; the workbench's call that resends it is
// selected when it shows, marked as the person's own, its detail split with
// the original and a diff of the results.
func TestResendOpensTheEditorAndSplitsTheDetail(t *testing.T) {
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			b := newFakeBackend()
			m := newTestModel(t, b, sz.w, sz.h, resendEvents(t))
			if c := m.selectedCall(); c == nil || c.ID != "c1" || !m.keys.Resend.Enabled() {
				t.Fatalf("selected %v, resend enabled %v", c, m.keys.Resend.Enabled())
			}
			m, _ = pressKey(m, "r")
			if !m.editing() || !m.held.resend || m.held.callID != "c1" {
				t.Fatalf("r did not open the editor to resend c1: %+v", m.held)
			}
			if v := m.held.args.Value(); v != "{\n  \"code\": \"1+1\"\n}" {
				t.Fatalf("the editor holds %q", v)
			}
			view := ansi.Strip(m.View())
			for _, want := range []string{"resend execute_code as the workbench", "ctrl+s resend with these arguments", `"code": "1+1"`} {
				if !strings.Contains(view, want) {
					t.Fatalf("the editor does not show %q:\n%s", want, view)
				}
			}

			m = typeInto(m, `{"code": "2+2"}`)
			m, cmd := ctrlS(m)
			if cmd == nil || !m.held.sending {
				t.Fatal("ctrl+s sent nothing")
			}
			m = send(m, cmd())
			if len(b.resends) != 1 || b.resends[0].Of != "c1" || b.resends[0].Tool != "execute_code" || string(b.resends[0].Args) != `{"code": "2+2"}` {
				t.Fatalf("the backend was asked %+v", b.resends)
			}
			if m.editing() || !strings.Contains(m.status, "resent execute_code") {
				t.Fatalf("after the resend: editing %v, status %q", m.editing(), m.status)
			}

			// The resend shows up: selected, though newer calls come after.
			m = send(m, eventsMsg(resentEvents(t, "4")))
			if m.calls.selected != "c2" {
				t.Fatalf("selected %q, want the resend c2", m.calls.selected)
			}
			timeline := ansi.Strip(renderPane(m, FocusCalls))
			if !strings.Contains(timeline, "workbench") || !strings.Contains(timeline, "↻ execute_code") {
				t.Fatalf("the resend is not marked as the workbench's:\n%s", timeline)
			}
			// Zoomed, the detail has room for both sides and the diff.
			m.zoomed = true
			detail := renderPane(m, FocusDetail)
			m.zoomed = false
			wants := []string{"Resend of c1", "original", "resent", "↻ session workbench", "-2", "+4"}
			if sz.h >= 40 {
				wants = append(wants, `-      "text": "2"`, `+      "text": "4"`)
			}
			for _, want := range wants {
				if !strings.Contains(detail, want) {
					t.Fatalf("the split detail does not show %q:\n%s", want, detail)
				}
			}
			golden(t, fmt.Sprintf("detail_resend_%dx%d", sz.w, sz.h), detail)
			checkFrame(t, "screen", m.View(), sz.w, sz.h)

			// Copied or exported, the resend names the call it resent.
			if e := exportCall(m.selectedCall(), nil); e.ResendOf != "c1" || e.Session != calls.WorkbenchSession {
				t.Fatalf("exported: %+v", e)
			}

			ok := true
			later := event.Event{Seq: 20, Time: t0.Add(20 * time.Second), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "c3",
				Session: "sess-7f3a", Tool: "list_kernels", Status: event.CallOK, Started: t0.Add(20 * time.Second), SchemaOK: &ok}}
			if m = send(m, eventsMsg{later}); m.calls.selected != "c2" {
				t.Fatalf("a later call took the selection from the resend: %q", m.calls.selected)
			}
		})
	}
}

// Two results alike say so instead of an empty diff.
func TestResendSameResult(t *testing.T) {
	m := newTestModel(t, newFakeBackend(), 140, 40, append(resendEvents(t), resentEvents(t, "2")...))
	m.calls.selected, m.calls.follow = "c2", false
	m.syncDetail()
	detail := renderPane(m, FocusDetail)
	if !strings.Contains(detail, "the same: text and structuredContent did not change") {
		t.Fatalf("same results:\n%s", detail)
	}
}

// The backend's refusal (the schema checker's reason) keeps the editor open
// with it; esc closes it having sent nothing more.
func TestResendRefusedStaysInTheEditor(t *testing.T) {
	b := newFakeBackend()
	b.resendErr = errors.New(`the arguments were not accepted, and nothing was sent: type: 42 has type "integer", want "string"`)
	m := newTestModel(t, b, 140, 40, resendEvents(t))
	m, _ = pressKey(m, "r")
	m = typeInto(m, `{"code": 42}`)
	m, cmd := ctrlS(m)
	m = send(m, cmd())
	if !m.editing() || m.held.sending || !strings.Contains(m.held.problem, "not accepted") {
		t.Fatalf("refused: %+v", m.held)
	}
	if view := ansi.Strip(m.View()); !strings.Contains(view, "refused: the arguments were not accepted") {
		t.Fatalf("the refusal is not shown:\n%s", view)
	}
	// Not JSON: refused here, the backend not asked.
	m = typeInto(m, `{"code": `)
	m, cmd = ctrlS(m)
	if cmd != nil || !strings.Contains(m.held.problem, "not valid JSON") || len(b.resends) != 1 {
		t.Fatalf("bad JSON: cmd %v problem %q resends %d", cmd != nil, m.held.problem, len(b.resends))
	}
	m, _ = pressKey(m, "esc")
	if m.editing() {
		t.Fatal("esc did not close the editor")
	}
}

// In a replay or an attached workbench resend can never work: r is not
// offered (help and footer leave it out) and opens nothing. Where it is
// only not ready yet (the server still being built), r says why.
func TestResendNotAvailableSaysWhy(t *testing.T) {
	for _, why := range []error{observe.ErrResendReplay, observe.ErrResendAttached} {
		b := newFakeBackend()
		b.noResend = why
		m := newTestModel(t, b, 140, 40, resendEvents(t))
		if m.keys.Resend.Enabled() {
			t.Errorf("r is offered where resend cannot work (%v)", why)
		}
		m, _ = pressKey(m, "r")
		if m.editing() {
			t.Fatalf("r with %v opened the editor", why)
		}
	}
	b := newFakeBackend()
	b.noResend = errors.New("the MCP server is still being built")
	m := newTestModel(t, b, 140, 40, resendEvents(t))
	m, _ = pressKey(m, "r")
	if m.editing() || m.status != b.noResend.Error() || !m.statusErr {
		t.Fatalf("r while not ready: editing %v, status %q", m.editing(), m.status)
	}
}

// A call whose secret was redacted cannot be resent as is: r says so, and
// the editor asks for the value in place of [redacted].
func TestResendRedactedSaysItCannotBeResentAsIs(t *testing.T) {
	evs := resendEvents(t)
	evs[1].Call.Tool, evs[2].Call.Tool = "connect_to_jupyter", "connect_to_jupyter"
	evs[1].Call.Args = json.RawMessage(`{"jupyter_url":"http://lab:8888/","jupyter_token":"[redacted]"}`)
	m := newTestModel(t, newFakeBackend(), 140, 40, evs)
	m, _ = pressKey(m, "r")
	if !m.editing() || !strings.Contains(m.status, "cannot be resent as is") {
		t.Fatalf("redacted: editing %v status %q", m.editing(), m.status)
	}
	if view := ansi.Strip(m.View()); !strings.Contains(view, "[redacted] to resend it") {
		t.Fatalf("the editor does not say what to do:\n%s", view)
	}
}

// r applies to finished tool calls only: not a running call, not an undo.
func TestResendOnlyFinishedToolCalls(t *testing.T) {
	evs := resendEvents(t)[:2] // c1 still running
	m := newTestModel(t, newFakeBackend(), 140, 40, evs)
	if m.keys.Resend.Enabled() {
		t.Fatal("resend is offered on a running call")
	}
	if m, _ = pressKey(m, "r"); m.editing() {
		t.Fatal("r opened the editor on a running call")
	}
	undo := event.Event{Seq: 5, Time: t0.Add(5 * time.Second), Type: event.EvCallFinished, Call: &event.CallEvent{ID: "u1", Tool: "undo",
		Summary: "undo of insert_cell 14:31:23 by the person", UndoOf: "c0", Status: event.CallOK, Started: t0.Add(5 * time.Second)}}
	m = send(m, eventsMsg{undo})
	if c := m.selectedCall(); c == nil || c.ID != "u1" || m.keys.Resend.Enabled() {
		t.Fatalf("selected %v, resend enabled %v", c, m.keys.Resend.Enabled())
	}
}

// TestGoldenResendColour keeps the split detail and the calls pane in
// colour: the diff's lines in the theme's diff styles, the workbench's own
// call in its own style, in 24-bit and in 16 colours.
func TestGoldenResendColour(t *testing.T) {
	for _, th := range []struct {
		name    string
		profile termenv.Profile
	}{{"truecolor", termenv.TrueColor}, {"ansi16", termenv.ANSI}} {
		t.Run(th.name, func(t *testing.T) {
			m := newStyledModel(t, newFakeBackend(), themedStyles(th.profile, theme.DarkName), 140, 40, append(resendEvents(t), resentEvents(t, "4")...))
			m = keys(m, "up") // the original selected: the resend drawn in its colour
			calls := renderPane(m, FocusCalls)
			own := strings.Split(m.styles.Own.Render("x"), "x")[0] // the style's opening sequence
			row := ""
			for _, l := range strings.Split(calls, "\n") {
				if strings.Contains(stripANSI(l), "workbench ↻ execute_code") {
					row = l
				}
			}
			if own == "" || !strings.Contains(row, own+"  ") {
				t.Fatalf("the resend is not drawn in its own style (%q):\n%s", own, calls)
			}
			m = keys(m, "down")
			detail := renderPane(m, FocusDetail)
			for _, l := range []string{"-2", "+4"} {
				want := m.styles.DiffDel.Render(l)
				if l[0] == '+' {
					want = m.styles.DiffAdd.Render(l)
				}
				if !strings.Contains(detail, want) {
					t.Errorf("the diff line %s is not in its colour:\n%s", l, detail)
				}
			}
			golden(t, "calls_resend_"+th.name+"_140x40", calls)
			golden(t, "detail_resend_"+th.name+"_140x40", detail)
		})
	}
}
