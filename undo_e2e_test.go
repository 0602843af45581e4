package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// The person undoes an agent's insert_cell from the workbench in a real
// terminal: `u` `u` on the call in the timeline. The cell leaves the file on
// disk, the timeline shows the undo, and the agent's next result on the
// notebook says a person reverted its call.
func TestUndoEndToEnd(t *testing.T) {
	needTmux(t)
	bin := harness.Binary(t)
	root := t.TempDir()
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	token := "e2e-undo-token-0123456789"
	tm := startTmux(t, []string{"MCP_TOKEN=" + token, "PYDEVD_DISABLE_FILE_VALIDATION=1"},
		fmt.Sprintf("%s --port %d --root-dir %s --log-file %s", bin, port, root, filepath.Join(root, "server.log")))
	tm.waitScreen(60*time.Second, fmt.Sprintf("127.0.0.1:%d/mcp", port), "waiting for an agent")

	cs, err := harness.ConnectHTTP(context.Background(), "e2e-agent", fmt.Sprintf("http://127.0.0.1:%d/mcp", port), harness.AuthClient(token, nil), true)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "undo", "notebook_path": "undo.ipynb", "mode": "create"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "markdown", "cell_source": "# kept"})
	res := call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "undo_me = 1"})
	cellID, _ := res.Meta["io.jupyter-mcp/cell_id"].(string)
	if cellID == "" {
		t.Fatalf("insert_cell gave no cell id: %v", res.Meta)
	}
	file := filepath.Join(root, "undo.ipynb")
	if data, err := os.ReadFile(file); err != nil || !strings.Contains(string(data), "undo_me = 1") {
		t.Fatalf("the inserted cell is not on disk (%v)", err)
	}

	// The timeline follows the newest call: the second insert_cell is
	// selected, and the calls pane has the keys.
	tm.waitScreen(10*time.Second, "undo_me = 1", "u u undoes")
	tm.key("u")
	tm.waitScreen(5*time.Second, "press u again to undo insert_cell")
	tm.key("u")
	scr := tm.waitScreen(20*time.Second, "of insert_cell", "by the person")
	if !strings.Contains(scr, "undo") {
		t.Fatalf("no undo entry in the timeline:\n%s", scr)
	}

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "undo_me") || strings.Contains(string(data), cellID) || !strings.Contains(string(data), "# kept") {
		t.Fatalf("after the undo the file is:\n%s", data)
	}

	// The agent's next result on the notebook carries the notice.
	next := call(t, cs, "read_notebook", map[string]any{"notebook_name": "undo"})
	want := "(cell " + cellID + " removed)"
	text := harness.Text(next)
	if !strings.Contains(text, "Note: a person reverted your insert_cell of ") || !strings.Contains(text, want) {
		t.Fatalf("the agent's next result does not carry the notice:\n%s", text)
	}
	notes, _ := next.Meta["io.jupyter-mcp/notices"].([]any)
	if len(notes) != 1 || !strings.HasPrefix(fmt.Sprint(notes[0]), "a person reverted your insert_cell of ") || !strings.HasSuffix(fmt.Sprint(notes[0]), want) {
		t.Fatalf("_meta notices: %v", next.Meta)
	}

	tm.key("q")
	deadline := time.Now().Add(20 * time.Second)
	for tm.alive() && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if tm.alive() {
		t.Fatalf("the workbench did not exit on q:\n%s", tm.screen())
	}
	tm.kill()
	time.Sleep(500 * time.Millisecond)
	if left := leftovers(root, "tmux -L "+tm.socket+" "); len(left) > 0 {
		t.Fatalf("processes left behind: %q", left)
	}
}
