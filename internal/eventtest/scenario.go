// Package eventtest holds the one session of engine events that the
// observation layer and the workbench are tested on: engine/observe's feed,
// recorder and state projection, and ui's panes and goldens, read the same
// events, so what the projection is tested on is what the screens are drawn
// from. It lives outside engine/ because a session names MCP tools and
// arguments, which the engine's own code never does.
//
//	evs := eventtest.Scenario(t)
package eventtest

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// T0 is the fixed clock of Scenario: its first event happens at T0.
var T0 = time.Date(2025, 3, 14, 9, 26, 0, 0, time.UTC)

// PNG is a small gradient image (40x20), a plot's output in Scenario.
func PNG(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for y := 0; y < 20; y++ {
		for x := 0; x < 40; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 6), uint8(y * 12), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// intp is a pointer to n, as an execution count is given.
func intp(n int) *int { return &n }

// JSON is v marshalled, as arguments and results are carried.
func JSON(t testing.TB, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Scenario is a small but complete session: an agent opens a notebook,
// lists files (with a cache hint), edits and runs cells, one call fails, one
// runs, one is held for approval.
func Scenario(t testing.TB) []event.Event {
	at := func(s float64) time.Time { return T0.Add(time.Duration(s * float64(time.Second))) }
	var seq uint64
	ev := func(s float64, e event.Event) event.Event {
		seq++
		e.Seq, e.Time = seq, at(s)
		return e
	}
	call := func(s float64, typ event.EventType, c event.CallEvent) event.Event {
		c.Started = at(s)
		return ev(s, event.Event{Type: typ, Call: &c})
	}
	finish := func(start, took float64, c event.CallEvent) event.Event {
		c.Started = at(start)
		c.Duration = time.Duration(took * float64(time.Second))
		return ev(start+took, event.Event{Type: event.EvCallFinished, Call: &c})
	}
	cells := []event.CellSnapshot{
		{ID: "a1b2c3d4", Type: "markdown", Source: "# Sales analysis\nQuarterly numbers."},
		{ID: "e5f6a7b8", Type: "code", Source: "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.head()", ExecutionCount: intp(1),
			Outputs: []event.OutputSnapshot{{Kind: "execute_result", Text: "   region  q1  q2\n0  north  10  12\n1  south   8   9"}}},
		{ID: "c9d0e1f2", Type: "code", Source: "df.plot()", ExecutionCount: intp(2),
			Outputs: []event.OutputSnapshot{{Kind: "display_data", MimeType: "image/png", Image: PNG(t)}}},
	}
	ok := true
	return []event.Event{
		ev(0, event.Event{Type: event.EvServerState, Server: &event.ServerEvent{JupyterURL: "http://127.0.0.1:8888/", ApprovalMode: "destructive", Jupyter: event.JupyterUp}}),
		ev(0.5, event.Event{Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: "sess-7f3a", Client: "claude-code 1.0"}}),
		ev(0.6, event.Event{Type: event.EvKernelStatus, Kernel: &event.KernelEvent{ID: "k-5e6f7a8b9c", Name: "python3", State: "idle"}}),
		call(1, event.EvCallStarted, event.CallEvent{ID: "c1", Session: "sess-7f3a", Tool: "use_notebook", Args: JSON(t, map[string]any{"notebook_name": "sales", "notebook_path": "sales.ipynb", "mode": "connect"}), Status: event.CallRunning}),
		ev(1.2, event.Event{Type: event.EvNotebookOpened, Notebook: &event.NotebookEvent{Name: "sales", Path: "sales.ipynb", KernelID: "k-5e6f7a8b9c", Cells: cells}}),
		finish(1, 0.31, event.CallEvent{ID: "c1", Session: "sess-7f3a", Tool: "use_notebook", Status: event.CallOK, Text: "Connected to notebook 'sales' (sales.ipynb)", SchemaOK: &ok,
			Structured: JSON(t, map[string]any{"kind": "message", "result": "Connected to notebook 'sales'"})}),
		call(3, event.EvCallStarted, event.CallEvent{ID: "c2", Session: "sess-7f3a", Tool: "list_files", Args: JSON(t, map[string]any{"path": "", "max_depth": 1}), Status: event.CallRunning}),
		finish(3, 0.042, event.CallEvent{ID: "c2", Session: "sess-7f3a", Tool: "list_files", Status: event.CallOK,
			Text: "Path\tType\tSize\nsales.csv\tfile\t1204\nsales.ipynb\tnotebook\t5120", SchemaOK: &ok,
			Structured: JSON(t, map[string]any{"kind": "rows", "columns": []string{"path", "type", "size"},
				"items": []any{map[string]any{"path": "sales.csv", "type": "file", "size": 1204}, map[string]any{"path": "sales.ipynb", "type": "notebook", "size": 5120}}}),
			Meta: JSON(t, map[string]any{"io.modelcontextprotocol/cache": map[string]any{"ttlMs": 30000, "cacheScope": "private"}})}),
		call(5, event.EvCallStarted, event.CallEvent{ID: "c3", Session: "sess-7f3a", Tool: "overwrite_cell_source", Args: JSON(t, map[string]any{"cell_id": "c9d0e1f2", "cell_source": "df.plot(kind='bar')"}), Status: event.CallRunning}),
		ev(5.1, event.Event{Type: event.EvNotebookChanged, Notebook: &event.NotebookEvent{Name: "sales", Op: event.OpEdit, Index: 2,
			Cells: []event.CellSnapshot{{ID: "c9d0e1f2", Type: "code", Source: "df.plot(kind='bar')", ExecutionCount: intp(2), Outputs: cells[2].Outputs}}}}),
		finish(5, 0.12, event.CallEvent{ID: "c3", Session: "sess-7f3a", Tool: "overwrite_cell_source", Status: event.CallOK, Text: "Cell 2 overwritten", CellID: "c9d0e1f2", Notebook: "sales", SchemaOK: &ok,
			Structured: JSON(t, map[string]any{"kind": "message", "result": "Cell 2 overwritten", "diff": "-df.plot()\n+df.plot(kind='bar')"}),
			Meta:       JSON(t, map[string]any{"io.jupyter-mcp/cell_id": "c9d0e1f2"})}),
		call(8, event.EvCallStarted, event.CallEvent{ID: "c4", Session: "sess-7f3a", Tool: "read_cell", Args: JSON(t, map[string]any{"cell_index": 9}), Status: event.CallRunning}),
		finish(8, 0.003, event.CallEvent{ID: "c4", Session: "sess-7f3a", Tool: "read_cell", Status: event.CallError, IsError: true, Text: "Cell index 9 is out of range: the notebook has 3 cells (0-2).", SchemaOK: &ok}),
		call(20, event.EvCallStarted, event.CallEvent{ID: "c5", Session: "sess-7f3a", Tool: "insert_execute_cell", Args: JSON(t, map[string]any{"cell_index": -1, "cell_source": "for i in range(100):\n    print(i)\n    time.sleep(1)"}), Status: event.CallRunning}),
		ev(20.1, event.Event{Type: event.EvNotebookChanged, Notebook: &event.NotebookEvent{Name: "sales", Op: event.OpInsert, Index: 3,
			Cells: []event.CellSnapshot{{ID: "f3a4b5c6", Type: "code", Source: "for i in range(100):\n    print(i)\n    time.sleep(1)"}}}}),
		ev(20.2, event.Event{Type: event.EvExecStarted, Exec: &event.ExecEvent{ID: "x1", Notebook: "sales", CellID: "f3a4b5c6", KernelID: "k-5e6f7a8b9c", CallID: "c5", Code: "for i in range(100):\n    print(i)"}}),
		ev(20.3, event.Event{Type: event.EvKernelStatus, Kernel: &event.KernelEvent{ID: "k-5e6f7a8b9c", State: "busy"}}),
		ev(21, event.Event{Type: event.EvExecOutput, Exec: &event.ExecEvent{ID: "x1", Output: &event.OutputSnapshot{Kind: "stream", Name: "stdout", Text: "0\n1\n2\n3\n4\n5\n6\n7\n"}}}),
		ev(28, event.Event{Type: event.EvNotebookChanged, Notebook: &event.NotebookEvent{Name: "sales", Op: event.OpOutput, Index: 3,
			Cells: []event.CellSnapshot{{ID: "f3a4b5c6", Type: "code", Source: "for i in range(100):\n    print(i)\n    time.sleep(1)",
				Outputs: []event.OutputSnapshot{{Kind: "stream", Name: "stdout", Text: "0\n1\n2\n3\n4\n5\n6\n7\n"}}}}}}),
		call(25, event.EvCallStarted, event.CallEvent{ID: "c6", Session: "sess-7f3a", Tool: "delete_cell", Destructive: true, Args: JSON(t, map[string]any{"cell_indices": []int{0}}), Status: event.CallRunning}),
		call(25, event.EvCallHeld, event.CallEvent{ID: "c6", Status: event.CallHeld, Editable: true, HeldUntil: at(145), Preview: &event.CallPreview{
			Client: "claude-code 1.0", Notebook: "sales", What: "delete 1 of 4 cells",
			Cells: []event.PreviewCell{{Index: 0, ID: "a1b2c3d4", Type: "markdown", Source: "# Sales analysis\nQuarterly numbers.", Role: event.PreviewCellGone}}}}),
		ev(26, event.Event{Type: event.EvSandboxStatus, Sandbox: &event.SandboxEvent{Name: "scratch", ID: "sb-1", Variant: "local", State: "idle"}}),
	}
}
