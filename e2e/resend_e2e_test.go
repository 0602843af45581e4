package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// TestResendEndToEnd runs the binary in a real terminal on a real managed
// Jupyter: a go-sdk client runs execute_code 1+1; the person selects the
// call, presses r, edits the code to 2+2 in the inline editor one key at a
// time and sends it with ctrl+s. The resent call runs on the kernel as the
// workbench's own session, is marked so in the timeline, and its detail
// shows the original's 2 beside the resend's 4 and the diff of the two.
func TestResendEndToEnd(t *testing.T) {
	w := startWorkbench(t, "resend-agent", []string{"TERM=xterm-256color"}, nil, []string{"waiting for an agent"})
	tm, cs := w.tm, w.cs
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "resend", "notebook_path": "resend.ipynb", "mode": "create"})
	if text := harness.Text(call(t, cs, "execute_code", map[string]any{"code": "1+1"})); !strings.Contains(text, "2") {
		t.Fatalf("execute_code 1+1 answered %q", text)
	}
	// The calls pane has the focus and follows: the newest call, the
	// execute_code, is selected, and finished: the agent has its answer
	// before the workbench has the event, and r does nothing on a call
	// that is still running.
	selected := regexp.MustCompile(`▸ \d\d:\d\d:\d\d \S+\s+execute_code\s+1\+1\s+\S+ ok`)
	waitFor(t, tm, 20*time.Second, "the execute_code selected and finished", selected.MatchString)

	tm.key("r")
	tm.waitScreen(10*time.Second, "resend execute_code as the workbench", "ctrl+s resend with these arguments", `"code": "1+1"`)
	// The cursor is after the closing brace; the code is the line above.
	// Every key is its own send-keys: a person types one at a time.
	for _, k := range []string{"Up", "End", "Left", "BSpace", "BSpace", "BSpace", "2", "+", "2"} {
		tm.key(k)
	}
	tm.waitScreen(10*time.Second, `"code": "2+2"`)
	tm.key("C-s")

	// The resend is selected once it shows: marked as the workbench's in
	// the timeline, its detail split, original | resent, and the diff.
	sideBySide := regexp.MustCompile(`│\s+2\s+│\s+4\s`)
	diffOld, diffNew := regexp.MustCompile(`│\s+-2\s`), regexp.MustCompile(`│\s+\+4\s`)
	scr := waitFor(t, tm, 60*time.Second, "the resend beside the original with a diff", func(scr string) bool {
		return strings.Contains(scr, "workbench ↻ execute_code") && strings.Contains(scr, "Resend of c-") &&
			strings.Contains(scr, "↻ session workbench") && sideBySide.MatchString(scr) &&
			diffOld.MatchString(scr) && diffNew.MatchString(scr)
	})
	for _, want := range []string{`"code": "2+2"`, "diff of the results (original → resent)", "--- original/text", "+++ resent/text"} {
		if !strings.Contains(scr, want) {
			t.Fatalf("the screen does not show %q:\n%s", want, scr)
		}
	}
	// The resend's row: the workbench's session, named whole, and ok.
	row := regexp.MustCompile(`▸ \d\d:\d\d:\d\d workbench ↻ execute_code\s+2\+2\s+\S+ ok`)
	if !row.MatchString(scr) {
		t.Fatalf("the resend's row in the timeline is not as expected:\n%s", scr)
	}

	// The agent's session saw none of it: its next call answers as before.
	if text := harness.Text(call(t, cs, "execute_code", map[string]any{"code": "3+3"})); !strings.Contains(text, "6") {
		t.Fatalf("execute_code 3+3 answered %q", text)
	}

	tm.quit()
}
