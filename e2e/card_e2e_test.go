package e2e

// End-to-end tests of the held-call card as a person and as an attacker
// meet it: the workbench in a real terminal (tmux) on a real managed
// Jupyter, an agent over HTTP holding calls whose code tries to hide from
// the card, and the screen read back (its text, and with -e its colours).
// Each was seen to fail against the build before the card: the code hid,
// the held call stayed below the visible rows, y landed on another call.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// pendingCall is a tool call made in the background: it answers when a
// person decides it.
type pendingCall struct {
	name string
	done chan *sdk.CallToolResult
	errc chan error
}

// callAsync makes a call that may be held, without waiting for it.
func callAsync(cs *sdk.ClientSession, name string, args map[string]any) *pendingCall {
	p := &pendingCall{name: name, done: make(chan *sdk.CallToolResult, 1), errc: make(chan error, 1)}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			p.errc <- err
			return
		}
		p.done <- res
	}()
	return p
}

// result waits up to d for the call's answer; nil when it has not answered.
func (p *pendingCall) result(t *testing.T, d time.Duration) *sdk.CallToolResult {
	t.Helper()
	select {
	case res := <-p.done:
		return res
	case err := <-p.errc:
		t.Fatalf("%s: %v", p.name, err)
	case <-time.After(d):
	}
	return nil
}

// screenUntil reads the screen until ok holds or d passes, and returns the
// last screen read and whether ok held.
func screenUntil(tm *tmuxSession, d time.Duration, ok func(string) bool) (string, bool) {
	deadline := time.Now().Add(d)
	for {
		scr := tm.screen()
		if ok(scr) {
			return scr, true
		}
		if time.Now().After(deadline) {
			return scr, false
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// containsAll is a screen predicate: every want is on it.
func containsAll(want ...string) func(string) bool {
	return func(scr string) bool {
		for _, w := range want {
			if !strings.Contains(scr, w) {
				return false
			}
		}
		return true
	}
}

// bellRang reads tmux's bell flag of the test's window.
func (s *tmuxSession) bellRang() bool {
	out, _ := s.tmux("display-message", "-p", "-t", s.name, "#{window_bell_flag}").Output()
	return strings.TrimSpace(string(out)) == "1"
}

// decide presses a decision key as a person does: after reading the card
// (a key within a moment of it changing only asks again).
func decide(tm *tmuxSession, k string) {
	time.Sleep(1500 * time.Millisecond)
	tm.key(k)
}

// TestCardShowsEveryCharacterThatRuns holds calls whose code hides from a
// reader in each way an agent has found, at 80x24, and reads the card: a
// lone \r, an escape opened inside a string, colours with foreground =
// background, 3,000 blank lines before the payload, a 17 KB argument.
func TestCardShowsEveryCharacterThatRuns(t *testing.T) {
	w := startWorkbench(t, "hiding-agent", []string{"TERM=xterm-256color"}, []string{"--approve", "all"}, []string{"waiting for an agent"})
	tm, cs := w.tm, w.cs
	tm.resize(80, 24)

	// hold makes the call and waits for its card (or, before the card,
	// its held row); it returns the call.
	hold := func(name string, args map[string]any, want ...string) (*pendingCall, string) {
		t.Helper()
		p := callAsync(cs, name, args)
		scr, ok := screenUntil(tm, 60*time.Second, containsAll(append([]string{name, "held"}, want...)...))
		if !ok {
			t.Errorf("%s: the screen never showed %q; it shows:\n%s", name, want, scr)
		}
		return p, scr
	}
	settle := func(p *pendingCall, k string) *sdk.CallToolResult {
		t.Helper()
		decide(tm, k)
		res := p.result(t, 30*time.Second)
		if res == nil {
			// Before the card y may land elsewhere or ask: say so and
			// move on.
			tm.key("n")
			res = p.result(t, 30*time.Second)
		}
		if res == nil {
			t.Fatalf("%s was never decided; the screen shows:\n%s", p.name, tm.screen())
		}
		return res
	}

	p, _ := hold("use_notebook", map[string]any{"notebook_name": "hiding", "notebook_path": "hiding.ipynb", "mode": "create"}, "hiding.ipynb")
	if res := settle(p, "y"); res.IsError {
		t.Fatalf("use_notebook: %s", harness.Text(res))
	}

	// A lone \r: Python runs both statements, so the card shows both, the
	// payload on a line of its own.
	p, scr := hold("execute_code", map[string]any{"code": "print('safe')  # note\rprint('PAYLOAD-CR')"}, "PAYLOAD-CR")
	ownLine := false
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "print('PAYLOAD-CR')") && !strings.Contains(l, "# note") {
			ownLine = true
		}
	}
	if !ownLine || !strings.Contains(scr, "⟨CR⟩") {
		t.Errorf("the \\r card hides the second statement in the comment:\n%s", scr)
	}
	settle(p, "n")

	// An OSC opened inside a string literal: the rest of the line stays,
	// on the card and in the arguments view.
	p, scr = hold("execute_code", map[string]any{"code": "x = \"\x1b]\"; print('AFTER-ESC')"}, "x = \"")
	if !strings.Contains(scr, `print('AFTER-ESC')`) || !strings.Contains(scr, "⟨ESC⟩") {
		t.Errorf("the escape in a string made the rest of the line vanish from the card:\n%s", scr)
	}
	settle(p, "n")
	// Denied, it is the newest call: the detail pane shows its arguments.
	if scr, ok := screenUntil(tm, 10*time.Second, containsAll("denied", `print('AFTER-ESC')`)); !ok {
		t.Errorf("the arguments view lost the rest of the line:\n%s", scr)
	}

	// Foreground = background: the source is drawn visibly, on the card
	// (an insert's preview) and in the Calls list.
	p, _ = hold("insert_cell", map[string]any{"cell_index": -1, "cell_type": "markdown", "cell_source": "\x1b[30;40mPAYLOAD-FGBG rm -rf /data\x1b[0m"}, "PAYLOAD-FGBG")
	styled := tm.styled()
	if lines := invisibleLines(styled, "PAYLOAD-FGBG"); len(lines) > 0 {
		t.Errorf("PAYLOAD-FGBG is drawn with its foreground equal to its background:\n%s", strings.Join(lines, "\n"))
	}
	settle(p, "n")
	// The Calls list has room for arguments on a wide screen; its args
	// column leads with the source's first line, the escape shown as a
	// marker: it must be drawn visibly.
	tm.resize(200, 50)
	const lead = "⟨ESC⟩[30;40mPAYLOAD-FGBG"
	if scr, ok := screenUntil(tm, 10*time.Second, containsAll("insert_cell", lead)); !ok {
		t.Errorf("the Calls list does not lead with the source, its escape shown:\n%s", scr)
	} else if lines := invisibleLines(tm.styled(), lead); len(lines) > 0 {
		t.Errorf("the Calls list draws the source invisibly:\n%s", strings.Join(lines, "\n"))
	}
	tm.resize(80, 24)

	// 3,000 blank lines: folded, the payload on the first screen, the size
	// said.
	p, _ = hold("execute_code", map[string]any{"code": "print('safe')" + strings.Repeat("\n", 3001) + "print('PAYLOAD-LAST')"}, "print('safe')")
	scr, _ = screenUntil(tm, 5*time.Second, containsAll("PAYLOAD-LAST"))
	for _, want := range []string{"PAYLOAD-LAST", "3000 blank lines", "3,002 lines", "print('safe')"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the blank-line card lacks %q:\n%s", want, scr)
		}
	}
	settle(p, "n")

	// A 17 KB argument: the card carries it to its end; the end is shown
	// after G, and nothing says bytes were left out.
	big := strings.Repeat("x = 'padding padding padding padding padding'\n", 380) + "print('END-OF-17KB')"
	if len(big) < 17000 {
		t.Fatalf("the argument is %d bytes", len(big))
	}
	p, _ = hold("execute_code", map[string]any{"code": big}, "x = 'padding")
	tm.key("G")
	scr, _ = screenUntil(tm, 5*time.Second, containsAll("END-OF-17KB"))
	if !strings.Contains(scr, "print('END-OF-17KB')") || strings.Contains(scr, "more bytes") || !strings.Contains(scr, "17,") {
		t.Errorf("the 17 KB card does not reach the end of the code:\n%s", scr)
	}
	settle(p, "n")

	tm.quitLeavingNothing(w.root)
}

// invisibleLines lists the lines of a styled screen (capture-pane -e) on
// which text is drawn with its foreground colour equal to its background
// (reverse video taken into account) or concealed.
func invisibleLines(styled, text string) []string {
	var bad []string
	for _, l := range strings.Split(styled, "\n") {
		if strings.Contains(ansiPlain(l), text) && drawnInvisibly(l, text) {
			bad = append(bad, fmt.Sprintf("%q", l))
		}
	}
	return bad
}

// ansiPlain is a styled line without its SGR sequences.
func ansiPlain(l string) string {
	var b strings.Builder
	for i := 0; i < len(l); i++ {
		if l[i] == 0x1b && i+1 < len(l) && l[i+1] == '[' {
			j := i + 2
			for j < len(l) && (l[j] < 0x40 || l[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(l[i])
	}
	return b.String()
}

// drawnInvisibly follows the SGR state along a styled line and reports
// whether any character of the first occurrence of text is drawn with equal
// foreground and background colours, or concealed.
func drawnInvisibly(l, text string) bool {
	type state struct {
		fg, bg       string
		rev, conceal bool
	}
	var st state
	var plain strings.Builder
	var states []state
	for i := 0; i < len(l); i++ {
		if l[i] == 0x1b && i+1 < len(l) && l[i+1] == '[' {
			j := i + 2
			for j < len(l) && (l[j] < 0x40 || l[j] > 0x7e) {
				j++
			}
			if j < len(l) && l[j] == 'm' {
				ps := strings.Split(l[i+2:j], ";")
				for k := 0; k < len(ps); k++ {
					n, _ := strconv.Atoi(ps[k])
					switch {
					case n == 0:
						st = state{}
					case n == 7:
						st.rev = true
					case n == 27:
						st.rev = false
					case n == 8:
						st.conceal = true
					case n == 28:
						st.conceal = false
					case n >= 30 && n <= 37:
						st.fg = strconv.Itoa(n - 30)
					case n >= 90 && n <= 97:
						st.fg = strconv.Itoa(n - 90 + 8)
					case n == 39:
						st.fg = ""
					case n >= 40 && n <= 47:
						st.bg = strconv.Itoa(n - 40)
					case n >= 100 && n <= 107:
						st.bg = strconv.Itoa(n - 100 + 8)
					case n == 49:
						st.bg = ""
					case (n == 38 || n == 48) && k+1 < len(ps):
						var c string
						if ps[k+1] == "5" && k+2 < len(ps) {
							c, k = ps[k+2], k+2
						} else if ps[k+1] == "2" && k+4 < len(ps) {
							c, k = "#"+ps[k+2]+","+ps[k+3]+","+ps[k+4], k+4
						}
						if n == 38 {
							st.fg = c
						} else {
							st.bg = c
						}
					}
				}
			}
			i = j
			continue
		}
		plain.WriteByte(l[i])
		states = append(states, st)
	}
	at := strings.Index(plain.String(), text)
	if at < 0 {
		return false
	}
	for _, s := range states[at : at+len(text)] {
		fg, bg := s.fg, s.bg
		if s.rev {
			fg, bg = bg, fg
		}
		if s.conceal || fg != "" && fg == bg {
			return true
		}
	}
	return false
}

// TestHeldCallTakesAttention holds a call while the person looks at older
// calls and at the notebook, at 80x24 and at 160x50: it is brought into
// view with its countdown, the bell rings, and it can be decided there.
func TestHeldCallTakesAttention(t *testing.T) {
	w := startWorkbench(t, "busy-agent", []string{"TERM=xterm-256color"}, []string{"--approve", "execute"}, []string{"waiting for an agent"})
	tm, cs := w.tm, w.cs
	tm.resize(80, 24)

	call(t, cs, "use_notebook", map[string]any{"notebook_name": "busy", "notebook_path": "busy.ipynb", "mode": "create"})
	for i := 0; i < 8; i++ {
		call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": fmt.Sprintf("step_%d = %d", i, i)})
	}
	call(t, cs, "list_files", map[string]any{})
	tm.waitScreen(20*time.Second, "list_files")
	// The person scrolls to older calls and looks at the notebook.
	for _, k := range []string{"k", "k", "k", "k", "k", "k", "Tab", "Tab"} {
		tm.key(k)
		time.Sleep(80 * time.Millisecond)
	}
	if tm.bellRang() {
		t.Fatal("the bell rang before anything was held")
	}

	for i, size := range [][2]int{{80, 24}, {160, 50}} {
		tm.resize(size[0], size[1])
		code := fmt.Sprintf("import os\nprint('held at %dx%d')", size[0], size[1])
		p := callAsync(cs, "execute_code", map[string]any{"code": code})
		scr, ok := screenUntil(tm, 30*time.Second, containsAll("Held execute_code", "denied in", fmt.Sprintf("print('held at %dx%d')", size[0], size[1]), "y allow"))
		if !ok {
			t.Errorf("%dx%d: the held call was not brought into view with its countdown:\n%s", size[0], size[1], scr)
		}
		if i == 0 && !tm.bellRang() {
			t.Error("no bell for the held call (#{window_bell_flag} is 0)")
		}
		if !strings.Contains(strings.SplitN(scr, "\n", 3)[1], "held") {
			t.Errorf("%dx%d: the header does not count the held call:\n%s", size[0], size[1], scr)
		}
		decide(tm, "y")
		res := p.result(t, 30*time.Second)
		if res == nil {
			tm.key("n")
			p.result(t, 30*time.Second)
			t.Fatalf("%dx%d: y did not allow the call on screen:\n%s", size[0], size[1], tm.screen())
		}
		if res.IsError || !strings.Contains(harness.Text(res), fmt.Sprintf("held at %dx%d", size[0], size[1])) {
			t.Fatalf("execute_code: %s", harness.Text(res))
		}
		// Back where the person was, in the notebook.
		tm.key("k")
	}
	tm.quitLeavingNothing(w.root)
}

// TestDecisionRacesNewHeldCall reads held call A, has B arrive, presses y
// 0.4 s later: A is allowed, B waits, queued on the card; y pressed right
// after the card moved to B asks again instead of allowing it.
func TestDecisionRacesNewHeldCall(t *testing.T) {
	w := startWorkbench(t, "racing-agent", []string{"TERM=xterm-256color"}, []string{"--approve", "execute"}, []string{"waiting for an agent"})
	tm, cs := w.tm, w.cs
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "race", "notebook_path": "race.ipynb", "mode": "create"})

	a := callAsync(cs, "execute_code", map[string]any{"code": "print('from A')"})
	if scr, ok := screenUntil(tm, 60*time.Second, containsAll("execute_code", "held", "print('from A')")); !ok {
		t.Fatalf("A was never shown held:\n%s", scr)
	}
	time.Sleep(1500 * time.Millisecond) // the person reads A
	b := callAsync(cs, "execute_code", map[string]any{"code": "print('from B')"})
	// B's row shows held in the timeline.
	heldRows := func(scr string) bool {
		for _, l := range strings.Split(scr, "\n") {
			if strings.Contains(l, "print('from B") && strings.Contains(l, " held") {
				return true
			}
		}
		return false
	}
	if scr, ok := screenUntil(tm, 30*time.Second, heldRows); !ok {
		t.Fatalf("B was never shown held:\n%s", scr)
	}
	if scr := tm.screen(); !strings.Contains(scr, "1 more held: execute_code") || !strings.Contains(scr, "print('from A')") {
		t.Errorf("B does not queue visibly behind A:\n%s", scr)
	}
	time.Sleep(400 * time.Millisecond)
	tm.key("y")
	// The card moves to B at once; y pressed right after asks again.
	scr, moved := screenUntil(tm, 3*time.Second, containsAll("Held execute_code", "print('from B')"))
	tm.key("y")
	asked, _ := screenUntil(tm, 3*time.Second, containsAll("press y again"))
	resA := a.result(t, 30*time.Second)
	if resB := b.result(t, 2*time.Second); resB != nil {
		t.Fatalf("y pressed while reading A, or right after the card moved to B, allowed B: %s", harness.Text(resB))
	}
	if resA == nil || resA.IsError || !strings.Contains(harness.Text(resA), "from A") {
		t.Fatalf("y did not allow A: %v", resA)
	}
	if !moved {
		t.Fatalf("the card did not move to B:\n%s", scr)
	}
	if !strings.Contains(asked, "press y again") {
		t.Errorf("y right after the card changed did not ask again:\n%s", asked)
	}
	decide(tm, "y")
	if res := b.result(t, 30*time.Second); res == nil || !strings.Contains(harness.Text(res), "from B") {
		t.Fatalf("B was not allowed after the moment: %v", res)
	}
	tm.quitLeavingNothing(w.root)
}

// TestCardHeldAgainEndToEnd: a held execute_cell whose cell another session
// swaps while the person reads the card. Their y does not run the new
// source: the card comes back for the same call, saying what changed and
// showing the new source with a fresh countdown; y pressed at once only
// asks again (the card changed); n then denies it, and the cell never ran.
func TestCardHeldAgainEndToEnd(t *testing.T) {
	w := startWorkbench(t, "swapping-agent", []string{"TERM=xterm-256color"}, []string{"--approve", "execute"}, []string{"waiting for an agent"})
	tm, cs := w.tm, w.cs
	other, err := harness.ConnectHTTP(context.Background(), "other-agent", fmt.Sprintf("http://127.0.0.1:%d/mcp", w.port), harness.AuthClient(w.token, nil), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "swap", "notebook_path": "swap.ipynb", "mode": "create"})
	call(t, other, "use_notebook", map[string]any{"notebook_name": "swap", "notebook_path": "swap.ipynb"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "ran = 'SHOWN'\nprint(ran)"})

	p := callAsync(cs, "execute_cell", map[string]any{"cell_index": 1, "timeout": 30})
	if scr, ok := screenUntil(tm, 60*time.Second, containsAll("Held execute_cell", "ran = 'SHOWN'", "denied in")); !ok {
		t.Fatalf("the card never showed the cell:\n%s", scr)
	}
	// While the person reads, the other session swaps the cell.
	call(t, other, "overwrite_cell_source", map[string]any{"cell_index": 1, "cell_source": "ran = 'SWAPPED'\nprint(ran)"})
	decide(tm, "y")
	scr, ok := screenUntil(tm, 30*time.Second, containsAll("Held execute_cell", "held again", "ran = 'SWAPPED'", "denied in"))
	if !ok {
		t.Fatalf("the card did not come back for the call held again:\n%s", scr)
	}
	if !strings.Contains(scr, "1 │ ran = 'SWAPPED'") || strings.Contains(scr, "1 │ ran = 'SHOWN'") {
		t.Errorf("the card held again does not show the new source alone:\n%s", scr)
	}
	tm.key("y") // at once: the card just changed
	if asked, ok := screenUntil(tm, 3*time.Second, containsAll("press y again")); !ok {
		t.Errorf("y right after the card came back did not ask again:\n%s", asked)
	}
	if res := p.result(t, 2*time.Second); res != nil {
		t.Fatalf("y right after the card came back decided it: %s", harness.Text(res))
	}
	decide(tm, "n")
	res := p.result(t, 30*time.Second)
	if res == nil || !res.IsError || !strings.Contains(harness.Text(res), "denied") {
		t.Fatalf("denied when held again, the call answered: %v", res)
	}
	if strings.Contains(harness.Text(res), "SWAPPED") || strings.Contains(harness.Text(res), "SHOWN") {
		t.Fatalf("the cell ran: %s", harness.Text(res))
	}
	// The timeline says so.
	if scr, ok := screenUntil(tm, 20*time.Second, func(scr string) bool {
		for _, l := range strings.Split(scr, "\n") {
			if strings.Contains(l, "execute_cell") && strings.Contains(l, "denied") {
				return true
			}
		}
		return false
	}); !ok {
		t.Errorf("the timeline does not show the call denied:\n%s", scr)
	}
	tm.quitLeavingNothing(w.root)
}
