package ui

import (
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// run executes a command synchronously and feeds its message back, the way
// the program would. Tick commands are not run (they sleep); callers only
// run the commands of actions.
func run(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	if cmd == nil {
		t.Fatal("expected a command, got none")
	}
	return send(m, cmd())
}

func TestFocusCycles(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 80, 24, scenario(t))
	m = aside(m)
	want := []Focus{FocusDetail, FocusNotebook, FocusExecs, FocusCalls, FocusDetail}
	for i, f := range want {
		m = keys(m, "tab")
		if m.focus != f {
			t.Fatalf("after %d tabs focus is %v, want %v", i+1, m.focus, f)
		}
	}
	m = keys(m, "shift+tab", "shift+tab")
	if m.focus != FocusExecs {
		t.Fatalf("after two shift+tabs focus is %v, want execs", m.focus)
	}
}

func TestSearchCalls(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 140, 40, scenario(t))
	m = aside(m)
	m = keys(m, "/")
	m = typeText(m, "Out of rang")
	if !m.calls.filtering || m.calls.filter != "Out of rang" {
		t.Fatalf("filtering=%v filter=%q, want true and %q", m.calls.filtering, m.calls.filter, "Out of rang")
	}
	vis := m.calls.visible(&m)
	if len(vis) != 1 || vis[0].Tool != "read_cell" {
		t.Fatalf("visible calls %v, want only read_cell (its text says out of range)", toolsOf(vis))
	}
	if m.selectedCall().Tool != "read_cell" {
		t.Fatalf("selected %s, want the only visible call", m.selectedCall().Tool)
	}
	// Keys typed in the search go to it, not to the workbench: q must
	// not quit.
	m, cmd := pressKey(m, "q")
	if m.calls.filter != "Out of rangq" || cmd != nil && isQuit(cmd) {
		t.Fatalf("q in the search: filter=%q", m.calls.filter)
	}
	m = keys(m, "esc")
	if m.calls.filtering || m.calls.filter != "" || len(m.calls.visible(&m)) != 6 {
		t.Fatalf("esc should clear the search, got filtering=%v filter=%q", m.calls.filtering, m.calls.filter)
	}
	// Words match arguments (the cell_source of the running call) and
	// structuredContent (a path in list_files' rows).
	m = keys(m, "/")
	m = typeText(m, "sales.csv")
	if got := toolsOf(m.calls.visible(&m)); strings.Join(got, ",") != "list_files" {
		t.Fatalf("sales.csv shows %v, want list_files", got)
	}
	m = keys(m, "esc", "/")
	m = typeText(m, "session:sess-7f status:error|held")
	m = keys(m, "enter")
	if got := toolsOf(m.calls.visible(&m)); m.calls.filtering || strings.Join(got, ",") != "read_cell,delete_cell" {
		t.Fatalf("session and status terms: filtering=%v shown %v", m.calls.filtering, got)
	}
	m = keys(m, "/", "esc", "/", "l", "i", "s", "t", "enter")
	if got := toolsOf(m.calls.visible(&m)); strings.Join(got, ",") != "list_files" {
		t.Fatalf("tool search shows %v", got)
	}
	if !strings.Contains(m.View(), "/list 1 of 6 match") {
		t.Error("the calls title should say the search and how many calls of all match")
	}
}

// typeText types s into the model one key at a time.
func typeText(m Model, s string) Model {
	for _, r := range s {
		k := string(r)
		if r == ' ' {
			k = " "
		}
		m, _ = pressKey(m, k)
	}
	return m
}

// TestSearchBadTerm checks that a bad term says what is wrong where the
// query is typed, keeps the last good search applied, and that enter does
// not take it.
func TestSearchBadTerm(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 140, 40, scenario(t))
	m = aside(m)
	m = keys(m, "/")
	m = typeText(m, "tool:read_cell took:>")
	if m.calls.queryErr == "" {
		t.Fatal("took:> parsed")
	}
	if m.calls.filter != "tool:read_cell took" {
		t.Errorf("while the query is bad, the last good one should apply: %q", m.calls.filter)
	}
	if !strings.Contains(m.View(), "✗ took:>: want a comparison and a duration") {
		t.Errorf("the screen does not say what is wrong:\n%s", m.View())
	}
	m = keys(m, "enter")
	if !m.calls.filtering {
		t.Error("enter closed the input on a bad query")
	}
	m = typeText(m, "1s")
	if m.calls.queryErr != "" || len(m.calls.visible(&m)) != 0 {
		t.Errorf("took:>1s: err %q, shown %v (read_cell took 3ms)", m.calls.queryErr, toolsOf(m.calls.visible(&m)))
	}
	if !strings.Contains(m.View(), "no call of 6 matches /tool:read_cell took:>1s") {
		t.Errorf("the empty result does not say so:\n%s", m.View())
	}
	m = keys(m, "enter")
	if m.calls.filtering {
		t.Error("enter did not keep a good query")
	}
}

// TestSearchNextMatch checks n and N: they step through the matches,
// wrapping, with the detail following, and a held call takes n to deny.
func TestSearchNextMatch(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := newTestModel(t, b, 140, 40, scenario(t))
	m = aside(m)
	if m.keys.NextMatch.Enabled() {
		t.Error("n navigates with no search")
	}
	m = keys(m, "/")
	m = typeText(m, "sales")
	m = keys(m, "enter")
	if got := toolsOf(m.calls.visible(&m)); strings.Join(got, ",") != "use_notebook,list_files" {
		t.Fatalf("sales shows %v", got)
	}
	// The newest match is selected (following); n wraps to the first.
	if m.selectedCall().Tool != "list_files" {
		t.Fatalf("selected %s", m.selectedCall().Tool)
	}
	m, _ = pressKey(m, "n")
	if m.selectedCall().Tool != "use_notebook" || m.detail.callID != "c1" {
		t.Fatalf("n selected %s, detail %s", m.selectedCall().Tool, m.detail.callID)
	}
	if !strings.Contains(m.View(), "match 1 of 2: use_notebook") {
		t.Error("n does not say which match it is")
	}
	m = keys(m, "n")
	if m.selectedCall().Tool != "list_files" {
		t.Fatalf("second n selected %s", m.selectedCall().Tool)
	}
	m = keys(m, "N", "N")
	if m.selectedCall().Tool != "list_files" {
		t.Fatalf("N N selected %s", m.selectedCall().Tool)
	}
	// The detail pane highlights the word; n still works with it focused.
	m = keys(m, "tab")
	if !m.keys.NextMatch.Enabled() {
		t.Error("n is off in the detail pane during a search")
	}
	m = keys(m, "N")
	if m.selectedCall().Tool != "use_notebook" {
		t.Fatalf("N in the detail pane selected %s", m.selectedCall().Tool)
	}

	// A search that shows the held call: n denies it, as before.
	m = keys(m, "tab", "tab", "tab", "/", "esc", "/")
	m = typeText(m, "status:held|error")
	m = keys(m, "enter")
	if m.selectedCall().Status != event.CallHeld {
		t.Fatalf("selected %v, want the held call", m.selectedCall().Status)
	}
	if m.keys.NextMatch.Enabled() {
		t.Error("n is next match while a held call is selected")
	}
	m, cmd := pressKey(settled(m), "n")
	if cmd == nil {
		t.Fatal("n on a held call did nothing")
	}
	run(t, m, cmd)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.decisions) != 1 || b.decisions[0] != "c6:deny" {
		t.Errorf("decisions %v, want c6:deny", b.decisions)
	}
}

func isQuit(cmd tea.Cmd) bool {
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func toolsOf(cs []*observe.Call) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Tool)
	}
	return out
}

func TestDoublePressInterrupt(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := newTestModel(t, b, 80, 24, scenario(t))
	m = aside(m)
	m = keys(m, "tab", "tab", "tab") // the executions pane
	if !m.keys.Interrupt.Enabled() {
		t.Fatal("interrupt should be enabled with a running execution selected")
	}
	m, _ = pressKey(m, "i")
	if m.pending.kind != pendingInterrupt || len(b.interrupts) != 0 {
		t.Fatalf("first press: pending=%v interrupts=%v", m.pending, b.interrupts)
	}
	if !strings.Contains(m.View(), "press i again to interrupt") {
		t.Error("the first press should say how to confirm")
	}
	m, cmd := pressKey(m, "i")
	m = run(t, m, cmd)
	if len(b.interrupts) != 1 || b.interrupts[0] != "k-5e6f7a8b9c" {
		t.Fatalf("interrupts %v, want one of k-5e6f7a8b9c", b.interrupts)
	}
	if m.pending.kind != pendingNone {
		t.Fatal("the confirmed action should clear the pending press")
	}
	// A third press arms again rather than interrupting twice.
	m, _ = pressKey(m, "i")
	if len(b.interrupts) != 1 || m.pending.kind != pendingInterrupt {
		t.Fatalf("third press: interrupts=%v pending=%v", b.interrupts, m.pending)
	}
	// Once the window expires, a press only arms.
	m = send(m, pendingExpiredMsg{m.pending.seq})
	if m.pending.kind != pendingNone {
		t.Fatal("expiry should clear the pending press")
	}
	m, _ = pressKey(m, "i")
	if len(b.interrupts) != 1 {
		t.Fatalf("a press after expiry interrupted: %v", b.interrupts)
	}
	// A stale expiry (from an earlier press) does not clear a newer one.
	m = send(m, pendingExpiredMsg{m.pending.seq - 1})
	if m.pending.kind != pendingInterrupt {
		t.Fatal("a stale expiry cleared the pending press")
	}
}

func TestDoublePressCancel(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := newTestModel(t, b, 80, 24, scenario(t))
	m = aside(m)
	m = keys(m, "up") // insert_execute_cell, running
	if c := m.selectedCall(); c.Tool != "insert_execute_cell" {
		t.Fatalf("selected %s", c.Tool)
	}
	m, _ = pressKey(m, "x")
	// Moving to another call between the presses starts over.
	m = keys(m, "up", "down")
	m, _ = pressKey(m, "x")
	if len(b.cancels) != 0 {
		t.Fatalf("cancelled after one press: %v", b.cancels)
	}
	m, cmd := pressKey(m, "x")
	run(t, m, cmd)
	if len(b.cancels) != 1 || b.cancels[0] != "c5" {
		t.Fatalf("cancels %v, want [c5]", b.cancels)
	}
	// A finished call cannot be cancelled.
	m = keys(m, "up", "up")
	if m.keys.Cancel.Enabled() {
		t.Fatal("cancel should be disabled on a finished call")
	}
}

func TestPauseToggles(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := newTestModel(t, b, 80, 24, scenario(t))
	m = aside(m)
	m, cmd := pressKey(m, "p")
	m = run(t, m, cmd)
	// The engine confirms with a server event; the key then resumes.
	m = send(m, eventsMsg{{Type: event.EvServerState, Server: &event.ServerEvent{Paused: true, ApprovalMode: "destructive"}}})
	if !strings.Contains(m.View(), "PAUSED") {
		t.Error("the header should say new calls are paused")
	}
	if m.keys.Pause.Help().Desc != "resume new calls" {
		t.Errorf("pause help says %q while paused", m.keys.Pause.Help().Desc)
	}
	_, cmd = pressKey(m, "p")
	run(t, m, cmd)
	if len(b.paused) != 2 || !b.paused[0] || b.paused[1] {
		t.Fatalf("SetPaused calls %v, want [true false]", b.paused)
	}
}

func TestApproveAndDenyHeldCall(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := newTestModel(t, b, 80, 24, scenario(t))
	if c := m.selectedCall(); c.Status != event.CallHeld {
		t.Fatalf("selected %s is %s, want the held call", c.Tool, c.Status)
	}
	if !m.keys.Approve.Enabled() || !m.keys.Deny.Enabled() {
		t.Fatal("y/n should be enabled on a held call")
	}
	m = settled(m)
	_, cmd := pressKey(m, "y")
	run(t, m, cmd)
	_, cmd = pressKey(m, "n")
	run(t, m, cmd)
	if strings.Join(b.decisions, ",") != "c6:allow,c6:deny" {
		t.Fatalf("decisions %v", b.decisions)
	}
	// On a call that is not held the keys do nothing and help hides them.
	m = keys(aside(m), "up")
	if m.keys.Approve.Enabled() {
		t.Fatal("approve should be disabled when the selected call is not held")
	}
	if _, cmd := pressKey(m, "y"); cmd != nil {
		t.Fatal("y on a running call should do nothing")
	}
	if strings.Contains(m.footerView(), "allow held call") {
		t.Error("the short help lists approve on a call that is not held")
	}
}

func TestActionErrorShown(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 80, 24, scenario(t))
	m = send(m, actionDoneMsg{"interrupted kernel k1", observe.ErrReadOnly})
	if !strings.Contains(m.View(), "read-only") {
		t.Error("a failed action should be reported in the footer")
	}
}

func TestTreeToggle(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 140, 40, scenario(t))
	m = aside(m)
	m = keys(m, "up", "up", "up", "up", "tab") // list_files, detail pane
	if m.detail.root == nil {
		t.Fatal("no tree for list_files")
	}
	rows := len(m.detail.rows())
	m = keys(m, " ") // fold the root
	if got := len(m.detail.rows()); got != 1 {
		t.Fatalf("folded root shows %d rows, want 1", got)
	}
	m = keys(m, "enter")
	if got := len(m.detail.rows()); got != rows {
		t.Fatalf("unfolded root shows %d rows, want %d", got, rows)
	}
	// Move to items[0] (collapsed at depth 2) and open it.
	m = keys(m, "down", "down", "down", "down", "down", "down")
	if r := m.detail.rows()[m.detail.cursor]; r.node.key != "[0]" {
		t.Fatalf("cursor on %q, want [0]", r.node.key)
	}
	m = keys(m, "enter")
	if got := len(m.detail.rows()); got != rows+3 {
		t.Fatalf("opening items[0] shows %d rows, want %d", got, rows+3)
	}
	if lines, _ := m.detailLines(100); !strings.Contains(strings.Join(lines, "\n"), `path: "sales.csv"`) {
		t.Error("the opened node's children should be drawn")
	}
}

func TestTokenNeverRendered(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := newTestModel(t, b, 200, 50, scenario(t))
	for _, view := range []string{m.View(), keys(m, "?").View()} {
		if strings.Contains(view, b.info.Token) || strings.Contains(view, b.info.Token[:8]) {
			t.Fatal("the raw token appears on screen")
		}
		if !strings.Contains(view, "s3cr…") && !strings.Contains(view, "Keys") {
			t.Error("the masked token is missing from the header")
		}
	}
	var copied string
	m.copyFn = func(s string) error { copied = s; return nil }
	_, cmd := pressKey(m, "c")
	run(t, m, cmd)
	if copied != b.info.Token {
		t.Fatalf("copied %q, want the token", copied)
	}
}

func TestResizeKeys(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 140, 40, scenario(t))
	m = aside(m)
	before := m.layout()
	m = keys(m, "]", "]", "+")
	after := m.layout()
	if after.leftW <= before.leftW || after.callsH <= before.callsH {
		t.Fatalf("layout did not grow: before %+v after %+v", before, after)
	}
	checkFrame(t, "resized", m.View(), 140, 40)
	m = keys(m, "[", "[", "[", "[", "[", "[", "[", "[", "[", "[", "[", "[")
	checkFrame(t, "narrowest", m.View(), 140, 40)
	for _, sz := range [][2]int{{40, 12}, {60, 15}, {200, 60}} {
		m = send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		checkFrame(t, "small", m.View(), sz[0], sz[1])
	}
}

func TestReplayDisablesActions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/r.jsonl"
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := observe.NewRecordWriter(f, nil)
	for _, ev := range scenario(t) {
		_ = rec.Write(ev)
	}
	f.Close()
	b, err := observe.Replay(path)
	if err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t, b, 80, 24, scenario(t))
	for name, k := range map[string]bool{
		"pause": m.keys.Pause.Enabled(), "approve": m.keys.Approve.Enabled(),
		"interrupt": m.keys.Interrupt.Enabled(), "cancel": m.keys.Cancel.Enabled(),
	} {
		if k {
			t.Errorf("%s is enabled on a replay", name)
		}
	}
	if _, cmd := pressKey(m, "y"); cmd != nil {
		t.Error("y on a replay should do nothing")
	}
}
