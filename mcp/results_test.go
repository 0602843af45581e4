package mcp

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// shapingServer is a Server with only what result shaping needs (no engine).
func shapingServer(t *testing.T) *Server {
	t.Helper()
	s := &Server{
		log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		tools:    map[string]*toolDef{},
		resolved: map[string]*jsonschema.Resolved{},
		opts:     Options{Images: true},
	}
	for _, d := range allTools() {
		r, err := d.output.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		s.tools[d.name], s.resolved[d.name] = d, r
	}
	return s
}

func structuredOf(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	var m map[string]any
	raw, ok := res.StructuredContent.(json.RawMessage)
	if !ok {
		t.Fatalf("structuredContent is %T", res.StructuredContent)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStreamAndErrorOutputsAreStrippedOfANSI(t *testing.T) {
	t.Parallel()
	outs := []notebook.Output{
		{OutputType: notebook.Stream, Name: "stdout", Text: "\x1b[31mred\x1b[0m text\n"},
		{OutputType: notebook.Error, EName: "ValueError", EValue: "bad", Traceback: []string{"\x1b[0;31mValueError\x1b[0m", "Traceback line \x1b[1;32m2\x1b[0m"}},
		{OutputType: notebook.Error, EName: "KeyError", EValue: "'x'"},
	}
	a := outputs(outs, outputLoc{}, renderOpts{images: true, maxBytes: 1000}, nil)
	got := a.structured["outputs"].([]any)
	want := []any{"red text\n", "ValueError\nTraceback line 2", "KeyError: 'x'"}
	if len(got) != len(want) {
		t.Fatalf("outputs = %#v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("output %d = %q, want %q", i, got[i], want[i])
		}
	}
	if a.structured["count"] != 3 || a.structured["images"] != 0 {
		t.Errorf("count/images = %v/%v", a.structured["count"], a.structured["images"])
	}
	if len(a.content) != 3 {
		t.Errorf("content has %d blocks, want 3", len(a.content))
	}
}

func TestImagesAreObjectsAndImageContent(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	b64 := base64.StdEncoding.EncodeToString(png)
	data, _ := json.Marshal(b64[:8] + "\n" + b64[8:]) // nbformat may wrap base64
	outs := []notebook.Output{
		{OutputType: notebook.Stream, Name: "stdout", Text: "before"},
		{OutputType: notebook.DisplayData, Data: map[string]json.RawMessage{"image/png": data, "text/plain": json.RawMessage(`"<Figure size 640x480 with 1 Axes>"`)}},
	}
	a := outputs(outs, outputLoc{notebook: "nb", cellID: "c1"}, renderOpts{images: true, maxBytes: 100}, nil)
	list := a.structured["result"].([]any)
	img, ok := list[1].(map[string]any)
	if !ok || img["type"] != "image" || img["mimeType"] != "image/png" || img["data"] != b64 {
		t.Fatalf("image output = %#v", list[1])
	}
	if a.structured["images"] != 1 || a.images != 1 {
		t.Errorf("images = %v", a.structured["images"])
	}
	ic, ok := a.content[1].(*sdk.ImageContent)
	if !ok || string(ic.Data) != string(png) || ic.MIMEType != "image/png" {
		t.Errorf("content[1] = %#v", a.content[1])
	}

	off := outputs(outs, outputLoc{}, renderOpts{images: false, maxBytes: 100}, nil)
	if s, _ := off.structured["result"].([]any)[1].(string); !strings.Contains(s, "Image display disabled") {
		t.Errorf("with images off, got %#v", off.structured["result"])
	}
	if off.images != 0 {
		t.Errorf("images off still counts %d images", off.images)
	}
}

func TestRowsAreBuiltFromTheTable(t *testing.T) {
	t.Parallel()
	tb := table{columns: []string{"ID", "Name"}, rows: [][]string{{"k-1", "Python 3"}, {"k-2", "tab\there"}}}
	a := rows("", tb, "nothing")
	if a.structured["result"] != "ID\tName\nk-1\tPython 3\nk-2\ttab here" {
		t.Errorf("result = %q", a.structured["result"])
	}
	items := a.structured["items"].([]map[string]any)
	if items[1]["Name"] != "tab\there" || items[0]["ID"] != "k-1" || a.structured["count"] != 2 {
		t.Errorf("items = %#v", items)
	}
	empty := rows("", table{columns: []string{"ID"}}, "No kernels found on the Jupyter server.")
	if _, has := empty.structured["columns"]; has || empty.structured["result"] != "No kernels found on the Jupyter server." {
		t.Errorf("empty listing = %#v", empty.structured)
	}
}

// Every shape validates against the output schema of the tools using it,
// and a wrong shape is caught and recorded.
func TestShapesValidateAgainstTheirSchemas(t *testing.T) {
	t.Parallel()
	s := shapingServer(t)
	cases := map[string]*answer{
		"delete_cell":    message("Cell 1 (code) deleted successfully.").withCell("abc"),
		"list_kernels":   rows("", table{columns: []string{"ID"}, rows: [][]string{{"k"}}}, ""),
		"execute_code":   outputs([]notebook.Output{{OutputType: notebook.Stream, Text: "hi"}}, outputLoc{}, renderOpts{images: true, maxBytes: output.DefaultLimit}, nil),
		"launch_sandbox": object(map[string]any{"message": "ok", "sandbox": engine.SandboxInfo{Name: "s", ID: "s-1"}}),
		"list_sandboxes": records([]engine.SandboxInfo{{Name: "a"}, {Name: "b"}}),
	}
	for tool, a := range cases {
		c := &call{}
		res := s.toResult(s.tools[tool], c, a)
		if c.schemaOK == nil || !*c.schemaOK {
			t.Errorf("%s: schema check failed: %s", tool, c.schemaProblem)
		}
		m := structuredOf(t, res)
		if m["kind"] != s.tools[tool].kind {
			t.Errorf("%s: kind = %v", tool, m["kind"])
		}
		if len(res.Content) == 0 {
			t.Errorf("%s: no content", tool)
		}
	}
	if p := s.SchemaProblems(); len(p) != 0 {
		t.Errorf("schema problems: %v", p)
	}

	// A list answer has its records under result, not a string.
	m := structuredOf(t, s.toResult(s.tools["list_sandboxes"], &call{}, cases["list_sandboxes"]))
	if list, ok := m["result"].([]any); !ok || len(list) != 2 {
		t.Errorf("list_sandboxes result = %#v", m["result"])
	}
	// An object answer has its keys at the top level and no result.
	m = structuredOf(t, s.toResult(s.tools["launch_sandbox"], &call{}, cases["launch_sandbox"]))
	if _, has := m["result"]; has || m["sandbox"] == nil {
		t.Errorf("launch_sandbox structured = %#v", m)
	}

	// A rows-shaped tool answering with a non-integer count is a bug the
	// check must catch.
	bad := &answer{content: []sdk.Content{&sdk.TextContent{Text: "x"}}, structured: map[string]any{"count": "many"}}
	c := &call{}
	s.toResult(s.tools["list_files"], c, bad)
	if c.schemaOK == nil || *c.schemaOK || c.schemaProblem == "" {
		t.Errorf("a bad shape passed the schema check")
	}
	if len(s.SchemaProblems()) != 1 {
		t.Errorf("schema problem not recorded")
	}
}

func TestMetaCacheHintsOnlyOnListings(t *testing.T) {
	t.Parallel()
	s := shapingServer(t)
	want := map[string]int{"list_files": 30000, "list_notebooks": 30000, "list_kernels": 10000}
	for name, d := range s.tools {
		res := s.toResult(d, &call{}, message("x").withCell("cid"))
		hint, has := res.Meta[metaCache]
		if ttl, ok := want[name]; ok {
			h, _ := hint.(map[string]any)
			if h["ttlMs"] != ttl || h["cacheScope"] != "private" {
				t.Errorf("%s: cache hint = %#v", name, hint)
			}
		} else if has {
			t.Errorf("%s carries a cache hint", name)
		}
		if res.Meta[metaCellID] != "cid" {
			t.Errorf("%s: cell id missing from _meta", name)
		}
	}
}

func TestErrorResults(t *testing.T) {
	t.Parallel()
	res := errorResult("read_cell", engine.Userf("Cell index 9 is out of range. Notebook has 3 cells."))
	if !res.IsError || res.Content[0].(*sdk.TextContent).Text != "Error executing tool read_cell: Cell index 9 is out of range. Notebook has 3 cells." {
		t.Errorf("user error result = %#v", res.Content[0])
	}
	res = errorResult("read_cell", io.ErrUnexpectedEOF)
	if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, "Server error") {
		t.Errorf("server error result = %q", text)
	}
	leak := errorResult("list_kernels", errTest("GET http://h:8888/api/kernels?token=s3cret&x=1: Authorization: token s3cret2 refused"))
	if text := leak.Content[0].(*sdk.TextContent).Text; strings.Contains(text, "s3cret") {
		t.Errorf("token leaked: %q", text)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestExecutionNotes(t *testing.T) {
	t.Parallel()
	s := shapingServer(t)
	out := []notebook.Output{{OutputType: notebook.Stream, Name: "stdout", Text: "partial\n"}}
	last := func(a *answer) string {
		list := a.structured["result"].([]any)
		return list[len(list)-1].(string)
	}
	running := s.execAnswer(engine.ExecResult{Notebook: "nb", Cell: engine.CellInfo{ID: "c9"}, Outputs: out, StillRunning: true, Timeout: time.Second, Elapsed: 1100 * time.Millisecond})
	if n := last(running); !strings.HasPrefix(n, "[TIMEOUT ERROR: Execution exceeded 1 seconds and is still running on the kernel.") || !strings.Contains(n, "read_cell with cell_id 'c9'") {
		t.Errorf("timeout note = %q", n)
	}
	// The note follows the outputs in result and content, but it is not an
	// output: outputs and count hold the cell's one output.
	if o, _ := running.structured["outputs"].([]any); len(o) != 1 || o[0] != "partial\n" || running.structured["count"] != 1 {
		t.Errorf("timeout answer counts its note as an output: outputs %v count %v", running.structured["outputs"], running.structured["count"])
	}
	if r, _ := running.structured["result"].([]any); len(r) != 2 || len(running.content) != 2 {
		t.Errorf("timeout answer: result %v, %d content entries", running.structured["result"], len(running.content))
	}
	if running.cellID != "c9" || running.notebook != "nb" {
		t.Errorf("timeout answer lost the cell: %+v", running)
	}
	code := s.execAnswer(engine.ExecResult{Outputs: out, StillRunning: true, Timeout: 2 * time.Second})
	if n := last(code); !strings.HasPrefix(n, "[TIMEOUT ERROR: IPython execution exceeded 2 seconds and is still running") || strings.Contains(n, "read_cell") {
		t.Errorf("execute_code timeout note = %q", n)
	}
	restarted := s.execAnswer(engine.ExecResult{Notebook: "nb", Cell: engine.CellInfo{ID: "c1"}, KernelRestarted: true})
	if n := last(restarted); !strings.Contains(n, "state") || !strings.Contains(n, "lost") {
		t.Errorf("restart note = %q", n)
	}
	quiet := s.execAnswer(engine.ExecResult{Notebook: "nb", Cell: engine.CellInfo{ID: "c1"}, Status: "ok"})
	if quiet.structured["count"] != 0 || contentText(quiet.content) != "[No output generated]" {
		t.Errorf("empty execution = %#v / %q", quiet.structured, contentText(quiet.content))
	}
}
