package e2e

import (
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
	w := startWorkbench(t, "e2e-agent", nil, nil, []string{"waiting for an agent"})
	tm, cs, root := w.tm, w.cs, w.root
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
	const armed = "press u again to undo insert_cell"
	tm.key("u")
	tm.waitScreen(10*time.Second, armed)
	// The second press confirms. On a loaded machine it may come after the
	// 1.5 s window: then it arms again, and the next one confirms. Nothing
	// is pressed once the undo shows (a press on its entry would arm an
	// undo of the undo).
	for tries := 0; ; tries++ {
		tm.key("u")
		time.Sleep(300 * time.Millisecond)
		scr := tm.waitAny(20*time.Second, "by the person", armed)
		if strings.Contains(scr, "by the person") {
			if !strings.Contains(scr, "of insert_cell") {
				t.Fatalf("no undo entry in the timeline:\n%s", scr)
			}
			break
		}
		if tries == 5 {
			t.Fatalf("the undo was never confirmed:\n%s", scr)
		}
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

	tm.quitLeavingNothing(root)
}
