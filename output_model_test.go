package main

// The output model seen from both ends: what the agent gets in a tool
// result (mcp) and what the workbench shows (ui) for the same outputs of a
// real kernel must be the same text, but for the colours the workbench keeps
// and its layout (wrapping, clipping to a pane), which is why the logical
// text is compared, not the screen.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui"
)

func TestOutputModelAgentAndWorkbenchAgree(t *testing.T) {
	t.Setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
	srv := jupytertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := engine.New(ctx, engine.Config{JupyterURL: srv.URL, JupyterToken: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sub := e.Bus().Subscribe(1 << 16)
	defer sub.Close()
	s := mcp.New(e, mcp.Options{Version: "test", Images: true})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	call := func(tool string, args map[string]any) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		return res
	}
	call("use_notebook", map[string]any{"notebook_name": "om", "notebook_path": "om.ipynb", "mode": "create"})

	var img bytes.Buffer
	pic := image.NewRGBA(image.Rect(0, 0, 4, 3))
	pic.Set(1, 1, color.RGBA{R: 200, A: 255})
	if err := png.Encode(&img, pic); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, code string
		check      func(t *testing.T, agent []any)
	}{
		{"stream with \\r progress", "import time\nfor i in range(0, 101, 25):\n    print(f'\\r{i:3d}%', end='', flush=True)\n    time.sleep(0.1)\nprint(' done')",
			func(t *testing.T, agent []any) {
				if len(agent) != 1 || agent[0] != "100% done\n" {
					t.Errorf("progress reads %q, want its last state", agent)
				}
			}},
		{"coloured traceback", "def f():\n    return 1/0\nf()",
			func(t *testing.T, agent []any) {
				if len(agent) != 1 || !strings.Contains(agent[0].(string), "ZeroDivisionError") || strings.Contains(agent[0].(string), "\x1b") {
					t.Errorf("traceback reads %q", agent)
				}
			}},
		{"display_data text/plain + image/png", "from IPython.display import Image, display\nimport base64\ndisplay(Image(data=base64.b64decode('" + base64.StdEncoding.EncodeToString(img.Bytes()) + "')))",
			func(t *testing.T, agent []any) {
				m, _ := agent[0].(map[string]any)
				if len(agent) != 1 || m["mimeType"] != "image/png" || m["data"] != base64.StdEncoding.EncodeToString(img.Bytes()) {
					t.Errorf("image reads %v", agent)
				}
			}},
		{"1 MB stream", "import sys\n_ = sys.stdout.write(''.join(f'line {i:07d} ' + 'y' * 86 + '\\n' for i in range(10486)))",
			func(t *testing.T, agent []any) {
				text, _ := agent[0].(string)
				if len(agent) != 1 || !strings.Contains(text, "[... output cut: ") || !strings.Contains(text, "notebook://om/cells/") || len(text) > 21000 {
					t.Errorf("1 MB stream reads %d bytes ending %q", len(text), text[max(len(text)-300, 0):])
				}
			}},
		{"execute_result with only text/html", "dh = get_ipython().displayhook\ndh.start_displayhook()\ndh.write_output_prompt()\ndh.write_format_data({'text/html': '<b>only html</b>'}, {})\ndh.finish_displayhook()",
			func(t *testing.T, agent []any) {
				if len(agent) != 1 || agent[0] != "[HTML Output]" {
					t.Errorf("html reads %q", agent)
				}
			}},
	}
	type done struct {
		cellID string
		agent  []any
	}
	var runs []done
	for _, c := range cases {
		res := call("insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": c.code})
		var sc struct {
			Outputs []any `json:"outputs"`
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &sc); err != nil {
			t.Fatal(err)
		}
		cellID, _ := res.Meta["io.jupyter-mcp/cell_id"].(string)
		t.Run(c.name+"/agent", func(t *testing.T) { c.check(t, sc.Outputs) })
		runs = append(runs, done{cellID, sc.Outputs})
	}

	// The workbench sees what the engine published: drain the bus.
	var events []event.Event
	for quiet := false; !quiet; {
		select {
		case ev := <-sub.C():
			events = append(events, ev)
		case <-time.After(2 * time.Second):
			quiet = true
		}
	}
	if n := sub.Missed(); n > 0 {
		t.Fatalf("the subscription missed %d events", n)
	}
	tr := ui.NewTranscript(events)
	for i, c := range cases {
		r := runs[i]
		t.Run(c.name+"/workbench", func(t *testing.T) {
			texts := tr.CellOutputs("om", r.cellID)
			imgs := tr.CellImages("om", r.cellID)
			if len(texts) != len(r.agent) {
				t.Fatalf("workbench has %d outputs, agent %d", len(texts), len(r.agent))
			}
			var agentLines []string
			for j, a := range r.agent {
				if m, ok := a.(map[string]any); ok {
					if got := base64.StdEncoding.EncodeToString(imgs[j]); got != m["data"] {
						t.Errorf("output %d: the workbench draws other bytes than the agent got", j)
					}
					agentLines = append(agentLines, "[image/png image]")
					continue
				}
				if got := ansi.Strip(texts[j]); got != a {
					t.Errorf("output %d: workbench shows\n%q\nagent got\n%q", j, clip(got), clip(a.(string)))
				}
				agentLines = append(agentLines, strings.TrimSuffix(a.(string), "\n"))
			}
			if c.name == "coloured traceback" && !strings.Contains(texts[0], "\x1b[") {
				t.Errorf("the workbench lost the traceback's colours: %q", clip(texts[0]))
			}
			// The executions pane streamed the same text; it keeps the
			// last lines only.
			pane := strings.Split(ansi.Strip(tr.Execution("om", r.cellID)), "\n")
			want := strings.Split(strings.Join(agentLines, "\n"), "\n")
			if len(pane) > len(want) || strings.Join(pane, "\n") != strings.Join(want[len(want)-len(pane):], "\n") {
				t.Errorf("executions pane holds\n%q\nnot the end of what the agent got\n%q", clip(strings.Join(pane, "\n")), clip(strings.Join(want, "\n")))
			}
		})
	}
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:300] + " … " + s[len(s)-300:]
	}
	return s
}
