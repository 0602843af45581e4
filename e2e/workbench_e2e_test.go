package e2e

// End-to-end tests of the binary as a person uses it: the workbench running
// in a real terminal (tmux) against a real managed Jupyter server, driven by
// a real MCP client, with the screen read back; and `attach` opening the
// workbench on a stdio server.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

func TestWorkbenchEndToEnd(t *testing.T) {
	w := startWorkbench(t, "e2e-agent", nil, nil, []string{"waiting for an agent"})
	tm, cs, root, token := w.tm, w.cs, w.root, w.token
	if strings.Contains(tm.screen(), token) {
		t.Fatal("the bearer token is shown in clear on the screen")
	}

	call(t, cs, "use_notebook", map[string]any{"notebook_name": "demo", "notebook_path": "demo.ipynb", "mode": "create"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "answer = 41"})
	plot := call(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1,
		"cell_source": "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.figure(figsize=(2,2)); plt.plot([1, 3, 2]); plt.show()"})
	if sc, _ := plot.StructuredContent.(map[string]any); sc == nil || sc["images"] != float64(1) {
		t.Fatalf("plot result: %v", plot.StructuredContent)
	}
	call(t, cs, "edit_cell_source", map[string]any{"cell_index": 1, "old_string": "41", "new_string": "42"})

	// The calls appear in the timeline and the notebook pane shows the new
	// cell (edited) and the plot.
	tm.waitScreen(10*time.Second, "use_notebook", "insert_cell", "edit_cell_sou", "answer = 42", "image/png")

	// A long cell runs; the person interrupts its kernel with a double
	// press, and the agent's call returns with the KeyboardInterrupt.
	type outcome struct {
		res *sdk.CallToolResult
		err error
		dur time.Duration
	}
	done := make(chan outcome, 1)
	go func() {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "insert_execute_code_cell",
			Arguments: map[string]any{"cell_index": -1, "cell_source": "import time\nprint('sleeping', flush=True)\ntime.sleep(60)", "timeout": 90}})
		done <- outcome{res, err, time.Since(start)}
	}()
	tm.waitScreen(20*time.Second, "running", "sleeping")
	focused := false
	for i := 0; i < 6 && !focused; i++ {
		lines := strings.Split(strings.TrimRight(tm.screen(), "\n"), "\n")
		if strings.Contains(lines[len(lines)-1], "i i interrupt") {
			focused = true
			break
		}
		tm.key("Tab")
		time.Sleep(300 * time.Millisecond)
	}
	if !focused {
		t.Fatalf("no pane offered the interrupt key:\n%s", tm.screen())
	}
	tm.key("i")
	tm.waitScreen(5*time.Second, "press i again")
	tm.key("i")
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		if !strings.Contains(harness.Text(o.res), "KeyboardInterrupt") {
			t.Fatalf("interrupted call answered: %s", harness.Text(o.res))
		}
		if o.dur > 30*time.Second {
			t.Fatalf("the interrupt took %v", o.dur)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the interrupt did not stop time.sleep(60):\n%s", tm.screen())
	}

	// q quits; the managed Jupyter server and its kernels go with it.
	tm.quitLeavingNothing(root)
}

func TestAttachShowsStdioCalls(t *testing.T) {
	needTmux(t)
	bin := harness.Binary(t)
	root := t.TempDir()
	runtime := t.TempDir() // isolates the feed records from other servers

	cs := harness.StartStdio(t, []string{"--start-new-code-sandbox", "false", "--root-dir", root}, "XDG_RUNTIME_DIR="+runtime)
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "att", "notebook_path": "att.ipynb", "mode": "create"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "markdown", "cell_source": "# attached"})

	tm := startTmux(t, []string{"XDG_RUNTIME_DIR=" + runtime}, bin+" attach")
	// A workbench that attaches late sees what happened before it came.
	tm.waitScreen(20*time.Second, "stdio", "use_notebook", "insert_cell", "# attached")
	// And what happens while it watches.
	call(t, cs, "list_notebooks", map[string]any{})
	tm.waitScreen(10*time.Second, "list_notebooks")
	tm.key("q")
	deadline := time.Now().Add(10 * time.Second)
	for tm.alive() && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if tm.alive() {
		t.Fatal("attach did not exit on q")
	}
	// Quitting the attached workbench leaves the stdio server serving.
	call(t, cs, "list_notebooks", map[string]any{})

	// Closing the client ends the stdio server, its managed Jupyter and its
	// kernels, and its feed record.
	cs.Close()
	deadline = time.Now().Add(15 * time.Second)
	for len(leftovers(root)) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if left := leftovers(root); len(left) > 0 {
		t.Fatalf("processes left behind: %q", left)
	}
	if recs, _ := filepath.Glob(filepath.Join(runtime, "jupyter-mcp-server", "feed-*.json")); len(recs) > 0 {
		t.Fatalf("feed records left behind: %v", recs)
	}
}
