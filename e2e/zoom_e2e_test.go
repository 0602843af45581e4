package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestWorkbenchZoomImageAndExportEndToEnd runs the binary in a real
// terminal on a real managed Jupyter: a client makes calls, z gives the
// focused pane the whole window and z gives it back, E writes the calls to
// a JSON Lines file in the exports folder, outside the served root, with
// the tokens redacted, and
// enter on a plot opens it full-window in half blocks (tmux without
// passthrough) with no escape of a graphics protocol reaching the screen.
func TestWorkbenchZoomImageAndExportEndToEnd(t *testing.T) {
	state := t.TempDir()
	w := startWorkbench(t, "zoom-agent", []string{"TERM=xterm-256color", "XDG_STATE_HOME=" + state}, nil, []string{"waiting for an agent"})
	tm, cs, token := w.tm, w.cs, w.token
	exports := filepath.Join(state, "jupyter-mcp-server", "exports")
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "zoom", "notebook_path": "zoom.ipynb", "mode": "create"})
	// A cell prints a URL with a token and the server's own bearer token:
	// both are in the result the export writes.
	call(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1,
		"cell_source": fmt.Sprintf("print('http://lab:8888/lab?token=cell-secret-42')\nprint('key', %q)", token)})
	tm.waitScreen(10*time.Second, "use_notebook", "insert_execute_code_cell", "cell-secret")
	call(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1,
		"cell_source": "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.figure(figsize=(3,3)); plt.plot([1, 3, 2]); plt.show()"})
	tm.waitScreen(10*time.Second, "image/png")

	// The calls pane has the focus. z: it alone fills the window, its
	// border from the first column to the last, from under the two header
	// lines to above the footer.
	tm.key("z")
	scr := waitFor(t, tm, 10*time.Second, "the calls pane to fill the window", func(scr string) bool {
		lines := strings.Split(strings.TrimRight(scr, "\n"), "\n")
		if len(lines) != 50 {
			return false
		}
		top, bottom := []rune(lines[2]), []rune(lines[48])
		return strings.HasPrefix(lines[2], "┏━ Calls") && len(top) == 160 && top[159] == '┓' &&
			len(bottom) == 160 && bottom[0] == '┗' && bottom[159] == '┛'
	})
	for _, other := range []string{"Executions", "Call c", "zoom · "} {
		if strings.Contains(scr, other) {
			t.Fatalf("zoomed, the screen still shows %q:\n%s", other, scr)
		}
	}
	// z again: every pane is back, the calls pane in its column.
	tm.key("z")
	waitFor(t, tm, 10*time.Second, "every pane back", func(scr string) bool {
		lines := strings.Split(scr, "\n")
		return len(lines) > 2 && strings.Contains(scr, "Executions") && strings.Contains(scr, "zoom · ") &&
			strings.HasPrefix(lines[2], "┏━ Calls") && strings.Contains(lines[2], "┓┌─ Call ")
	})

	// E: the calls shown (all: no filter) go to a file in the exports
	// folder, and the status line says which.
	tm.key("E")
	scr = tm.waitScreen(10*time.Second, "exported 3 calls to "+exports)
	files, _ := filepath.Glob(filepath.Join(exports, "jupyter-mcp-calls-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("export files %v:\n%s", files, scr)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(token)) || bytes.Contains(data, []byte("cell-secret-42")) {
		t.Fatalf("the export holds a token:\n%s", data)
	}
	var tools []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var rec struct {
			Session string `json:"session"`
			Status  string `json:"status"`
			Request struct {
				Method string `json:"method"`
				Params struct {
					Name      string         `json:"name"`
					Arguments map[string]any `json:"arguments"`
				} `json:"params"`
			} `json:"request"`
			Result *struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				StructuredContent map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, sc.Bytes())
		}
		if rec.Request.Method != "tools/call" || rec.Status != "ok" || rec.Session == "" || rec.Result == nil || rec.Result.StructuredContent == nil {
			t.Fatalf("exported call %s", sc.Bytes())
		}
		tools = append(tools, rec.Request.Params.Name)
		if src, _ := rec.Request.Params.Arguments["cell_source"].(string); strings.Contains(src, "print(") {
			if len(rec.Result.Content) != 1 {
				t.Fatalf("the print cell's result: %s", sc.Bytes())
			}
			text := rec.Result.Content[0].Text
			if !strings.Contains(text, "http://lab:8888/lab?token=[redacted]") || !strings.Contains(text, "key [redacted]") {
				t.Fatalf("the result text is not redacted as expected: %q", text)
			}
		}
	}
	if strings.Join(tools, ",") != "use_notebook,insert_execute_code_cell,insert_execute_code_cell" {
		t.Fatalf("exported tools %v", tools)
	}

	// The notebook pane follows the plot's cell; enter there opens the
	// plot full-window. Inside tmux without allow-passthrough that is
	// half blocks: the window is the image drawn in ▀, and not one escape
	// but colours reaches the terminal.
	tm.key("Tab")
	tm.key("Tab")
	waitFor(t, tm, 10*time.Second, "the notebook pane to offer enter", func(scr string) bool {
		return strings.Contains(scr, "enter open image full-window")
	})
	tm.key("Enter")
	scr = waitFor(t, tm, 20*time.Second, "the plot in half blocks", func(scr string) bool {
		return strings.Contains(scr, "halfblocks (tmux without allow-passthrough)") && strings.Count(scr, "▀") > 1000
	})
	// The plot is cell 2: a created notebook holds the reference's one
	// markdown cell before the two inserted.
	if !strings.Contains(scr, "zoom · cell 2 · image/png") || strings.Contains(scr, "Executions") {
		t.Fatalf("the image does not have the window:\n%s", scr)
	}
	styled, _ := tm.tmux("capture-pane", "-p", "-e", "-t", tm.name).Output()
	if stray := sgr.ReplaceAll(styled, nil); bytes.ContainsRune(stray, 0x1b) {
		i := bytes.IndexByte(stray, 0x1b)
		t.Fatalf("an escape other than colours is on screen: %q", stray[i:min(i+40, len(stray))])
	}
	for _, leak := range []string{"_Ga=", "1337;File", "tmux;", "\"1;1;"} {
		if strings.Contains(scr, leak) {
			t.Fatalf("a graphics escape leaked onto the screen (%q):\n%s", leak, scr)
		}
	}
	// q closes it (and does not quit); the panes are back, the image gone.
	tm.key("q")
	scr = waitFor(t, tm, 10*time.Second, "the panes back", func(scr string) bool {
		return strings.Contains(scr, "Executions") && !strings.Contains(scr, "closes the image")
	})
	if strings.Count(scr, "▀") > 1000 {
		t.Fatalf("the full-window image is still on screen:\n%s", scr)
	}
	tm.quit()
}

// sgr matches the colour and style sequences tmux writes in a capture.
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)
