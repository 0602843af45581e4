package mcp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The contract as the spec writes it: every tool's kind and shape (spec 000,
// "Kinds") and annotations (spec 001: destructive, idempotent, read-only,
// open-world).
var specTools = map[string]struct {
	kind        string
	shape       shape
	annotations string // the spec's tags, in its order
}{
	"clear_cell_output":        {"cell.clear_output", shapeMessage, "destructive idempotent"},
	"connect_to_jupyter":       {"jupyter.connect", shapeMessage, "destructive idempotent"},
	"delete_cell":              {"cell.delete", shapeMessage, "destructive"},
	"edit_cell_source":         {"cell.edit", shapeMessage, "destructive"},
	"execute_cell":             {"cell.execute", shapeOutputs, "destructive open-world"},
	"execute_code":             {"code.execute", shapeOutputs, "destructive open-world"},
	"insert_cell":              {"cell.insert", shapeMessage, "destructive"},
	"insert_execute_code_cell": {"cell.insert_execute", shapeOutputs, "destructive open-world"},
	"launch_sandbox":           {"sandbox.launch", shapeObject, "destructive open-world"},
	"list_files":               {"files.list", shapeRows, "read-only idempotent"},
	"list_kernels":             {"kernels.list", shapeRows, "read-only idempotent"},
	"list_notebooks":           {"notebooks.list", shapeRows, "read-only idempotent"},
	"list_sandboxes":           {"sandboxes.list", shapeList, "read-only idempotent"},
	"move_cell":                {"cell.move", shapeMessage, "destructive"},
	"overwrite_cell_source":    {"cell.overwrite", shapeMessage, "destructive idempotent"},
	"read_cell":                {"cell.read", shapeOutputs, "read-only idempotent"},
	"read_notebook":            {"notebook.read", shapeMessage, "read-only idempotent"},
	"restart_notebook":         {"notebook.restart", shapeMessage, "destructive"},
	"terminate_sandbox":        {"sandbox.terminate", shapeMessage, "destructive idempotent"},
	"unuse_notebook":           {"notebook.unuse", shapeMessage, "destructive idempotent"},
	"use_notebook":             {"notebook.use", shapeMessage, "destructive idempotent"},
	"use_sandbox":              {"sandbox.use", shapeMessage, "destructive idempotent"},
}

func annotationTags(d *toolDef) string { return strings.Join(annotationLabels(d), " ") }

func TestToolTableMatchesTheSpec(t *testing.T) {
	t.Parallel()
	tools := allTools()
	if len(tools) != 22 {
		t.Fatalf("%d tools, want 22", len(tools))
	}
	for _, d := range tools {
		want, ok := specTools[d.name]
		if !ok {
			t.Errorf("tool %s is not in the spec", d.name)
			continue
		}
		if d.kind != want.kind || d.shape != want.shape {
			t.Errorf("%s: kind/shape = %s/%s, want %s/%s", d.name, d.kind, d.shape, want.kind, want.shape)
		}
		if got := annotationTags(d); got != want.annotations {
			t.Errorf("%s: annotations %q, want %q", d.name, got, want.annotations)
		}
		// Every hint is on the wire, false ones included.
		raw, err := json.Marshal(d.sdkTool().Annotations)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if !bytes.Contains(raw, []byte(`"`+key+`"`)) {
				t.Errorf("%s: %s not set explicitly: %s", d.name, key, raw)
			}
		}
		if d.description == "" || d.title == "" {
			t.Errorf("%s: no description or title", d.name)
		}
		if d.output == nil || d.input == nil || d.input.Type != "object" {
			t.Errorf("%s: missing schemas", d.name)
		}
		if d.output.AdditionalProperties == nil {
			t.Errorf("%s: output schema must allow extra keys", d.name)
		}
	}
}

// What the reference declares for a few arguments, checked against the
// schemas as sent.
func TestInputSchemasCarryDefaultsEnumsAndBounds(t *testing.T) {
	t.Parallel()
	byName := map[string]map[string]any{}
	for _, d := range allTools() {
		raw, _ := json.Marshal(d.input)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		byName[d.name] = m
	}
	prop := func(tool, name string) map[string]any {
		p, _ := byName[tool]["properties"].(map[string]any)[name].(map[string]any)
		if p == nil {
			t.Fatalf("%s has no argument %s", tool, name)
		}
		return p
	}
	required := func(tool string) []string {
		var out []string
		for _, r := range byName[tool]["required"].([]any) {
			out = append(out, r.(string))
		}
		sort.Strings(out)
		return out
	}
	check := func(what string, got, want any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Errorf("%s = %s, want %s", what, g, w)
		}
	}
	check("read_cell.cell_index.type", prop("read_cell", "cell_index")["type"], []string{"integer", "null"})
	check("read_cell.cell_index.default", prop("read_cell", "cell_index")["default"], nil)
	check("read_cell.include_outputs.default", prop("read_cell", "include_outputs")["default"], true)
	check("insert_cell.cell_index.minimum", prop("insert_cell", "cell_index")["minimum"], -1)
	check("insert_cell.cell_type.enum", prop("insert_cell", "cell_type")["enum"], []string{"code", "markdown", "raw"})
	check("insert_cell required", required("insert_cell"), []string{"cell_index", "cell_source", "cell_type"})
	check("list_files.max_depth", []any{prop("list_files", "max_depth")["minimum"], prop("list_files", "max_depth")["maximum"], prop("list_files", "max_depth")["default"]}, []any{0, 3, 1})
	check("list_files.limit.default", prop("list_files", "limit")["default"], 25)
	check("read_notebook.response_format.enum", prop("read_notebook", "response_format")["enum"], []string{"brief", "detailed"})
	check("read_notebook.limit", []any{prop("read_notebook", "limit")["minimum"], prop("read_notebook", "limit")["default"]}, []any{0, 20})
	check("execute_code.timeout.default", prop("execute_code", "timeout")["default"], 30)
	check("execute_cell.timeout.default", prop("execute_cell", "timeout")["default"], 0)
	check("execute_cell.stream.default", prop("execute_cell", "stream")["default"], true)
	check("use_notebook.mode", []any{prop("use_notebook", "mode")["enum"], prop("use_notebook", "mode")["default"]}, []any{[]string{"connect", "create"}, "connect"})
	check("delete_cell.cell_indices.minItems", prop("delete_cell", "cell_indices")["minItems"], 1)
	check("launch_sandbox.timeout", []any{prop("launch_sandbox", "timeout")["minimum"], prop("launch_sandbox", "timeout")["default"]}, []any{1, 60})
	check("launch_sandbox.environment_version.type", prop("launch_sandbox", "environment_version")["type"], []string{"string", "integer", "null"})
	check("connect_to_jupyter.document_provider.default", prop("connect_to_jupyter", "document_provider")["default"], "jupyter")
	if !strings.Contains(prop("clear_cell_output", "cell_id")["description"].(string), "Given both, the id wins.") {
		t.Errorf("shared cell_id description missing")
	}
}

// toolSnapshot is what a client sees of a tool in tools/list.
func toolSnapshot(t *testing.T, d *toolDef) []byte {
	t.Helper()
	raw, err := json.MarshalIndent(d.sdkTool(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(raw, '\n')
}

// TestToolSnapshots fails when a tool definition drifts from its snapshot
// under testdata/toolsnaps. Regenerate with
// UPDATE_TOOLSNAPS=1 go test ./mcp -run TestToolSnapshots.
func TestToolSnapshots(t *testing.T) {
	dir := filepath.Join("testdata", "toolsnaps")
	update := os.Getenv("UPDATE_TOOLSNAPS") == "1"
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, d := range allTools() {
		path := filepath.Join(dir, d.name+".snap")
		seen[d.name+".snap"] = true
		got := toolSnapshot(t, d)
		if update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no snapshot (%v); run UPDATE_TOOLSNAPS=1 go test ./mcp -run TestToolSnapshots", d.name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: tool definition drifted from %s; if intended, run UPDATE_TOOLSNAPS=1 go test ./mcp -run TestToolSnapshots\n%s", d.name, path, firstDiff(string(want), string(got)))
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".snap") && !seen[e.Name()] {
			if update {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			} else {
				t.Errorf("stale snapshot %s for a tool that no longer exists", e.Name())
			}
		}
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  snapshot: " + wl + "\n  now:      " + gl
		}
	}
	return ""
}

func TestUsageSaysWhatIsAllowed(t *testing.T) {
	t.Parallel()
	var insert *toolDef
	for _, d := range allTools() {
		if d.name == "insert_cell" {
			insert = d
		}
	}
	u := usage(insert.input)
	for _, want := range []string{"cell_index (integer, >= -1, required)", "cell_type (string, one of code|markdown|raw, required)", "notebook_name (string | null, default null)"} {
		if !strings.Contains(u, want) {
			t.Errorf("usage %q lacks %q", u, want)
		}
	}
}

// The README's tool reference is generated from the table; it must be there
// and not be stale. Regenerate with make toolref.
func TestREADMEToolReference(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	out, ok := SpliceToolReference(string(data))
	if !ok {
		t.Fatalf("README.md has lost its %s ... %s markers: put them back where the tool reference goes and run make toolref", ToolRefStart, ToolRefEnd)
	}
	if out != string(data) {
		t.Errorf("README.md tool reference is stale; run make toolref")
	}
}

func TestSpliceToolReferenceKeepsTheRest(t *testing.T) {
	t.Parallel()
	in := "# Title\n\nintro\n" + ToolRefStart + "\nOLD-SECTION\n" + ToolRefEnd + "\n\n## After\n"
	out, ok := SpliceToolReference(in)
	if !ok || !strings.HasPrefix(out, "# Title\n\nintro\n"+ToolRefStart+"\n22 tools.") || !strings.HasSuffix(out, ToolRefEnd+"\n\n## After\n") || strings.Contains(out, "OLD-SECTION") {
		t.Errorf("splice = %q", out[:80])
	}
	again, _ := SpliceToolReference(out)
	if again != out {
		t.Errorf("splicing twice changes the README")
	}
	if !strings.Contains(out, "### execute_code") || !strings.Contains(out, "| `timeout` | integer 0..86400 | no | `30` |") {
		t.Errorf("reference lacks execute_code's timeout row")
	}
}
