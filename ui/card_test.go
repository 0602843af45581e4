package ui

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// cardClock is a clock a test moves, and the announcements the model made.
type cardClock struct {
	mu      sync.Mutex
	now     time.Time
	bells   int
	notices []string
}

func (c *cardClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *cardClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newCardModel is the scenario at w×h on a clock the test moves, the bell
// and the notices counted.
func newCardModel(t *testing.T, w, h int, evs []event.Event) (Model, *cardClock, *fakeBackend) {
	t.Helper()
	clk := &cardClock{now: t0.Add(30 * time.Second)}
	b := newFakeBackend()
	m := NewModel(b, asciiStyles(), Options{
		Now:  clk.Now,
		Bell: func() { clk.mu.Lock(); clk.bells++; clk.mu.Unlock() },
		Notify: func(title, body string) {
			clk.mu.Lock()
			clk.notices = append(clk.notices, title+": "+body)
			clk.mu.Unlock()
		},
	})
	m = send(m, tea.WindowSizeMsg{Width: w, Height: h})
	if len(evs) > 0 {
		m = send(m, eventsMsg(evs))
	}
	return m, clk, b
}

// heldEvents is a call started and held for approval with code to run.
func heldEvents(t testing.TB, id, tool, code string, at time.Time) []event.Event {
	args := raw(t, map[string]any{"code": code})
	return []event.Event{
		{Time: at, Type: event.EvCallStarted, Call: &event.CallEvent{ID: id, Session: "sess-7f3a", Tool: tool, Args: args, Status: event.CallRunning, Started: at}},
		{Time: at, Type: event.EvCallHeld, Call: &event.CallEvent{ID: id, Session: "sess-7f3a", Tool: tool, Args: args, Status: event.CallHeld,
			Started: at, HeldUntil: at.Add(2 * time.Minute), Preview: &event.CallPreview{What: "run code on kernel k-5e6f7a", Code: code, Language: "python"}}},
	}
}

// runAll runs a command and what it batches, feeding their messages back,
// but for ticks (they would wait).
func runAll(m Model, cmd tea.Cmd) Model {
	if cmd == nil {
		return m
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				m = runAll(m, c)
			}
			return m
		}
		if msg != nil {
			m = send(m, msg)
		}
	case <-time.After(100 * time.Millisecond): // a tick
	}
	return m
}

func screenOf(m Model) string { return ansi.Strip(m.View()) }

// A held call arriving while the person looks elsewhere (older calls, the
// notebook pane) is brought into view, counted down, announced once.
func TestCardTakesAttention(t *testing.T) {
	t.Parallel()
	m, clk, _ := newCardModel(t, 80, 24, scenario(t)[:20]) // no held call yet
	if m.card.open {
		t.Fatal("a card with nothing held")
	}
	m = keys(m, "up", "up", "up", "tab", "tab") // an older call; the notebook pane
	var cmd tea.Cmd
	nm, cmd := m.Update(eventsMsg(heldEvents(t, "h1", "execute_code", "import os\nos.remove('data.csv')", t0.Add(29*time.Second))))
	m = runAll(nm.(Model), cmd)
	if c := m.cardCall(); c == nil || c.ID != "h1" || m.selectedCall().ID != "h1" {
		t.Fatalf("the card shows %v, selected %v", c, m.selectedCall())
	}
	scr := screenOf(m)
	for _, want := range []string{"Held execute_code h1 · denied in 1m59s", "os.remove('data.csv')", "python · 2 lines · 31 bytes", "y allow"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the card lacks %q:\n%s", want, scr)
		}
	}
	if clk.bells != 1 || len(clk.notices) != 1 || !strings.Contains(clk.notices[0], "waiting for your approval") {
		t.Fatalf("bells %d, notices %q", clk.bells, clk.notices)
	}
	// The countdown moves with the clock; the header says it too.
	clk.advance(10 * time.Second)
	m = send(m, tickMsg(clk.Now()))
	if scr := screenOf(m); !strings.Contains(scr, "denied in 1m49s") || !strings.Contains(scr, "⚠ 1 held · denied in 1m49s") {
		t.Fatalf("no countdown:\n%s", scr)
	}
	// Events of the call itself ring nothing again.
	nm, cmd = m.Update(eventsMsg{{Type: event.EvCallProgress, Call: &event.CallEvent{ID: "h1", Status: event.CallHeld, Progress: "waiting for approval in the workbench"}}})
	m = runAll(nm.(Model), cmd)
	if clk.bells != 1 {
		t.Fatalf("rang %d times for one held call", clk.bells)
	}
	// esc puts it aside: the call stays held, the person is back where
	// they were, and H brings it back.
	m = keys(m, "esc")
	if m.card.open || m.selectedCall().ID != "c3" || m.focus != FocusNotebook {
		t.Fatalf("esc: open %v, selected %s", m.card.open, m.selectedCall().ID)
	}
	if !strings.Contains(screenOf(m), "(H shows)") {
		t.Fatal("the header does not say H shows the held call")
	}
	m = keys(m, "H")
	if c := m.cardCall(); c == nil || c.ID != "h1" {
		t.Fatal("H did not bring the card back")
	}
}

// The decision lands on the call on screen: a held call arriving while
// another is shown queues behind it, y allows the one shown, and a key
// pressed right after the card changed asks again.
func TestCardDecisionLandsOnTheCallShown(t *testing.T) {
	t.Parallel()
	evs := append(scenario(t)[:20], heldEvents(t, "A", "execute_code", "print('A')", t0.Add(20*time.Second))...)
	m, clk, b := newCardModel(t, 140, 40, evs)
	clk.advance(5 * time.Second) // the person reads A
	m = send(m, tickMsg(clk.Now()))
	// B arrives; 0.4 s later y.
	m = send(m, eventsMsg(heldEvents(t, "B", "delete_cell", "print('B')", t0.Add(35*time.Second))))
	if c := m.cardCall(); c == nil || c.ID != "A" || m.selectedCall().ID != "A" {
		t.Fatalf("B took the card: shows %v, selected %s", c, m.selectedCall().ID)
	}
	if scr := screenOf(m); !strings.Contains(scr, "1 more held: delete_cell B") || !strings.Contains(scr, "1 of 2 held") {
		t.Fatalf("B does not queue visibly:\n%s", scr)
	}
	clk.advance(400 * time.Millisecond)
	m, cmd := pressKey(m, "y")
	m = runAll(m, cmd)
	if strings.Join(b.decisions, ",") != "A:allow" {
		t.Fatalf("decisions %v, want A:allow", b.decisions)
	}
	// The card moved to B: y at once asks again, and still does within
	// the moment; after it, y allows B.
	if c := m.cardCall(); c == nil || c.ID != "B" {
		t.Fatalf("the card shows %v after A, want B", c)
	}
	clk.advance(300 * time.Millisecond)
	m, cmd = pressKey(m, "y")
	m = runAll(m, cmd)
	if len(b.decisions) != 1 || !strings.Contains(m.status, "just changed") || !strings.Contains(m.status, "press y again") {
		t.Fatalf("y right after the card changed: decisions %v, status %q", b.decisions, m.status)
	}
	clk.advance(300 * time.Millisecond)
	m, cmd = pressKey(m, "y")
	m = runAll(m, cmd)
	if len(b.decisions) != 1 {
		t.Fatalf("a second y within the moment acted: %v", b.decisions)
	}
	clk.advance(cardSettle)
	m, cmd = pressKey(m, "y")
	m = runAll(m, cmd)
	if strings.Join(b.decisions, ",") != "A:allow,B:allow" {
		t.Fatalf("decisions %v", b.decisions)
	}
	if m.card.open {
		t.Fatal("the card is still open with nothing held")
	}
}

// The card shows every character that runs, folds what would push the code
// out of sight, says the code's size, and allowing what was not read to its
// end asks once more.
func TestCardShowsEveryCharacter(t *testing.T) {
	t.Parallel()
	code := "print('safe')  # note\rprint('PAYLOAD')\n" +
		"x = \"\x1b]\"; print('after the escape')\n" +
		"\x1b[30;40mimport shutil; shutil.rmtree('/data')\x1b[0m\n" +
		"ok = 1\u202e # reversed\n" +
		strings.Repeat("\n", 3000) + strings.Repeat("step()\n", 30) + "print('LAST')\n"
	evs := append(scenario(t)[:20], heldEvents(t, "h1", "execute_code", code, t0.Add(25*time.Second))...)
	m, clk, b := newCardModel(t, 80, 24, evs)
	scr := screenOf(m)
	for _, want := range []string{
		"print('safe')  # note⟨CR⟩", "print('PAYLOAD')",
		"x = \"⟨ESC⟩]\"; print('after the escape')",
		"⟨ESC⟩[30;40mimport shutil; shutil.rmtree('/data')⟨ESC⟩[0m",
		"ok = 1⟨U+202E⟩ # reversed",
		"⋯ 3000 blank lines (6–3005) ⋯",
		"3,036 lines", "bytes", "3000 blank lines folded",
		"⚠ hidden characters", "lone carriage return",
	} {
		if !strings.Contains(scr, want) {
			t.Errorf("the card lacks %q:\n%s", want, scr)
		}
	}
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "PAYLOAD") && strings.Contains(l, "# note") {
			t.Errorf("the payload shares the comment's line: %q", l)
		}
	}
	if strings.Contains(m.View(), "\x1b[30;40m") || strings.Contains(m.View(), "\x1b]") {
		t.Error("the code's own escapes reached the screen")
	}
	// The last line is below: y asks once more.
	clk.advance(2 * cardSettle)
	m, cmd := pressKey(m, "y")
	m = runAll(m, cmd)
	if len(b.decisions) != 0 || !strings.Contains(m.status, "not read this call to its end") {
		t.Fatalf("y on a card not read to its end: decisions %v, status %q", b.decisions, m.status)
	}
	if !strings.Contains(screenOf(m), "▼ more below") {
		t.Fatal("no more-below marker")
	}
	// Read to the end, y allows.
	m = keys(m, "G")
	if scr := screenOf(m); !strings.Contains(scr, "print('LAST')") || !strings.Contains(scr, "— end of the call —") {
		t.Fatalf("G does not show the end:\n%s", scr)
	}
	m, cmd = pressKey(m, "y")
	m = runAll(m, cmd)
	if strings.Join(b.decisions, ",") != "h1:allow" {
		t.Fatalf("decisions %v after reading to the end", b.decisions)
	}
}

// A second y confirms a call whose card was not read to its end; code that
// did not reach the workbench says so and asks again.
func TestCardAsksOnceMore(t *testing.T) {
	t.Parallel()
	code := strings.Repeat("print(1)\n", 200)
	evs := append(scenario(t)[:20], heldEvents(t, "h1", "execute_code", code, t0.Add(25*time.Second))...)
	evs[len(evs)-1].Call.Preview.CodeCut = 646
	m, clk, b := newCardModel(t, 80, 24, evs)
	clk.advance(2 * cardSettle)
	if !strings.Contains(screenOf(m), "646 bytes of this call did not reach the workbench") {
		t.Fatalf("the cut is not said:\n%s", screenOf(m))
	}
	m = keys(m, "G") // read to the end: the cut still asks
	m, cmd := pressKey(m, "y")
	m = runAll(m, cmd)
	if len(b.decisions) != 0 || !strings.Contains(m.status, "646 bytes of this call were never carried") {
		t.Fatalf("decisions %v, status %q", b.decisions, m.status)
	}
	m, cmd = pressKey(m, "y")
	runAll(m, cmd)
	if strings.Join(b.decisions, ",") != "h1:allow" {
		t.Fatalf("the second y did not allow: %v", b.decisions)
	}
}

// An input that has the keyboard keeps it: the card waits for it to close.
// A replay opens no card (no one can decide there).
func TestCardWaitsForInputAndSkipsReplay(t *testing.T) {
	t.Parallel()
	m, _, _ := newCardModel(t, 140, 40, scenario(t)[:20])
	m = keys(m, "/")
	m = typeText(m, "sal")
	m = send(m, eventsMsg(heldEvents(t, "h1", "execute_code", "print(1)", t0.Add(25*time.Second))))
	if m.card.open || !m.calls.filtering {
		t.Fatal("the card took the keyboard from the search being typed")
	}
	m = typeText(m, "es")
	m = keys(m, "enter")
	if c := m.cardCall(); c == nil || c.ID != "h1" {
		t.Fatal("the card did not open once the search was entered")
	}

	r := &readOnlyBackend{newFakeBackend()}
	rm := NewModel(r, asciiStyles(), Options{Now: func() time.Time { return t0.Add(30 * time.Second) }, Bell: func() { t.Error("a replay rang the bell") }})
	rm = send(rm, tea.WindowSizeMsg{Width: 140, Height: 40})
	rm = send(rm, eventsMsg(scenario(t)))
	if rm.card.open {
		t.Fatal("a replay opened the card")
	}
}

type readOnlyBackend struct{ *fakeBackend }

func (readOnlyBackend) ReadOnly() bool { return true }

// The arguments view keeps what follows an escape in a string, and the
// Calls list carries no colour of the agent's.
func TestArgsKeepEverything(t *testing.T) {
	t.Parallel()
	args, _ := json.Marshal(map[string]any{"cell_source": "x = \"\x1b]\"; print('rest of the line')", "note": "\x1b[30;40mhidden\x1b[0m"})
	evs := append(scenario(t)[:20],
		event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: "z1", Session: "sess-7f3a", Tool: "insert_cell", Args: args, Status: event.CallRunning, Started: t0.Add(26 * time.Second)}},
		event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: "z1", Status: event.CallOK, Duration: time.Millisecond}},
	)
	m := newStyledModel(t, newFakeBackend(), colourStyles(), 200, 40, evs)
	v := m.View()
	if strings.Contains(v, "\x1b[30;40m") || strings.Contains(v, "\x1b[30m\x1b[40m") {
		t.Error("the agent's colours reached the screen")
	}
	scr := ansi.Strip(v)
	if !strings.Contains(scr, `\u001b]\"; print('rest of the line')`) {
		t.Errorf("the arguments view lost the rest of the line:\n%s", scr)
	}
	// The args column leads with the code's first line (timeline.go).
	if !strings.Contains(scr, `x = "⟨ESC⟩]"; print`) {
		t.Errorf("the Calls list does not show the escape:\n%s", scr)
	}
}

// A call held again (what it would do changed after it was allowed: bind)
// is a new hold: its card comes back with what changed, the bell rings
// again, it is unread again, and a key pressed right after it came back
// asks again, even when the allow, the run and the new hold arrive in
// one batch of events.
func TestCardCountsAReholdAsAChange(t *testing.T) {
	t.Parallel()
	for _, oneBatch := range []bool{false, true} {
		at := t0.Add(20 * time.Second)
		m, clk, b := newCardModel(t, 140, 40, append(scenario(t)[:20], heldEvents(t, "R", "execute_cell", "print('shown')", at)...))
		clk.advance(5 * time.Second)
		m = send(m, tickMsg(clk.Now()))
		m, cmd := pressKey(m, "y")
		m = runAll(m, cmd)
		if strings.Join(b.decisions, ",") != "R:allow" || m.card.open {
			t.Fatalf("first allow: decisions %v, card open %v", b.decisions, m.card.open)
		}
		allowed := event.Event{Type: event.EvCallProgress, Call: &event.CallEvent{ID: "R", Status: event.CallRunning, Progress: "allowed"}}
		reheld := event.Event{Time: clk.Now(), Type: event.EvCallHeld, Call: &event.CallEvent{ID: "R", Status: event.CallHeld,
			Progress:  "held again, since what it would do changed after it was shown (the source of cell 2): waiting for approval in the workbench",
			HeldUntil: clk.Now().Add(2 * time.Minute), Preview: &event.CallPreview{What: "run cell 2 on kernel k-5e6f7a", Notebook: "sales", Path: "sales.ipynb",
				Changed: "the source of cell 2", Code: "print('swapped')", Language: "python"}}}
		bells := clk.bells
		if oneBatch {
			nm, cmd := m.Update(eventsMsg{allowed, reheld})
			m = runAll(nm.(Model), cmd)
		} else {
			nm, cmd := m.Update(eventsMsg{allowed})
			m = runAll(nm.(Model), cmd)
			clk.advance(200 * time.Millisecond)
			nm, cmd = m.Update(eventsMsg{reheld})
			m = runAll(nm.(Model), cmd)
		}
		if c := m.cardCall(); c == nil || c.ID != "R" {
			t.Fatalf("one batch %v: the card did not come back for the call held again: %v", oneBatch, c)
		}
		if clk.bells != bells+1 {
			t.Errorf("one batch %v: rang %d times, want once more for the hold again", oneBatch, clk.bells-bells)
		}
		scr := screenOf(m)
		for _, want := range []string{"held again: changed since you were shown it: the source of cell 2", "run cell 2 on kernel k-5e6f7a · notebook sales (sales.ipynb)", "print('swapped')"} {
			if !strings.Contains(scr, want) {
				t.Errorf("one batch %v: the card lacks %q:\n%s", oneBatch, want, scr)
			}
		}
		clk.advance(300 * time.Millisecond)
		m, cmd = pressKey(m, "y")
		m = runAll(m, cmd)
		if len(b.decisions) != 1 || !strings.Contains(m.status, "just changed") {
			t.Fatalf("one batch %v: y right after the hold again: decisions %v, status %q", oneBatch, b.decisions, m.status)
		}
		clk.advance(cardSettle)
		m, cmd = pressKey(m, "y")
		m = runAll(m, cmd)
		if strings.Join(b.decisions, ",") != "R:allow,R:allow" {
			t.Fatalf("one batch %v: decisions %v", oneBatch, b.decisions)
		}
	}
}
