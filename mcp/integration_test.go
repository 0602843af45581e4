package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	testharness "github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// The integration tests run a real engine against one real Jupyter server
// shared by the package, with real go-sdk clients pinned to the protocol
// version hosts speak.

func TestMain(m *testing.M) { os.Exit(jupytertest.StartMain(m)) }

const protocolVersion = testharness.ProtocolVersion

type harness struct {
	t   *testing.T
	srv *jupytertest.Server
	e   *engine.Engine
	s   *Server
	dir string // the test's directory under the Jupyter root
}

func newHarness(t *testing.T) *harness { return newHarnessWith(t, nil) }

// newHarnessWith is newHarness with the engine's configuration changed by
// configure first.
func newHarnessWith(t *testing.T, configure func(*engine.Config)) *harness {
	t.Helper()
	srv := jupytertest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := engine.Config{JupyterURL: srv.URL, JupyterToken: srv.Token, MaxOutputBytes: 2000, Logger: testLog(t)}
	if configure != nil {
		configure(&cfg)
	}
	e, err := engine.New(ctx, cfg)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	h := &harness{t: t, srv: srv, e: e, dir: srv.Subdir(t)}
	h.s = New(e, Options{Version: "test", Images: true, Logger: testLog(t)})
	t.Cleanup(func() {
		if p := h.s.SchemaProblems(); len(p) > 0 {
			t.Errorf("results that did not match their output schema (server bug): %v", p)
		}
		e.Close()
	})
	return h
}

// connect opens an in-memory client session pinned to 2025-11-25.
func (h *harness) connect() *sdk.ClientSession { return h.connectWith(nil) }

func (h *harness) connectWith(opts *sdk.ClientOptions) *sdk.ClientSession {
	h.t.Helper()
	cs, ss, err := testharness.ConnectInMemory(context.Background(), h.s.SDK(), "test-client", opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// writeNotebook writes an nbformat 4.5 notebook under the test directory
// and returns its contents path.
func (h *harness) writeNotebook(name string, cells ...string) string {
	h.t.Helper()
	var list []map[string]any
	for i, src := range cells {
		typ := "code"
		if strings.HasPrefix(src, "#md ") {
			typ, src = "markdown", strings.TrimPrefix(src, "#md ")
		}
		c := map[string]any{"cell_type": typ, "id": fmt.Sprintf("cell-%d", i), "metadata": map[string]any{}, "source": src}
		if typ == "code" {
			c["outputs"], c["execution_count"] = []any{}, nil
		}
		list = append(list, c)
	}
	nb := map[string]any{"cells": list, "metadata": map[string]any{}, "nbformat": 4, "nbformat_minor": 5}
	data, err := json.MarshalIndent(nb, "", " ")
	if err != nil {
		h.t.Fatal(err)
	}
	rel := h.dir + "/" + name
	if err := os.WriteFile(h.srv.Path(rel), append(data, '\n'), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return rel
}

func (h *harness) file(rel string) []byte {
	h.t.Helper()
	b, err := os.ReadFile(h.srv.Path(rel))
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// call calls a tool and fails the test on a protocol error.
func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its text and structure.
func ok(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (string, map[string]any, *sdk.CallToolResult) {
	t.Helper()
	res := callTool(t, cs, name, args)
	text := textOf(res)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, text)
	}
	var m map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &m); err != nil || m["kind"] == nil {
		t.Fatalf("%s: structuredContent without kind: %s", name, raw)
	}
	if text == "" && len(res.Content) == 0 {
		t.Fatalf("%s: no content", name)
	}
	return text, m, res
}

// fails calls a tool that must fail with isError and a message containing
// want.
func fails(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, want string) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	text := textOf(res)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want an error containing %q: %s", name, args, want, text)
	}
	t.Logf("%s(%v) -> %s", name, args, text)
	if !strings.Contains(strings.ToLower(text), strings.ToLower(want)) {
		t.Errorf("%s(%v) error %q does not contain %q", name, args, text, want)
	}
	return text
}

// textOf is the text content of a result.
var textOf = testharness.Text

func cellIDMeta(res *sdk.CallToolResult) string {
	id, _ := res.Meta[metaCellID].(string)
	return id
}

// testLog discards logs unless MCP_TEST_LOG=1 sends them to stderr (t.Log
// would panic when the engine logs after a test has ended).
func testLog(*testing.T) *slog.Logger {
	if os.Getenv("MCP_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func TestToolsListOverTheWire(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	if v := cs.InitializeResult().ProtocolVersion; v != protocolVersion {
		t.Errorf("negotiated protocol %q, want %q", v, protocolVersion)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "use_notebook") {
		t.Errorf("instructions do not explain use_notebook")
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 22 {
		t.Fatalf("%d tools listed, want 22", len(res.Tools))
	}
	for _, tool := range res.Tools {
		if tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: no output schema or annotations", tool.Name)
			continue
		}
		// What goes over the wire is what the snapshot holds.
		got, _ := json.MarshalIndent(tool, "", "  ")
		want, err := os.ReadFile(filepath.Join("testdata", "toolsnaps", tool.Name+".snap"))
		if err != nil {
			t.Errorf("%s: %v", tool.Name, err)
			continue
		}
		if !jsonEqual(got, want) {
			t.Errorf("%s: listed definition differs from its snapshot", tool.Name)
		}
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// onePixelPNG is a valid 1x1 PNG.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

func TestNotebookHappyPaths(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("flow.ipynb", "#md # Title", "x = 21\nprint('hi')", "y = x * 2")

	text, _, res := ok(t, cs, "use_notebook", map[string]any{"notebook_name": "flow", "notebook_path": path})
	if !strings.Contains(text, "Successfully activate notebook 'flow'") {
		t.Errorf("use_notebook: %q", text)
	}
	if res.Meta[metaCache] != nil {
		t.Errorf("use_notebook carries a cache hint")
	}

	// Listings come back as rows, with their cache hints.
	_, m, res := ok(t, cs, "list_notebooks", nil)
	items, _ := m["items"].([]any)
	if m["count"] != float64(1) || len(items) != 1 || items[0].(map[string]any)["Name"] != "flow" || items[0].(map[string]any)["Activate"] != "✓" {
		t.Errorf("list_notebooks structured = %v", m)
	}
	if hint, _ := res.Meta[metaCache].(map[string]any); hint["ttlMs"] != float64(30000) || hint["cacheScope"] != "private" {
		t.Errorf("list_notebooks cache hint = %v", res.Meta)
	}
	_, m, res = ok(t, cs, "list_files", map[string]any{"path": h.dir})
	if cols, _ := m["columns"].([]any); len(cols) != 4 || cols[0] != "Path" || m["count"] != float64(1) {
		t.Errorf("list_files structured = %v", m)
	}
	if hint, _ := res.Meta[metaCache].(map[string]any); hint["ttlMs"] != float64(30000) {
		t.Errorf("list_files cache hint = %v", res.Meta)
	}
	_, m, res = ok(t, cs, "list_kernels", nil)
	if m["count"] == nil || m["count"].(float64) < 1 {
		t.Errorf("list_kernels structured = %v", m)
	}
	if hint, _ := res.Meta[metaCache].(map[string]any); hint["ttlMs"] != float64(10000) {
		t.Errorf("list_kernels cache hint = %v", res.Meta)
	}
	// The language comes from the kernel spec (ipykernel's is python).
	if items, _ := m["items"].([]any); len(items) == 0 || items[0].(map[string]any)["Language"] != "python" {
		t.Errorf("list_kernels items = %v", m["items"])
	}

	text, m, _ = ok(t, cs, "read_notebook", map[string]any{"notebook_name": "flow"})
	if !strings.Contains(text, "Index\tType\tCount\tFirst Line\tID") || !strings.Contains(text, "x = 21...(1 lines hidden)") || m["kind"] != "notebook.read" {
		t.Errorf("read_notebook brief: %q", text)
	}
	text, _, _ = ok(t, cs, "read_notebook", map[string]any{"notebook_name": "flow", "response_format": "detailed", "start_index": 1, "limit": 1})
	if !strings.Contains(text, "=====Cell 1 | type: code | execution count: N/A | id: cell-1=====") || strings.Contains(text, "Cell 2") {
		t.Errorf("read_notebook detailed: %q", text)
	}

	// Edits answer with the acted-on cell id.
	_, _, res = ok(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "z = 0"})
	inserted := cellIDMeta(res)
	if inserted == "" {
		t.Fatalf("insert_cell: no cell id in _meta: %v", res.Meta)
	}
	text, _, res = ok(t, cs, "overwrite_cell_source", map[string]any{"cell_id": inserted, "cell_source": "z = y + 1\nprint(z)"})
	if cellIDMeta(res) != inserted || !strings.Contains(text, "```diff") {
		t.Errorf("overwrite_cell_source: %q %v", text, res.Meta)
	}
	text, _, res = ok(t, cs, "edit_cell_source", map[string]any{"cell_index": 2, "old_string": "x * 2", "new_string": "x * 2 + 1"})
	if cellIDMeta(res) != "cell-2" || !strings.Contains(text, "+y = x * 2 + 1") {
		t.Errorf("edit_cell_source: %q %v", text, res.Meta)
	}

	// Executions come back as outputs, in order.
	_, m, res = ok(t, cs, "execute_cell", map[string]any{"cell_id": "cell-1"})
	if outs, _ := m["outputs"].([]any); len(outs) != 1 || outs[0] != "hi\n" || cellIDMeta(res) != "cell-1" {
		t.Errorf("execute_cell structured = %v meta %v", m, res.Meta)
	}
	ok(t, cs, "execute_cell", map[string]any{"cell_index": 2})
	_, m, _ = ok(t, cs, "execute_cell", map[string]any{"cell_id": inserted})
	if outs, _ := m["result"].([]any); len(outs) != 1 || outs[0] != "44\n" {
		t.Errorf("execute_cell on the edited cells: %v", m)
	}
	_, m, res = ok(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": fmt.Sprintf(
		"from IPython.display import Image, display\nimport base64\nprint('before')\ndisplay(Image(data=base64.b64decode(%q)))", onePixelPNG)})
	plotCell := cellIDMeta(res)
	if m["images"] != float64(1) || m["count"] != float64(2) || m["kind"] != "cell.insert_execute" || plotCell == "" {
		t.Errorf("insert_execute_code_cell structured = %v", m)
	}
	if img, _ := m["outputs"].([]any)[1].(map[string]any); img["type"] != "image" || img["mimeType"] != "image/png" || img["data"] == "" {
		t.Errorf("image output = %v", m["outputs"])
	}
	var sawImage bool
	for _, c := range res.Content {
		if ic, ok := c.(*sdk.ImageContent); ok && ic.MIMEType == "image/png" && len(ic.Data) > 0 {
			sawImage = true
		}
	}
	if !sawImage {
		t.Errorf("no ImageContent in content")
	}

	// Tracebacks arrive without ANSI escapes; errors are outputs, not tool errors.
	_, m, _ = ok(t, cs, "execute_code", map[string]any{"code": "1/0"})
	if outs, _ := m["outputs"].([]any); len(outs) != 1 || !strings.Contains(outs[0].(string), "ZeroDivisionError") || strings.Contains(outs[0].(string), "\x1b[") {
		t.Errorf("execute_code error output = %v", m["outputs"])
	}
	_, m, _ = ok(t, cs, "execute_code", map[string]any{"code": "print(x + 21)"})
	if outs, _ := m["outputs"].([]any); len(outs) != 1 || outs[0] != "42\n" || m["kind"] != "code.execute" {
		t.Errorf("execute_code = %v", m)
	}

	// A long output is cut, naming the resource that serves it whole.
	_, m, res = ok(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": "print('a' * 5000)"})
	longCell := cellIDMeta(res)
	cutText := m["outputs"].([]any)[0].(string)
	uri := fmt.Sprintf("notebook://flow/cells/%s/outputs/0", longCell)
	if !strings.Contains(cutText, "output cut") || !strings.Contains(cutText, uri) {
		t.Errorf("long output not cut with the resource named: %q", cutText[len(cutText)-200:])
	}
	rr, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("reading %s: %v", uri, err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != strings.Repeat("a", 5000)+"\n" || rr.Contents[0].MIMEType != "text/plain" {
		t.Errorf("output resource = %d contents", len(rr.Contents))
	}

	// read_cell answers in the outputs shape, with the cell beside them.
	text, m, res = ok(t, cs, "read_cell", map[string]any{"cell_id": plotCell})
	if cellIDMeta(res) != plotCell || m["images"] != float64(1) || !strings.Contains(text, "display(Image(") {
		t.Errorf("read_cell = %q %v", text, m)
	}
	if cell, _ := m["cell"].(map[string]any); cell["id"] != plotCell || cell["type"] != "code" {
		t.Errorf("read_cell cell = %v", m["cell"])
	}
	// result holds the whole answer as the text does: the cell's header,
	// its source, then its outputs; outputs and count hold outputs only.
	if r, _ := m["result"].([]any); len(r) != 4 || !strings.Contains(fmt.Sprint(r[1]), "display(Image(") {
		t.Errorf("read_cell result = %v", m["result"])
	}
	if o, _ := m["outputs"].([]any); len(o) != 2 || m["count"] != float64(2) {
		t.Errorf("read_cell outputs = %v count %v", m["outputs"], m["count"])
	}
	_, m, _ = ok(t, cs, "read_cell", map[string]any{"cell_index": 0})
	if m["count"] != float64(0) {
		t.Errorf("markdown read_cell outputs = %v", m)
	}

	text, _, res = ok(t, cs, "move_cell", map[string]any{"source_cell_id": inserted, "target_index": 0})
	if cellIDMeta(res) != inserted || !strings.Contains(text, "to 0") {
		t.Errorf("move_cell: %q", text)
	}
	text, _, res = ok(t, cs, "clear_cell_output", map[string]any{"cell_id": "cell-1"})
	if cellIDMeta(res) != "cell-1" || !strings.Contains(text, "cleared") {
		t.Errorf("clear_cell_output: %q", text)
	}
	text, _, res = ok(t, cs, "delete_cell", map[string]any{"cell_ids_to_delete": []string{longCell}})
	if cellIDMeta(res) != longCell || !strings.Contains(text, "print('a' * 5000)") {
		t.Errorf("delete_cell: %q %v", text, res.Meta)
	}

	// The file holds what the tools did.
	var saved struct {
		Cells []struct {
			ID      string `json:"id"`
			Outputs []any  `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(h.file(path), &saved); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range saved.Cells {
		ids = append(ids, c.ID)
	}
	if want := []string{inserted, "cell-0", "cell-1", "cell-2", plotCell}; strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("saved cell ids = %v, want %v", ids, want)
	}
	if len(saved.Cells[2].Outputs) != 0 {
		t.Errorf("cleared cell still has outputs in the file")
	}

	text, _, _ = ok(t, cs, "restart_notebook", map[string]any{"notebook_name": "flow"})
	if !strings.Contains(text, "restarted") {
		t.Errorf("restart_notebook: %q", text)
	}
	ok(t, cs, "unuse_notebook", map[string]any{"notebook_name": "flow"})
	_, m, _ = ok(t, cs, "list_notebooks", nil)
	if _, has := m["items"]; has {
		t.Errorf("list_notebooks after unuse = %v", m)
	}
}

func TestExecutionTimeoutKeepsRunning(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("slow.ipynb", "import time\nprint('start', flush=True)\ntime.sleep(3)\nprint('done')")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "slow", "notebook_path": path})
	text, m, _ := ok(t, cs, "execute_cell", map[string]any{"cell_index": 0, "timeout": 1})
	if !strings.Contains(text, "still running") || !strings.Contains(text, "read_cell") {
		t.Errorf("timeout result does not say the execution keeps running: %q", text)
	}
	if outs, _ := m["outputs"].([]any); len(outs) != 1 || outs[0] != "start\n" || m["count"] != float64(1) {
		t.Errorf("timeout result: outputs %v count %v, want the one output so far (the note is not one)", m["outputs"], m["count"])
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		text, _, _ = ok(t, cs, "read_cell", map[string]any{"cell_index": 0})
		if strings.Contains(text, "done") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("read_cell never showed the rest of the output: %q", text)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// Every bad call is an error the agent can read, and leaves the notebook
// file byte-identical.
func TestBadInputLeavesTheFileUntouched(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("bad.ipynb", "a = 1\na = 1", "b = 2")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "bad", "notebook_path": path})
	before := h.file(path)

	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"overwrite_cell_source", map[string]any{"cell_index": 9, "cell_source": "x"}, "9"},
		{"read_cell", map[string]any{"cell_index": 5}, "5"},
		{"edit_cell_source", map[string]any{"cell_id": "no-such-id", "old_string": "a", "new_string": "b"}, "no-such-id"},
		{"insert_cell", map[string]any{"cell_index": 0, "cell_type": "code", "cell_source": "x", "notebook_name": "ghost"}, "ghost"},
		{"edit_cell_source", map[string]any{"cell_index": 0, "old_string": "a = 1", "new_string": "a = 2"}, "replace_all"},
		{"edit_cell_source", map[string]any{"cell_index": 0, "old_string": "zzz", "new_string": "a = 2"}, "old_string"},
		{"insert_cell", map[string]any{"cell_index": 0, "cell_type": "sql", "cell_source": "x"}, "code|markdown|raw"},
		{"insert_cell", map[string]any{"cell_index": 0, "cell_type": "code"}, "cell_source"},
		{"insert_cell", map[string]any{"cell_index": -2, "cell_type": "code", "cell_source": "x"}, ">= -1"},
		{"insert_cell", map[string]any{"cell_index": 7, "cell_type": "code", "cell_source": "x"}, "7"},
		{"delete_cell", map[string]any{"cell_ids_to_delete": []string{"cell-0", "nope"}}, "nope"},
		{"delete_cell", map[string]any{"cell_indices": []int{0, 8}}, "8"},
		{"move_cell", map[string]any{"source_index": 0, "target_index": 4}, "4"},
		{"clear_cell_output", map[string]any{"cell_index": 3}, "3"},
		{"clear_cell_output", map[string]any{}, "cell_index"},
		{"read_notebook", map[string]any{"notebook_name": "bad", "response_format": "full"}, "brief|detailed"},
		{"list_files", map[string]any{"max_depth": 4}, "0..3"},
		{"execute_cell", map[string]any{"cell_id": "missing"}, "missing"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			fails(t, cs, c.tool, c.args, c.want)
			if after := h.file(path); !bytes.Equal(before, after) {
				t.Fatalf("%s(%v) changed the notebook file", c.tool, c.args)
			}
		})
	}
	fails(t, cs, "read_notebook", map[string]any{"notebook_name": "ghost"}, "ghost")
	fails(t, cs, "use_notebook", map[string]any{"notebook_name": "x", "notebook_path": h.dir + "/missing.ipynb"}, "missing.ipynb")
}

func TestResourcesAndPrompt(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	ctx := context.Background()
	path := h.writeNotebook("res.ipynb", "#md # Notes", "print('out')", "v = 3")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "res", "notebook_path": path})
	ok(t, cs, "execute_cell", map[string]any{"cell_id": "cell-1"})

	// capabilities://, and the notebooks in use once the list has caught up
	// with use_notebook (TestNotebookResourcesListed).
	list, err := cs.ListResources(ctx, nil)
	if err != nil || len(list.Resources) == 0 || list.Resources[0].URI != "capabilities://" {
		t.Fatalf("resources = %v, %v", list, err)
	}
	for _, r := range list.Resources[1:] {
		if r.URI != "notebook://res" {
			t.Errorf("resource %s listed, with only notebook res in use", r.URI)
		}
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 3 {
		t.Fatalf("templates = %v, %v", templates, err)
	}
	caps, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "capabilities://"})
	if err != nil || !json.Valid([]byte(caps.Contents[0].Text)) || !strings.Contains(caps.Contents[0].Text, `"capabilities"`) {
		t.Fatalf("capabilities:// = %v, %v", caps, err)
	}

	nb, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "notebook://res"})
	if err != nil || nb.Contents[0].MIMEType != ipynbMIME || !strings.Contains(nb.Contents[0].Text, `"nbformat"`) {
		t.Fatalf("notebook://res = %v, %v", nb, err)
	}
	cell, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "notebook://res/cells/cell-1"})
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal([]byte(cell.Contents[0].Text), &c); err != nil {
		t.Fatal(err)
	}
	outs, _ := c["outputs"].([]any)
	if len(outs) != 1 || outs[0].(map[string]any)["uri"] != "notebook://res/cells/cell-1/outputs/0" || c["source"] != "print('out')" {
		t.Errorf("cell resource = %v", c)
	}
	out, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "notebook://res/cells/cell-1/outputs/0"})
	if err != nil || out.Contents[0].Text != "out\n" || out.Contents[0].MIMEType != "text/plain" {
		t.Errorf("output resource = %v, %v", out, err)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "notebook://res/cells/nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown cell resource: %v", err)
	}

	prompt, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "jupyter_cite", Arguments: map[string]string{"prompt": "explain", "cell_indices": "1-"}})
	if err != nil {
		t.Fatal(err)
	}
	ptext := prompt.Messages[0].Content.(*sdk.TextContent).Text
	if !strings.HasPrefix(ptext, "USER Cite cells [1, 2] from notebook res, here are the cells:") || !strings.Contains(ptext, "v = 3") || !strings.HasSuffix(ptext, "USER's Instruction are follow: explain") {
		t.Errorf("prompt = %q", ptext)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "jupyter_cite", Arguments: map[string]string{"prompt": "x", "cell_indices": "0-9"}}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("out-of-range citation: %v", err)
	}
}

// Two agents on one HTTP server each have their own current notebook.
func TestTwoSessionsOverHTTPKeepTheirOwnNotebook(t *testing.T) {
	h := newHarness(t)
	web := httptest.NewServer(h.s.HTTPHandler())
	t.Cleanup(web.Close) // after the clients close (cleanups run last-in first-out)
	connect := func(name string) *sdk.ClientSession {
		cs, err := testharness.ConnectHTTP(context.Background(), name, web.URL, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := connect("agent-a"), connect("agent-b")
	pa := h.writeNotebook("a.ipynb", "a = 1")
	pb := h.writeNotebook("b.ipynb", "b = 1")
	ok(t, a, "use_notebook", map[string]any{"notebook_name": "na", "notebook_path": pa})
	ok(t, b, "use_notebook", map[string]any{"notebook_name": "nb", "notebook_path": pb})

	// Each inserts without naming a notebook: it lands in its own.
	ok(t, a, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "markdown", "cell_source": "from a"})
	ok(t, b, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "markdown", "cell_source": "from b"})
	if fa, fb := string(h.file(pa)), string(h.file(pb)); !strings.Contains(fa, "from a") || strings.Contains(fa, "from b") || !strings.Contains(fb, "from b") || strings.Contains(fb, "from a") {
		t.Errorf("inserts crossed notebooks:\na: %s\nb: %s", fa, fb)
	}
	current := func(cs *sdk.ClientSession) string {
		_, m, _ := ok(t, cs, "list_notebooks", nil)
		for _, it := range m["items"].([]any) {
			row := it.(map[string]any)
			if row["Activate"] == "✓" {
				return row["Name"].(string)
			}
		}
		return ""
	}
	if ca, cb := current(a), current(b); ca != "na" || cb != "nb" {
		t.Errorf("current notebooks: a=%q b=%q", ca, cb)
	}
}

// A call the person cancels at the workbench answers with a proper error.
func TestCallCancelledByThePerson(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("cancel.ipynb", "x = 1")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "cancel", "notebook_path": path})
	sub := h.e.Bus().Subscribe(256)
	defer sub.Close()
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, _ := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": "import time; time.sleep(20)", "timeout": 30}})
		done <- res
	}()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev := <-sub.C():
			if ev.Type == event.EvCallStarted && ev.Call != nil && ev.Call.Tool == "execute_code" {
				if err := h.e.Calls().Cancel(ev.Call.ID); err != nil {
					t.Fatal(err)
				}
				select {
				case res := <-done:
					if res == nil || !res.IsError || !strings.Contains(textOf(res), "cancelled by the person supervising at the workbench") {
						t.Errorf("cancelled call answered %v", res)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("the cancelled call never answered")
				}
				return
			}
		case <-timeout:
			t.Fatal("no call.started event for execute_code")
		}
	}
}

// A long execution keeps the client informed: progress notifications with
// the elapsed seconds and no total (the end of a run is unknown), whose
// message counts the outputs as the result does and carries their newest
// lines, and log messages as keepalive.
func TestExecutionProgress(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	var progress []*sdk.ProgressNotificationParams
	var logs []string
	cs := h.connectWith(&sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params)
			mu.Unlock()
		},
		//lint:ignore SA1019 the reference streams outputs as log messages; 2025-11-25 hosts still read them
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, fmt.Sprint(req.Params.Data))
			mu.Unlock()
		},
	})
	ctx := context.Background()
	//lint:ignore SA1019 as above: the level is what turns the log stream on
	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	path := h.writeNotebook("progress.ipynb", "x = 1")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "progress", "notebook_path": path})
	params := &sdk.CallToolParams{Name: "insert_execute_code_cell", Arguments: map[string]any{
		"cell_index": -1, "cell_source": "import time\nfor i in range(3):\n    print(i)\n    time.sleep(1)",
		"timeout": 60, "progress_interval": 1,
	}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("insert_execute_code_cell: %v %v", err, res)
	}
	// Notifications may still be in flight when the result arrives.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n, l := len(progress), len(logs)
		mu.Unlock()
		if n >= 1 && l >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d progress notifications and %d log messages, want at least one of each", n, l)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	// The loop's three lines are one stream output, in the notebook as in
	// the result; a report after the first line arrived says so and shows
	// the lines so far, in order.
	withOutput := 0
	for _, p := range progress {
		if p.ProgressToken != "tok-1" || p.Total != 0 || p.Progress <= 0 || !strings.HasPrefix(p.Message, "Execution in progress: ") {
			t.Errorf("progress notification = %+v", p)
		}
		summary, latest, found := strings.Cut(p.Message, ". Latest output:\n")
		if !found {
			if !strings.HasSuffix(summary, "no output yet") {
				t.Errorf("a report without output lines says %q", p.Message)
			}
			continue
		}
		withOutput++
		if !strings.HasSuffix(summary, ", 1 output so far") {
			t.Errorf("the loop's lines are one output, the report says %q", p.Message)
		}
		if want := "0\n1\n2"; !strings.HasPrefix(want, latest) {
			t.Errorf("latest output lines = %q, want the start of %q", latest, want)
		}
	}
	if withOutput == 0 {
		t.Errorf("no progress report carried the output lines: %q", messages(progress))
	}
	if !strings.Contains(logs[0], "Execution in progress") {
		t.Errorf("log message = %q", logs[0])
	}
	if text := testharness.Text(res); !strings.Contains(text, "0\n1\n2") {
		t.Errorf("result = %q", text)
	}
}

func messages(ps []*sdk.ProgressNotificationParams) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Message)
	}
	return out
}
