package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// statsScenario is the scenario and a second session's calls: repeated
// reads and runs of varied durations, a protocol error, a denied and a
// cancelled call, and results with measured wire sizes.
func statsScenario(t testing.TB) []event.Event {
	evs := scenario(t)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	seq := uint64(len(evs))
	add := func(e event.Event) {
		seq++
		e.Seq = seq
		evs = append(evs, e)
	}
	add(event.Event{Time: at(2), Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: "sess-9c1d", Client: "cursor 1.7"}})
	n := 0
	call := func(start, took float64, tool string, args map[string]any, fin event.CallEvent) {
		n++
		id := fmt.Sprintf("s%d", n)
		add(event.Event{Time: at(start), Type: event.EvCallStarted, Call: &event.CallEvent{ID: id, Session: "sess-9c1d", Tool: tool, Args: raw(t, args), Status: event.CallRunning, Started: at(start)}})
		fin.ID, fin.Session, fin.Tool, fin.Started = id, "sess-9c1d", tool, at(start)
		fin.Duration = time.Duration(took * float64(time.Second))
		if fin.Status == "" {
			fin.Status = event.CallOK
		}
		add(event.Event{Time: at(start + took), Type: event.EvCallFinished, Call: &fin})
	}
	for i := 0; i < 5; i++ {
		call(2+float64(i)*0.1, 0.01*float64(i+1), "read_cell", map[string]any{"cell_index": i}, event.CallEvent{Text: "cell source", TextBytes: 300 + 10*i, StructuredBytes: 420 + 10*i})
	}
	call(4, 7.5, "execute_cell", map[string]any{"cell_index": 2}, event.CallEvent{Text: "<Figure>", Images: 1, TextBytes: 10, StructuredBytes: 900, ImageBytes: 48000})
	call(6, 1.25, "execute_cell", map[string]any{"cell_index": 1}, event.CallEvent{Status: event.CallError, IsError: true, Text: "NameError: name 'df' is not defined", TextBytes: 40, StructuredBytes: 300})
	call(9, 0.002, "read_notebok", map[string]any{}, event.CallEvent{Status: event.CallError, Error: "unknown tool \"read_notebok\""})
	call(10, 12, "delete_cell", map[string]any{"cell_indices": []int{1}}, event.CallEvent{Status: event.CallDenied, Error: "denied in the workbench"})
	call(12, 3.4, "execute_code", map[string]any{"code": "train()"}, event.CallEvent{Status: event.CallCancelled, IsError: true, Text: "The call was cancelled"})
	return evs
}

// TestGoldenStats keeps the stats view at both sizes, as it opens (sorted
// by name) and sorted by p95 with the cursor on the second slowest call.
func TestGoldenStats(t *testing.T) {
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			m := newTestModel(t, newFakeBackend(), sz.w, sz.h, statsScenario(t))
			m = aside(m)
			m = keys(m, "s")
			frame := m.View()
			checkFrame(t, "stats", frame, sz.w, sz.h)
			golden(t, fmt.Sprintf("stats_%dx%d", sz.w, sz.h), frame)

			m = keys(m, "o", "o", "o", "o", "down")
			if m.stats.sort.String() != "p95" {
				t.Fatalf("four presses of o sort by %v, want p95", m.stats.sort)
			}
			frame = m.View()
			checkFrame(t, "stats by p95", frame, sz.w, sz.h)
			golden(t, fmt.Sprintf("stats_p95_%dx%d", sz.w, sz.h), frame)
		})
	}
}

// TestStatsEnterShowsCall checks that enter on a slow call closes the
// stats, clears a search that hides the call, and selects it in the
// timeline with its detail shown.
func TestStatsEnterShowsCall(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 140, 40, statsScenario(t))
	m = aside(m)
	m = keys(m, "/")
	m = typeText(m, "tool:read_cell")
	m = keys(m, "enter", "s")
	if !m.showStats || len(m.stats.slowest) == 0 {
		t.Fatalf("stats shown %v with %d slow calls", m.showStats, len(m.stats.slowest))
	}
	// The slowest call that ran is the 7.5s execute_cell (the denied
	// delete waited 12s but did not run).
	m = keys(m, "enter")
	c := m.selectedCall()
	if m.showStats || c == nil || c.Tool != "execute_cell" || c.Duration != 7500*time.Millisecond {
		t.Fatalf("after enter: stats %v, selected %+v", m.showStats, c)
	}
	if m.calls.searching() || m.focus != FocusCalls || m.detail.callID != c.ID {
		t.Errorf("search %q, focus %v, detail %q: want no search, the calls pane, the call's detail", m.calls.filter, m.focus, m.detail.callID)
	}
	// A slow call the search shows keeps the search.
	m = keys(m, "/")
	m = typeText(m, "tool:execute_*")
	m = keys(m, "enter", "s", "down", "enter")
	if c := m.selectedCall(); c == nil || c.Tool != "execute_code" || m.calls.filter != "tool:execute_*" {
		t.Errorf("selected %+v with search %q", c, m.calls.filter)
	}
	// s and esc close the view.
	for _, k := range []string{"s", "esc"} {
		m = keys(m, "s")
		if !m.showStats {
			t.Fatal("s does not open the stats")
		}
		m = keys(m, k)
		if m.showStats {
			t.Errorf("%s does not close the stats", k)
		}
	}
}

// TestGoldenSearchHighlight keeps the detail pane of a searched call in
// colour: the words found are marked wherever the pane shows them, the
// styles around them kept.
func TestGoldenSearchHighlight(t *testing.T) {
	for _, th := range []struct {
		name    string
		profile termenv.Profile
	}{{"truecolor", termenv.TrueColor}, {"ansi16", termenv.ANSI}} {
		t.Run(th.name, func(t *testing.T) {
			m := newStyledModel(t, newFakeBackend(), themedStyles(th.profile, theme.DarkName), 140, 40, scenario(t))
			m = aside(m)
			m = keys(m, "/")
			m = typeText(m, "SALES tool:list_files")
			m = keys(m, "enter")
			if c := m.selectedCall(); c == nil || c.Tool != "list_files" {
				t.Fatalf("selected %+v", c)
			}
			pane := renderPane(m, FocusDetail)
			golden(t, "detail_search_"+th.name+"_140x40", pane)
			// The mark is there, and it leaves the text as it was.
			if n := strings.Count(pane, m.styles.Match.Render("sales")); n < 2 {
				t.Errorf("%d marked matches of sales, want the two of the text content:\n%s", n, pane)
			}
			unmarked := m
			unmarked.calls.filter, unmarked.calls.query = "", observe.Query{}
			plain := renderPane(unmarked, FocusDetail)
			if stripANSI(pane) != stripANSI(plain) {
				t.Errorf("highlighting changed the text:\n%s\n---\n%s", stripANSI(pane), stripANSI(plain))
			}
		})
	}
	// The calls pane under a search: its title counts the matches.
	m := newTestModel(t, newFakeBackend(), 140, 40, scenario(t))
	m = aside(m)
	m = keys(m, "/")
	m = typeText(m, "status:ok|error took:<200ms")
	golden(t, "calls_search_140x40", renderPane(m, FocusCalls))
}

func stripANSI(s string) string { return ansi.Strip(s) }
