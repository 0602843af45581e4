package ui

// What a person must not miss in the workbench at a glance (issue 24): the
// start screen that says how to connect, Jupyter's health, failures as
// failures, time held, the layout by need, replay and export. (The held
// call's own attention, bell and notice, is attention_test.go.)

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/eventtest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// upEvents is a server whose Jupyter is up and nothing else yet.
func upEvents() []event.Event {
	return []event.Event{{Type: event.EvServerState, Server: &event.ServerEvent{JupyterURL: "http://127.0.0.1:8888/", Jupyter: event.JupyterUp}}}
}

// plain is a frame without its styles, its lines' trailing blanks cut.
func plain(frame string) string {
	lines := strings.Split(ansi.Strip(frame), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// Until anything happens, the body says how to connect: the endpoint, a
// claude mcp add line with the header and an mcp.json entry, the token
// masked in all of them; t shows it whole everywhere and t masks it again;
// c says what it did.
func TestStartScreenConnects(t *testing.T) {
	t.Parallel()
	for _, sz := range []struct{ w, h int }{{80, 24}, {200, 60}} {
		b := newFakeBackend()
		tok := b.info.Token
		m := newTestModel(t, b, sz.w, sz.h, upEvents())
		frame := m.View()
		checkFrame(t, "start", frame, sz.w, sz.h)
		golden(t, fmt.Sprintf("start_%dx%d", sz.w, sz.h), frame)
		flat := plain(frame)
		for _, want := range []string{"Connect an agent", "MCP endpoint  http://127.0.0.1:4040/mcp", "claude mcp add --transport http jupyter http://127.0.0.1:4040/mcp",
			`"Authorization: Bearer s3cr…"`, `{"mcpServers": {"jupyter": {"type": "http",`, "jupyter up"} {
			if !strings.Contains(flat, want) {
				t.Errorf("%dx%d: the start screen does not show %q:\n%s", sz.w, sz.h, want, flat)
			}
		}
		if strings.Contains(frame, tok) {
			t.Errorf("%dx%d: the token is shown whole before t", sz.w, sz.h)
		}
		shown := keys(m, "t")
		flat = plain(shown.View())
		if strings.Count(flat, tok) < 3 { // header, token line, claude line, mcp.json
			t.Errorf("%dx%d: after t the token is not in the header and the lines:\n%s", sz.w, sz.h, flat)
		}
		// The lines paste as they read: the claude command as a shell
		// reads it, the JSON as JSON.
		var claude, js []string
		inJSON := false
		for _, l := range strings.Split(flat, "\n") {
			switch {
			case strings.HasPrefix(l, "claude mcp add"), len(claude) > 0 && strings.HasSuffix(claude[len(claude)-1], `\`):
				claude = append(claude, l)
			case strings.HasPrefix(l, `{"mcpServers"`):
				inJSON = true
				js = append(js, l)
			case inJSON && strings.HasPrefix(l, "  "):
				js = append(js, l)
			default:
				inJSON = false
			}
		}
		cmd := strings.ReplaceAll(strings.Join(claude, "\n"), "\\\n", "")
		if !strings.Contains(strings.Join(strings.Fields(cmd), " "), `--header "Authorization: Bearer `+tok+`"`) {
			t.Errorf("%dx%d: the claude line does not carry the header: %q", sz.w, sz.h, cmd)
		}
		var entry struct {
			MCPServers map[string]struct {
				Type, URL string
				Headers   map[string]string
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(strings.Join(js, "\n")), &entry); err != nil || entry.MCPServers["jupyter"].Headers["Authorization"] != "Bearer "+tok ||
			entry.MCPServers["jupyter"].URL != "http://127.0.0.1:4040/mcp" {
			t.Errorf("%dx%d: the mcp.json lines are not the entry (%v): %q", sz.w, sz.h, err, js)
		}
		for _, l := range append(claude, js...) {
			if ansi.StringWidth(l) > sz.w {
				t.Errorf("%dx%d: a paste line is wider than the window: %q", sz.w, sz.h, l)
			}
		}
		masked := keys(shown, "t")
		if strings.Contains(masked.View(), tok) {
			t.Errorf("%dx%d: t again does not mask the token", sz.w, sz.h)
		}
		m.copyFn = func(string) error { return nil }
		m, cmdCopy := pressKey(m, "c")
		m = run(t, m, cmdCopy)
		if m.status != copyTokenDone || !strings.Contains(m.status, "if nothing arrived, press t") {
			t.Errorf("c says %q", m.status)
		}
	}
	// The first session ends the start screen: the panes are back.
	m := newTestModel(t, newFakeBackend(), 80, 24, upEvents())
	m = send(m, eventsMsg{{Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: "s1", Client: "claude-code"}}})
	if f := m.View(); strings.Contains(f, "Connect an agent") || !strings.Contains(f, "Calls") {
		t.Errorf("after a session opened:\n%s", f)
	}
}

// Jupyter's health is in the header from the start, with what to do in
// words on a line of its own when it is not up.
func TestHeaderSaysJupyterHealth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ev         event.ServerEvent
		word, fix  string
		fixAbsent  bool
		headerRows int
	}{
		{event.ServerEvent{Jupyter: event.JupyterUp}, "jupyter up", "", true, 2},
		{event.ServerEvent{}, "jupyter checking…", "", true, 2},
		{event.ServerEvent{Jupyter: event.JupyterRefused, JupyterCause: "403", JupyterProblem: "the Jupyter server at http://127.0.0.1:8888/ refused the token (403)"},
			"jupyter token refused (403)", "start jupyter-mcp-server again with the token that Jupyter printed", false, 5},
		{event.ServerEvent{Jupyter: event.JupyterUnreachable, JupyterCause: "connection refused"},
			"jupyter not answering", "is not answering (connection refused): start it, or point --jupyter-url at a server that runs", false, 5},
	} {
		m := newTestModel(t, newFakeBackend(), 80, 24, scenario(t))
		tc.ev.JupyterURL = "http://127.0.0.1:8888/"
		m = send(m, eventsMsg{{Type: event.EvServerState, Server: &tc.ev}})
		frame := m.View()
		checkFrame(t, tc.word, frame, 80, 24)
		lines := strings.Split(plain(frame), "\n")
		if !strings.Contains(lines[1], tc.word) {
			t.Errorf("%s: header line 2 is %q", tc.word, lines[1])
		}
		if l := m.layout(); l.headerH != tc.headerRows {
			t.Errorf("%s: header is %d rows, want %d", tc.word, l.headerH, tc.headerRows)
		}
		fix := strings.Join(strings.Fields(strings.Join(lines[2:m.layout().headerH], " ")), " ")
		if !tc.fixAbsent && !strings.Contains(fix, tc.fix) {
			t.Errorf("%s: the fix reads %q, want %q in it", tc.word, fix, tc.fix)
		}
	}
}

// failedProblem is a managed server's failure to start, as the engine
// says it.
const failedProblem = "jupyter-server is not installed: no Python that can import jupyter_server and ipykernel was found. Tried, in order:\n" +
	"  --python: /root/.pyenv/shims/python3: cannot import jupyter_server, ipykernel (ModuleNotFoundError: No module named 'jupyter_server')\n" +
	"Install Jupyter with one of:\n" +
	"  apt (Debian/Ubuntu): sudo apt-get install jupyter-server python3-ipykernel python3-matplotlib python3-nbformat python3-jupyter-client\n" +
	"  pip (in a virtualenv): python3 -m venv .venv && .venv/bin/pip install jupyter-server ipykernel   (then: source .venv/bin/activate)\n" +
	"then run this again (a virtualenv or conda env must be active, or named with --python); or use a running Jupyter server: --jupyter-url URL --jupyter-token TOKEN"

// A managed server that failed to start shows its whole message in the
// empty panes, wrapped and never cut: every word of it is on the screen,
// scrolling where it does not fit, at 80x24 and 200x60; later, with calls
// in the timeline, in the notebook pane.
func TestFailedJupyterShownWhole(t *testing.T) {
	t.Parallel()
	failed := eventsMsg{{Type: event.EvServerState, Server: &event.ServerEvent{Jupyter: event.JupyterFailed, JupyterProblem: failedProblem}}}
	words := strings.Fields(failedProblem)
	for _, sz := range []struct{ w, h int }{{80, 24}, {200, 60}} {
		m := newTestModel(t, newFakeBackend(), sz.w, sz.h, nil)
		m = send(m, failed)
		var seen strings.Builder
		for i := 0; i < 40; i++ {
			f := m.View()
			checkFrame(t, "failed", f, sz.w, sz.h)
			if i == 0 {
				golden(t, fmt.Sprintf("start_failed_%dx%d", sz.w, sz.h), f)
			}
			seen.WriteString(plain(f) + "\n")
			m = keys(m, "down")
		}
		all := strings.Join(strings.Fields(seen.String()), " ")
		for _, w := range words {
			if !strings.Contains(all, w) {
				t.Errorf("%dx%d: %q of the failure is never on the screen", sz.w, sz.h, w)
			}
		}
		for _, l := range strings.Split(seen.String(), "\n") {
			if strings.HasSuffix(l, "…") && !strings.Contains(l, "jupyter") {
				t.Errorf("%dx%d: a line is cut: %q", sz.w, sz.h, l)
			}
		}
		// Once there are calls, the notebook pane (no notebook to show)
		// holds it, and ↓ scrolls it.
		m = send(m, eventsMsg{{Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: "s1"}}})
		m = keys(m, "tab", "tab")
		seen.Reset()
		for i := 0; i < 40; i++ {
			seen.WriteString(plain(m.notebook.view(&m, m.layout().rightW-2, m.layout().nbH-2)[0]) + "\n")
			seen.WriteString(plain(strings.Join(m.notebook.view(&m, m.layout().rightW-2, m.layout().nbH-2), "\n")) + "\n")
			m = keys(m, "down")
		}
		all = strings.Join(strings.Fields(seen.String()), " ")
		for _, w := range words {
			if !strings.Contains(all, w) {
				t.Errorf("%dx%d notebook pane: %q of the failure is never shown", sz.w, sz.h, w)
			}
		}
	}
}

// failureEvents are calls that failed in every way the timeline tells
// apart, and calls held for a person.
func failureEvents(t *testing.T) []event.Event {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	call := func(typ event.EventType, s float64, c event.CallEvent) event.Event {
		if c.Started.IsZero() {
			c.Started = at(s)
		}
		return event.Event{Time: at(s), Type: typ, Call: &c}
	}
	src := "x = 1\n1/0\nprint('never')"
	return append(upEvents(),
		event.Event{Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: "sess-7f3a", Client: "claude-code 1.0"}},
		call(event.EvCallStarted, 1, event.CallEvent{ID: "f1", Session: "sess-7f3a", Tool: "insert_execute_code_cell", Status: event.CallRunning,
			Args: raw(t, map[string]any{"cell_index": -1, "cell_source": src})}),
		call(event.EvCallFinished, 1.04, event.CallEvent{ID: "f1", Status: event.CallOK, Started: at(1), Duration: ms(40), CellError: "ZeroDivisionError",
			Text: "ZeroDivisionError: division by zero"}),
		call(event.EvCallStarted, 2, event.CallEvent{ID: "f2", Session: "sess-7f3a", Tool: "execute_code", Status: event.CallRunning,
			Args: raw(t, map[string]any{"code": "import time\ntime.sleep(60)"})}),
		call(event.EvCallFinished, 5, event.CallEvent{ID: "f2", Status: event.CallOK, Started: at(2), Duration: 3 * time.Second, CellError: "KeyboardInterrupt"}),
		call(event.EvCallStarted, 6, event.CallEvent{ID: "f3", Session: "sess-7f3a", Tool: "list_files", Status: event.CallRunning, Args: raw(t, map[string]any{"path": ""})}),
		call(event.EvCallHeld, 6, event.CallEvent{ID: "f3", Status: event.CallHeld, Started: at(6)}),
		call(event.EvCallProgress, 17.5, event.CallEvent{ID: "f3", Status: event.CallRunning, Started: at(6), Progress: "allowed"}),
		call(event.EvCallFinished, 17.62, event.CallEvent{ID: "f3", Status: event.CallOK, Started: at(6), Duration: ms(11620), Held: ms(11500)}),
		call(event.EvCallStarted, 20, event.CallEvent{ID: "f4", Session: "sess-7f3a", Tool: "read_cell", Status: event.CallRunning, Args: raw(t, map[string]any{"cell_index": 9})}),
		call(event.EvCallFinished, 20.003, event.CallEvent{ID: "f4", Status: event.CallError, IsError: true, Started: at(20), Duration: ms(3), Text: "Cell index 9 is out of range"}),
		call(event.EvCallStarted, 26, event.CallEvent{ID: "f5", Session: "sess-7f3a", Tool: "delete_cell", Destructive: true, Status: event.CallRunning, Args: raw(t, map[string]any{"cell_indices": []int{0}})}),
		call(event.EvCallHeld, 26, event.CallEvent{ID: "f5", Status: event.CallHeld, Started: at(26)}),
	)
}

// Failures read as failures and the timeline measures the run: a cell that
// raised or was interrupted is "ok · NAME" in the error colour, a held call
// shows its time held beside the run's, and the args column leads with the
// code.
func TestTimelineShowsFailuresAndHeldTime(t *testing.T) {
	t.Parallel()
	for _, sz := range []struct{ w, h int }{{80, 24}, {140, 40}} {
		m := newTestModel(t, newFakeBackend(), sz.w, sz.h, failureEvents(t))
		pane := renderPane(m, FocusCalls)
		golden(t, fmt.Sprintf("calls_failures_%dx%d", sz.w, sz.h), pane)
		flat := plain(pane)
		for _, want := range []string{"ok · ZeroDivisionError", "ok · KeyboardInterrupt", "120ms ok · held 11.5s", "held 4.0s", "3ms error"} {
			if !strings.Contains(flat, want) {
				t.Errorf("%dx%d: the timeline does not show %q:\n%s", sz.w, sz.h, want, flat)
			}
		}
		if sz.w >= 140 && !strings.Contains(flat, "x = 1 cell_index=-1") {
			t.Errorf("the args column does not lead with the code:\n%s", flat)
		}
	}
	// In the 80x24 screen's narrow timeline, the error's name stays whole.
	if f := plain(newTestModel(t, newFakeBackend(), 80, 24, failureEvents(t)).View()); !strings.Contains(f, "ZeroDivisionError ┃") ||
		!strings.Contains(f, "ok held 11.5s") {
		t.Errorf("80x24 screen:\n%s", f)
	}
	// Coloured as an error, as tool errors are.
	m := newStyledModel(t, newFakeBackend(), themedStyles(termenv.ANSI, theme.DarkName), 140, 40, failureEvents(t))
	var row, errRow string
	for _, l := range strings.Split(renderPane(m, FocusCalls), "\n") {
		switch {
		case strings.Contains(ansi.Strip(l), "ZeroDivisionError"):
			row = l
		case strings.Contains(ansi.Strip(l), "read_cell"):
			errRow = l
		}
	}
	failed := m.styles.Failed.Render("x")
	if code := failed[:strings.Index(failed, "x")]; code == "" || !strings.Contains(row, code) || !strings.Contains(errRow, code) {
		t.Errorf("the cell error is not in the error colour %q: %q", code, row)
	}
}

// The Call pane shows a call's code as code (its lines, not an escaped
// JSON string), the run and the time held, and what the code raised.
func TestDetailShowsCodeAndFailure(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 140, 40, failureEvents(t))
	m.calls.selected, m.calls.follow = "f1", false
	m.syncDetail()
	detail := plain(renderPane(m, FocusDetail))
	golden(t, "detail_code_140x40", renderPane(m, FocusDetail))
	for _, want := range []string{"cell_source:", "│ x = 1", "│ 1/0", "│ print('never')", "cell_index: -1", "the code raised ZeroDivisionError"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the Call pane does not show %q:\n%s", want, detail)
		}
	}
	if strings.Contains(detail, `\n`) {
		t.Errorf("the code is shown as an escaped string:\n%s", detail)
	}
	m.calls.selected = "f3"
	m.syncDetail()
	if d := plain(renderPane(m, FocusDetail)); !strings.Contains(d, "list_files  ok  120ms · held 11.5s") {
		t.Errorf("the held call's times:\n%s", d)
	}
}

// The timeline says how many calls are out of view above and below.
func TestCallsMoreMarkers(t *testing.T) {
	t.Parallel()
	var evs []event.Event
	for i := 0; i < 40; i++ {
		c := event.CallEvent{ID: fmt.Sprintf("m%02d", i), Session: "s", Tool: "read_cell", Status: event.CallOK, Started: t0.Add(time.Duration(i) * time.Second), Duration: time.Millisecond}
		evs = append(evs, event.Event{Type: event.EvCallFinished, Call: &c})
	}
	m := newTestModel(t, newFakeBackend(), 80, 24, evs)
	frame := plain(m.View())
	if !strings.Contains(frame, "↑ ") || !strings.Contains(frame, "more above") || strings.Contains(frame, "more below") {
		t.Errorf("following the newest call: no 'more above' marker, or a 'more below' one:\n%s", frame)
	}
	m = keys(m, "g")
	frame = plain(m.View())
	vis := m.calls.rows(&m)
	if !strings.Contains(frame, fmt.Sprintf("↓ %d more below", 40-vis)) || strings.Contains(frame, "more above") {
		t.Errorf("on the first call, want '↓ %d more below':\n%s", 40-vis, frame)
	}
	checkFrame(t, "markers", m.View(), 80, 24)
	// Grown to 200x60 the timeline holds every call: no mark, no blank
	// rows under calls scrolled away.
	m = keys(m, "G")
	m = send(m, tea.WindowSizeMsg{Width: 200, Height: 60})
	if frame := plain(m.View()); strings.Contains(frame, "more above") || !strings.Contains(frame, "09:26:00") {
		t.Errorf("at 200x60 after scrolling at 80x24:\n%s", frame)
	}
}

// fakeReplay is a backend that plays a recording.
type fakeReplay struct {
	*fakeBackend
	started map[string]time.Time
}

func (f *fakeReplay) ReadOnly() bool                   { return true }
func (f *fakeReplay) ReplayState() observe.ReplayState { return observe.ReplayState{Speed: 1} }
func (f *fakeReplay) SetReplayPaused(bool)             {}
func (f *fakeReplay) StepReplay()                      {}
func (f *fakeReplay) RecordedStart(id string) (time.Time, bool) {
	t, ok := f.started[id]
	return t, ok
}

// A replay offers no key that does nothing there (resend, undo) and shows
// the times the calls were recorded at, not the time they are played.
func TestReplayHidesActionsAndShowsRecordedTimes(t *testing.T) {
	t.Parallel()
	fb := newFakeBackend()
	fb.noResend = observe.ErrResendReplay
	evs := failureEvents(t)
	recorded := map[string]time.Time{}
	for _, ev := range evs {
		if ev.Call != nil && ev.Type == event.EvCallStarted {
			recorded[ev.Call.ID] = ev.Call.Started.Add(-72 * time.Hour)
		}
	}
	evs = append(evs, event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: "f4", Status: event.CallOK, Undoable: true}})
	m := newTestModel(t, &fakeReplay{fakeBackend: fb, started: recorded}, 140, 40, evs)
	m.calls.selected, m.calls.follow = "f4", false
	m.syncDetail()
	m.updateKeys()
	if m.keys.Resend.Enabled() || m.keys.Undo.Enabled() {
		t.Errorf("replay offers resend %v, undo %v", m.keys.Resend.Enabled(), m.keys.Undo.Enabled())
	}
	help := plain(keys(m, "?").View())
	if strings.Contains(help, "resend call") || strings.Contains(help, "undo the call") {
		t.Errorf("the help offers resend or undo in a replay:\n%s", help)
	}
	want := recorded["f1"].Local().Format("15:04:05")
	if !strings.Contains(plain(renderPane(m, FocusCalls)), want) {
		t.Errorf("the timeline does not show the recorded time %s:\n%s", want, plain(renderPane(m, FocusCalls)))
	}
}

// NO_COLOR strips the colours kernels put in their outputs too.
func TestNoColourStripsOutputColours(t *testing.T) {
	t.Parallel()
	coloured := "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"
	evs := append(scenario(t), event.Event{Type: event.EvNotebookChanged, Notebook: &event.NotebookEvent{Name: "sales", Op: event.OpOutput, Index: 3,
		Cells: []event.CellSnapshot{{ID: "f3a4b5c6", Type: "code", Source: "1/0",
			Outputs: []event.OutputSnapshot{{Kind: "error", EName: "ZeroDivisionError", Text: coloured}}}}}},
		event.Event{Type: event.EvExecOutput, Exec: &event.ExecEvent{ID: "x1", Output: &event.OutputSnapshot{Kind: "error", Text: coloured}}})
	m := newTestModel(t, newFakeBackend(), 140, 40, evs)
	frame := m.View()
	if !strings.Contains(frame, "ZeroDivisionError") {
		t.Fatalf("the output is not on the screen:\n%s", frame)
	}
	if strings.Contains(frame, "\x1b") {
		t.Errorf("NO_COLOR, and the screen holds escapes: %q", frame[strings.Index(frame, "\x1b"):][:20])
	}
	m = newStyledModel(t, newFakeBackend(), themedStyles(termenv.ANSI256, theme.DarkName), 140, 40, evs)
	if !strings.Contains(m.View(), "\x1b[0;31mZeroDivisionError") {
		t.Error("with colour, the output's own colour is gone")
	}
}

// Images are decoded off the UI goroutine and only when in view: a cell's
// image shows "decoding…" until its command brings it back; images of
// cells out of view are not decoded at all.
func TestImagesDecodeOffTheUIGoroutine(t *testing.T) {
	t.Parallel()
	m := NewModel(newFakeBackend(), asciiStyles(), Options{Now: func() time.Time { return t0.Add(30 * time.Second) }})
	m = send(m, tea.WindowSizeMsg{Width: 200, Height: 60})
	png := eventtest.PNG(t)
	cells := []event.CellSnapshot{{ID: "img1", Type: "code", Source: "plot()", Outputs: []event.OutputSnapshot{{Kind: "display_data", MimeType: "image/png", Image: png}}}}
	for i := 0; i < 30; i++ {
		cells = append(cells, event.CellSnapshot{ID: fmt.Sprintf("t%02d", i), Type: "code", Source: "print(1)\nprint(2)\nprint(3)"})
	}
	cells = append(cells, event.CellSnapshot{ID: "img2", Type: "code", Source: "plot()", Outputs: []event.OutputSnapshot{{Kind: "display_data", MimeType: "image/png", Image: plotPNG(t, 3)}}})
	nm, cmd := m.Update(eventsMsg(append(upEvents(),
		event.Event{Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: "s"}},
		event.Event{Type: event.EvNotebookOpened, Notebook: &event.NotebookEvent{Name: "nb", Path: "nb.ipynb", Cells: cells}})))
	m = nm.(Model)
	if !strings.Contains(m.View(), "decoding…") {
		t.Fatalf("no 'decoding…' while the image is decoded:\n%s", m.View())
	}
	if cmd == nil {
		t.Fatal("no command decodes the image in view")
	}
	msgs := flattenCmd(cmd)
	decoded := 0
	for _, msg := range msgs {
		if d, ok := msg.(imageDecodedMsg); ok {
			decoded++
			nm, _ = m.Update(d)
			m = nm.(Model)
		}
	}
	if decoded != 1 {
		t.Errorf("%d images decoded, want 1 (the one in view)", decoded)
	}
	if f := m.View(); strings.Contains(f, "decoding…") || !strings.Contains(f, "@@") {
		t.Errorf("the decoded image is not drawn:\n%s", f)
	}
	si := m.st.Notebooks["nb"].Cells[len(cells)-1].Outputs[0].Decoded.(*shownImage)
	if si.dec != nil {
		t.Error("an image out of view was decoded")
	}
	// The same image sent again (a change of its cell) is not decoded again.
	nm, cmd = m.Update(eventsMsg{{Type: event.EvNotebookChanged, Notebook: &event.NotebookEvent{Name: "nb", Op: event.OpOutput, Index: 0, Cells: cells[:1]}}})
	m = nm.(Model)
	for _, msg := range flattenCmd(cmd) {
		if _, ok := msg.(imageDecodedMsg); ok {
			t.Error("the same image was decoded again")
		}
	}
	if strings.Contains(m.View(), "decoding…") {
		t.Error("the image already decoded shows as decoding")
	}
}

// flattenCmd runs a command and the commands of the batches it gives,
// returning their messages.
func flattenCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, flattenCmd(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

// The split of a column follows what is active.
func TestShareGivesRoomToTheActive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body, top, bottom int
		topActive         bool
		want              int
	}{
		{57, 8, 5, true, 52},       // little to show: the active top takes the rest
		{57, 8, 40, false, 8},      // a running execution below takes all it needs
		{57, 40, 200, false, 23},   // both need more: the active bottom gets 60%
		{57, 14, 100, true, 14},    // the active top needs little: the other gets the rest
		{57, 57, 100, true, 34},    // both need the column: 60% to the active
		{21, 30, 30, false, 9},     // 80x24
		{8, 30, 30, true, 4},       // too small to weigh needs: the default split
		{57, 100, 100, true, 34},   // defPct 55 < 60
		{57, 3, 3, false, minPane}, // never under a pane's minimum
	} {
		if got := share(tc.body, tc.top, tc.bottom, tc.topActive, 55); got != tc.want {
			t.Errorf("share(%d, %d, %d, %v) = %d, want %d", tc.body, tc.top, tc.bottom, tc.topActive, got, tc.want)
		}
	}
	// At 200x60 a running execution's output gets the rows the timeline
	// does not need; the person's - fixes the split from then on.
	// (The held call's card put aside: it would take the keys.)
	m := aside(newTestModel(t, newFakeBackend(), 200, 60, scenario(t)))
	if l := m.layout(); l.execsH < 40 || l.callsH != len(m.st.Calls)+3 {
		t.Errorf("200x60 with a run: calls %d, executions %d", l.callsH, l.execsH)
	}
	m.focus = FocusExecs
	before := m.layout().execsH
	m = keys(m, "-")
	if after := m.layout().execsH; after >= before || !m.manualLeft {
		t.Errorf("- on the executions pane: %d → %d", before, after)
	}
}

// An export plays in replay as the calls it holds.
func TestExportReplays(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	m := newTestModel(t, b, 140, 40, failureEvents(t))
	m.exportDir = t.TempDir()
	m, cmd := pressKey(m, "E")
	m = run(t, m, cmd)
	path := strings.TrimPrefix(m.status, fmt.Sprintf("exported %d calls to ", len(m.st.Calls)))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (status %q)", err, m.status)
	}
	evs, err := observe.ReadRecording(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	st := observe.NewState(nil)
	for _, ev := range evs {
		st.Apply(ev)
	}
	if len(st.Calls) != len(m.st.Calls) {
		t.Fatalf("%d calls replayed, want %d", len(st.Calls), len(m.st.Calls))
	}
	for _, c := range m.st.Calls {
		r := st.Call(c.ID)
		if r == nil || r.Tool != c.Tool || r.Status != c.Status || r.CellError != c.CellError || r.Held != c.Held || r.Text != c.Text || string(r.Args) != string(c.Args) {
			t.Errorf("call %s replayed as %+v", c.ID, r)
		}
	}
	if _, err := observe.ReadRecording(strings.NewReader(`{"cells": [], "nbformat": 4}` + "\n")); err == nil || !strings.Contains(err.Error(), "neither an event of a recording") {
		t.Errorf("a file that is neither: %v", err)
	}
}
