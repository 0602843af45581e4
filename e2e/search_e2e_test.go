package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// matchMark finds a word drawn with a background colour (the search's
// mark) in a screen captured with its escapes.
var matchMark = regexp.MustCompile(`((?:\x1b\[[0-9;]*m)+)needle(?:\x1b\[[0-9;]*m)+_from_result`)

// TestSearchEndToEnd runs the workbench in a real terminal on a real
// managed Jupyter, makes calls with a real client, and searches them with
// keys typed one at a time: the matches and their count show, n and N step
// through them with the Call pane following, the word is marked, and a
// bad term says what is wrong; the stats view shows the same calls.
func TestSearchEndToEnd(t *testing.T) {
	w := startWorkbench(t, "search-agent", nil, nil, []string{"waiting for an agent"})
	tm, cs, root := w.tm, w.cs, w.root
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "hunt", "notebook_path": "hunt.ipynb", "mode": "create"})
	// The word is in this call's arguments...
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "needle_in_args = 1"})
	call(t, cs, "list_files", map[string]any{})
	// ...and in this one's result only (the code spells it in two parts).
	call(t, cs, "execute_code", map[string]any{"code": "print('nee' + 'dle_from_result')"})
	tm.waitScreen(20*time.Second, "use_notebook", "insert_cell", "list_files", "execute_code")

	typeKeys := func(s string) {
		for _, r := range s {
			k := string(r)
			if r == ' ' {
				k = "Space"
			}
			tm.key(k)
			// Keys sent in one burst can arrive as one read; space them so
			// each is its own key press.
			time.Sleep(40 * time.Millisecond)
		}
	}
	typeKeys("/NEEDLE")
	tm.key("Enter")
	scr := tm.waitScreen(10*time.Second, "/NEEDLE 2 of 4 match")
	if strings.Contains(scr, "list_files") || strings.Contains(scr, "use_notebook") {
		t.Errorf("calls that do not match are shown:\n%s", scr)
	}
	// The newest match is selected; n wraps to the first, N comes back.
	typeKeys("n")
	tm.waitScreen(10*time.Second, "match 1 of 2: insert_cell", "needle_in_args = 1")
	typeKeys("N")
	tm.waitScreen(10*time.Second, "match 2 of 2: execute_code", "needle_from_result")
	// The word is marked in the Call pane: a background colour before it.
	out, _ := tm.tmux("capture-pane", "-p", "-e", "-t", tm.name).Output()
	if m := matchMark.FindStringSubmatch(string(out)); m == nil || !strings.Contains(m[1], "48;") && !strings.Contains(m[1], "[7m") {
		t.Errorf("needle_from_result is not marked in the Call pane: %q", m)
	}

	// A term narrows by field; a bad one says what is wrong and keeps the
	// search before it.
	tm.key("Escape")
	// (An escape and the next key in one read would be alt+key: wait for
	// the escape to have cleared the search before typing on.)
	tm.waitScreen(10*time.Second, "Calls 4 ━")
	typeKeys("/tool:list_* status:nope")
	tm.waitScreen(10*time.Second, "status:nope is not a status", "/tool:list_* status 0 of 4 match")
	for range len("nope") {
		tm.key("BSpace")
		time.Sleep(40 * time.Millisecond)
	}
	typeKeys("ok")
	tm.key("Enter")
	tm.waitScreen(10*time.Second, "/tool:list_* status:ok 1 of 4 match")

	// The stats view counts the same calls; enter on the slowest (the
	// notebook's creation, which starts a kernel) shows it in the timeline,
	// clearing the search that hides it.
	typeKeys("s")
	tm.waitScreen(10*time.Second, "Stats · 4 calls", "By tool", "By session", "search-agent", "Slowest calls")
	tm.key("Enter")
	tm.waitScreen(10*time.Second, "search cleared to show the call", "Calls 4 ━")

	tm.quitLeavingNothing(root)
}
