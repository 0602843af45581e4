package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// TestApprovalEndToEnd runs the binary with --approve destructive in a real
// terminal on a real managed Jupyter, a go-sdk client making the calls: a
// held edit_cell_source shows its diff before anyone allows it; a held
// execute_code shows its code, and its arguments edited in the workbench
// (inline, then through $EDITOR) are what runs, the agent told so.
func TestApprovalEndToEnd(t *testing.T) {
	w := startWorkbench(t, "approve-agent", []string{"TERM=xterm-256color", "EDITOR=sed -i s/agent/editor/", "VISUAL="},
		[]string{"--approve", "destructive"}, []string{"waiting for an agent", "approval destructive"})
	tm, cs := w.tm, w.cs

	// callHeld makes a call, waits for the workbench to show it held with
	// every want on screen, runs act, and returns the call's result.
	callHeld := func(name string, args map[string]any, act func(screen string), want ...string) *sdk.CallToolResult {
		t.Helper()
		done := make(chan *sdk.CallToolResult, 1)
		errc := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				errc <- err
				return
			}
			done <- res
		}()
		scr := tm.waitScreen(60*time.Second, append([]string{"Held " + name, "y allow"}, want...)...)
		act(scr)
		select {
		case res := <-done:
			return res
		case err := <-errc:
			t.Fatalf("%s: %v", name, err)
		case <-time.After(90 * time.Second):
			t.Fatalf("%s never answered; the screen shows:\n%s", name, tm.screen())
		}
		return nil
	}
	// y after reading the card: pressed within a second of it changing,
	// y only asks again.
	allow := func(string) { time.Sleep(1500 * time.Millisecond); tm.key("y") }
	mustOK := func(res *sdk.CallToolResult) string {
		t.Helper()
		if res.IsError {
			t.Fatalf("error result: %s", harness.Text(res))
		}
		return harness.Text(res)
	}

	mustOK(callHeld("use_notebook", map[string]any{"notebook_name": "approve", "notebook_path": "approve.ipynb", "mode": "create"}, allow))
	// A created notebook holds the reference's one markdown cell: the
	// insert is cell 1.
	mustOK(callHeld("insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "x = 1\nprint(x)"}, allow,
		"insert a code cell at index 1", "+ 1 [code]", "x = 1"))

	// The edit's diff is on screen while it is held.
	mustOK(callHeld("edit_cell_source", map[string]any{"cell_index": 1, "old_string": "x = 1", "new_string": "x = 10"}, allow,
		"edit the source of cell 1", "-x = 1", "+x = 10", "(approve-agent"))

	// e: the code is edited inline, and the edited code is what runs.
	res := callHeld("execute_code", map[string]any{"code": "print('from the agent')", "timeout": 30}, func(string) {
		tm.key("e")
		tm.waitScreen(10*time.Second, "edit the arguments of execute_code", "ctrl+s allow with these arguments")
		// The cursor is at the end; the code is the second line.
		for _, k := range []string{"Up", "Up", "End", "C-u"} {
			tm.key(k)
		}
		if out, err := tm.tmux("send-keys", "-t", tm.name, "-l", `  "code": "print('from the person')",`).CombinedOutput(); err != nil {
			t.Fatalf("send-keys: %v %s", err, out)
		}
		tm.waitScreen(10*time.Second, `"code": "print('from the person')",`)
		tm.key("C-s")
	}, "run code on kernel", "print('from the agent')")
	text := mustOK(res)
	if !strings.Contains(text, "from the person") || strings.Contains(text, "from the agent") ||
		!strings.Contains(text, `edited this call's arguments before it ran (changed code to "print('from the person')")`) {
		t.Fatalf("the inline-edited call answered: %s", text)
	}
	// The workbench shows the arguments that ran, not the agent's.
	tm.waitScreen(20*time.Second, "arguments, as the person edited them before it ran", `code: "print('from the person')"`)

	// ctrl+o: the arguments go through $EDITOR (here a sed), come back into
	// the editor, and run as edited.
	res = callHeld("execute_code", map[string]any{"code": "print('from the agent, again')", "timeout": 30}, func(string) {
		tm.key("e")
		tm.waitScreen(10*time.Second, "edit the arguments of execute_code")
		tm.key("C-o")
		tm.waitScreen(20*time.Second, `"code": "print('from the editor, again')"`)
		tm.key("C-s")
	})
	text = mustOK(res)
	if !strings.Contains(text, "from the editor, again") || strings.Contains(text, "from the agent") {
		t.Fatalf("the $EDITOR-edited call answered: %s", text)
	}

	tm.quit()
}
