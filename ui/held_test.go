package ui

import (
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

func TestHeldCallKeys(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := settled(newTestModel(t, b, 100, 30, scenario(t)))
	if c := m.selectedCall(); c.Status != event.CallHeld {
		t.Fatalf("selected %s is %s, want the held call", c.Tool, c.Status)
	}
	for name, k := range map[string]bool{"a": m.keys.AllowSession.Enabled(), "N": m.keys.DenyReason.Enabled(), "e": m.keys.EditArgs.Enabled()} {
		if !k {
			t.Errorf("%s is disabled on a held call", name)
		}
	}
	if m.keys.RevokeAll.Enabled() {
		t.Error("A is enabled with nothing allowed")
	}

	// a: allowed for the session.
	_, cmd := pressKey(m, "a")
	run(t, m, cmd)

	// N: a reason typed inline; keys go to the input, not the workbench
	// ("q" does not quit, "n" does not deny).
	m2, _ := pressKey(m, "N")
	if m2.held.mode != editReason {
		t.Fatal("N did not open the reason input")
	}
	m2 = typeText(m2, "not the title cell, q n")
	if !strings.Contains(ansi.Strip(m2.View()), "reason: not the title cell, q n") {
		t.Fatalf("the reason input is not on screen:\n%s", ansi.Strip(m2.View()))
	}
	m2, cmd = pressKey(m2, "enter")
	if m2.held.mode != editNone {
		t.Fatal("enter left the reason input open")
	}
	run(t, m2, cmd)

	// esc leaves without deciding.
	m3 := keys(m, "N", "x", "esc")
	if m3.held.mode != editNone || len(b.verdicts) != 2 {
		t.Fatalf("esc: mode %v, verdicts %v", m3.held.mode, b.verdicts)
	}

	// e: the arguments in the editor, sent with ctrl+s.
	m4, _ := pressKey(m, "e")
	if m4.held.mode != editArgs || !strings.Contains(m4.held.args.Value(), `"cell_indices"`) {
		t.Fatalf("e did not open the arguments: %v %q", m4.held.mode, m4.held.args.Value())
	}
	if v := ansi.Strip(m4.View()); !strings.Contains(v, "Edit c6") || !strings.Contains(v, "ctrl+s allow with these arguments") {
		t.Fatalf("the editor is not on screen:\n%s", v)
	}
	m4.held.args.SetValue(`{"cell_indices": [1]}`)
	// A refused edit stays open with the engine's reason.
	b.settleErr = errors.New("the edited arguments were not accepted, and the call is still held: cell_indices: minItems")
	m5, cmd := m4.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	m4 = run(t, m5.(Model), cmd)
	if m4.held.mode != editArgs || !strings.Contains(ansi.Strip(m4.View()), "refused: the edited arguments were not accepted") {
		t.Fatalf("a refused edit closed the editor or hid the reason:\n%s", ansi.Strip(m4.View()))
	}
	b.settleErr = nil
	m5, cmd = m4.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	m4 = run(t, m5.(Model), cmd)
	if m4.held.mode != editNone {
		t.Fatal("an accepted edit left the editor open")
	}
	// Invalid JSON is caught before the engine is asked.
	m6 := keys(m, "e")
	m6.held.args.SetValue(`{"cell_indices": [1]`)
	m7, cmd := m6.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	if cmd != nil || !strings.Contains(m7.(Model).held.problem, "not valid JSON") {
		t.Fatalf("invalid JSON: cmd %v, problem %q", cmd != nil, m7.(Model).held.problem)
	}

	want := []string{
		"c6:allow for session",
		"c6:deny reason=not the title cell, q n",
		`c6:allow args={"cell_indices": [1]}`,
		`c6:allow args={"cell_indices": [1]}`,
	}
	if strings.Join(b.verdicts, "|") != strings.Join(want, "|") {
		t.Fatalf("verdicts\n%v\nwant\n%v", b.verdicts, want)
	}

	// A: offered once a tool is allowed, listed in the header.
	m = send(m, tea.WindowSizeMsg{Width: 160, Height: 30})
	m = send(m, eventsMsg{{Type: event.EvServerState, Server: &event.ServerEvent{ApprovalMode: "all",
		Allowed: []event.AllowedTool{{Session: "sess-7f3a", Tool: "execute_code"}}}}})
	if !m.keys.RevokeAll.Enabled() || !strings.Contains(ansi.Strip(m.View()), "allowed execute_code@sess-7f3") {
		t.Fatalf("allowed tools not shown:\n%s", ansi.Strip(m.View()))
	}
	_, cmd = pressKey(m, "A")
	run(t, m, cmd)
	if b.revokes != 1 {
		t.Fatalf("revokes %d", b.revokes)
	}
}

// The input closes when its call stops being held elsewhere.
func TestHeldEditorClosesWhenTheCallGoes(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := keys(newTestModel(t, b, 100, 30, scenario(t)), "e")
	if m.held.mode != editArgs {
		t.Fatal("no editor")
	}
	m = send(m, eventsMsg{{Type: event.EvCallFinished, Call: &event.CallEvent{ID: "c6", Status: event.CallDenied, Error: "timed out"}}})
	if m.held.mode != editNone || !strings.Contains(m.status, "no longer held") {
		t.Fatalf("editor still open (%v) or unexplained (%q)", m.held.mode, m.status)
	}
}

// Previews draw a diff line by line and code by token, in the theme's
// colours.
func TestHeldPreviewColours(t *testing.T) {
	t.Parallel()
	styles := colourStyles()
	b := newFakeBackend()
	evs := append(scenario(t), event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: "c7", Session: "sess-7f3a", Tool: "edit_cell_source", Status: event.CallRunning}}, event.Event{Type: event.EvCallHeld, Call: &event.CallEvent{ID: "c7", Status: event.CallHeld, Preview: &event.CallPreview{
		What: "edit the source of cell 1", Diff: "--- a/cell[1]\n+++ b/cell[1]\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"}}},
	)
	m := newStyledModel(t, b, styles, 120, 40, evs)
	m = keys(m, "H") // c7 queues behind c6's card
	v := m.View()
	if !strings.Contains(v, styles.DiffAdd.Render("+x = 2")) || !strings.Contains(v, styles.DiffDel.Render("-x = 1")) {
		t.Fatalf("the diff is not coloured:\n%q", v)
	}

	lines := highlight("def f(x):\n    # twice\n    return x * 2  # 'q'\n", "python", styles.Syntax)
	if len(lines) != 3 {
		t.Fatalf("lines %q", lines)
	}
	if !strings.Contains(lines[0], styles.Syntax.Keyword.Render("def")) || !strings.Contains(lines[0], styles.Syntax.Name.Render("f")) ||
		!strings.Contains(lines[1], styles.Syntax.Comment.Render("# twice")) || !strings.Contains(lines[2], styles.Syntax.Number.Render("2")) {
		t.Fatalf("tokens not styled by kind: %q", lines)
	}
	if got := ansi.Strip(strings.Join(lines, "\n")); got != "def f(x):\n    # twice\n    return x * 2  # 'q'" {
		t.Fatalf("highlighting changed the text: %q", got)
	}
	// Code carrying SGR of its own is coloured by the lexer alone: no
	// sequence is cut between tokens.
	for _, code := range []string{"print('\x1b[31mred\x1b[0m')", "x = 1 # \x1b[1;2H\x1b[", sanitizeForTest(poison)} {
		got := strings.Join(highlight(code, "python", styles.Syntax), "\n")
		if i := firstBad(got); i >= 0 {
			t.Fatalf("highlight(%q) holds more than SGR at %d: %q", code, i, got)
		}
	}
	// An unknown language without a guess is drawn as it is.
	if got := ansi.Strip(strings.Join(highlight("a b c", "no-such-language", styles.Syntax), "\n")); got != "a b c" {
		t.Fatalf("plain: %q", got)
	}
}

// sanitizeForTest is what reaches the workbench from outside.
func sanitizeForTest(s string) string { return termtext.String(s) }
