package mcp

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	testharness "github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// argLike finds what reads as an argument name in a text: snake_case words
// and words in backticks.
var (
	snakeWord   = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)
	backticked  = regexp.MustCompile("`([^`]+)`")
	quotedValue = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// foreignNames lists the argument-like names in text that are neither an
// argument of tool nor a tool name. Double-quoted parts are values the
// caller gave (a path, a cell's source) and are skipped.
func foreignNames(tool, text string) []string {
	tools := toolArgs()
	text = quotedValue.ReplaceAllString(text, `""`)
	var words []string
	words = append(words, snakeWord.FindAllString(text, -1)...)
	for _, m := range backticked.FindAllStringSubmatch(text, -1) {
		words = append(words, m[1])
	}
	var bad []string
	for _, w := range words {
		if _, isTool := tools[w]; isTool || takes(tool, w) {
			continue
		}
		if !slices.Contains(bad, w) {
			bad = append(bad, w)
		}
	}
	return bad
}

// TestForeignNamesFinds: the check itself catches a wrong name.
func TestForeignNamesFinds(t *testing.T) {
	t.Parallel()
	if got := foreignNames("execute_cell", "notebook_name is required"); !slices.Equal(got, []string{"notebook_name"}) {
		t.Errorf("notebook_name for execute_cell: %v", got)
	}
	if got := foreignNames("execute_cell", "pass `notebook` or cell_id; call use_notebook"); !slices.Equal(got, []string{"notebook"}) {
		t.Errorf("backticks: %v", got)
	}
	if got := foreignNames("read_cell", `no cell with id "my_cell"; pass cell_id or notebook_name`); len(got) != 0 {
		t.Errorf("quoted values and real arguments: %v", got)
	}
}

// TestEveryRefusalNamesOnlyWhatTheToolTakes drives every tool into each
// refusal it can reach here (a real Jupyter behind it) and checks that each
// argument name in the text is one the tool takes, or a tool's name: an
// agent told to pass an argument the tool does not have loops.
func TestEveryRefusalNamesOnlyWhatTheToolTakes(t *testing.T) {
	h := newHarness(t)
	// bare opens before any notebook is activated, so it has no current
	// notebook; cs works on nb.
	bare := h.connect()
	cs := h.connect()
	p := h.writeNotebook("nb.ipynb", "a = 1 + 1", "#md Title")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "nb", "notebook_path": p})
	other := h.writeNotebook("other.ipynb", "b = 2")
	missingDir := h.dir + "/nowhere/x.ipynb"
	badPort, err := testharness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://127.0.0.1:" + strconv.Itoa(badPort) + "/"

	type refusal struct {
		cs   *sdk.ClientSession
		tool string
		args map[string]any
	}
	on := func(tool string, args map[string]any) refusal { return refusal{cs, tool, args} }
	noCurrent := func(tool string, args map[string]any) refusal { return refusal{bare, tool, args} }
	refusals := []refusal{
		// Notebooks.
		on("use_notebook", map[string]any{}),
		on("use_notebook", map[string]any{"notebook_name": "", "notebook_path": p}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": ""}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": "/"}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": "/etc/passwd.ipynb"}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": "../up.ipynb"}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": h.dir + "/missing.ipynb"}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": p, "mode": "create"}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": h.dir + "/a.txt", "mode": "create"}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": missingDir, "mode": "create"}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": p, "mode": "open"}),
		on("use_notebook", map[string]any{"notebook_name": "nb", "notebook_path": other}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": p, "kernel_id": "other-kernel"}),
		on("use_notebook", map[string]any{"notebook_name": "nb", "notebook_path": p, "kernel_id": "00000000-0000-0000-0000-000000000000"}),
		on("use_notebook", map[string]any{"notebook_name": "x", "notebook_path": other, "kernel_id": "00000000-0000-0000-0000-000000000000"}),
		on("use_notebook", map[string]any{"notebook_name": "x\x1b[31m", "notebook_path": other}),
		on("unuse_notebook", map[string]any{"notebook_name": "ghost"}),
		on("unuse_notebook", map[string]any{}),
		on("read_notebook", map[string]any{"notebook_name": "ghost"}),
		on("read_notebook", map[string]any{"notebook_name": "nb", "start_index": 99}),
		on("read_notebook", map[string]any{"notebook_name": "nb", "limit": -1}),
		on("read_notebook", map[string]any{"notebook_name": "nb", "response_format": "full"}),
		on("restart_notebook", map[string]any{"notebook_name": "ghost"}),

		// Cells.
		noCurrent("read_cell", map[string]any{"cell_index": 0}),
		on("read_cell", map[string]any{"cell_index": 0, "notebook_name": "ghost"}),
		on("read_cell", map[string]any{"cell_index": 9}),
		on("read_cell", map[string]any{"cell_id": "nope"}),
		on("read_cell", map[string]any{}),
		on("read_cell", map[string]any{"cell_index": "first"}),
		noCurrent("insert_cell", map[string]any{"cell_index": 0, "cell_type": "code", "cell_source": "c = 3"}),
		on("insert_cell", map[string]any{"cell_index": 99, "cell_type": "code", "cell_source": "c = 3"}),
		on("insert_cell", map[string]any{"cell_index": 0, "cell_type": "sql", "cell_source": "c = 3"}),
		on("insert_cell", map[string]any{"cell_index": -2, "cell_type": "code", "cell_source": "c = 3"}),
		noCurrent("delete_cell", map[string]any{"cell_indices": []int{0}}),
		on("delete_cell", map[string]any{"cell_indices": []int{9}}),
		on("delete_cell", map[string]any{"cell_ids_to_delete": []string{"nope"}}),
		on("delete_cell", map[string]any{}),
		noCurrent("move_cell", map[string]any{"source_index": 0, "target_index": 1}),
		on("move_cell", map[string]any{}),
		on("move_cell", map[string]any{"source_index": 0}),
		on("move_cell", map[string]any{"source_index": 9, "target_index": 0}),
		on("move_cell", map[string]any{"source_index": 0, "target_index": 9}),
		on("move_cell", map[string]any{"source_cell_id": "nope", "target_index": 0}),
		on("move_cell", map[string]any{"source_index": 0, "target_cell_id": "nope"}),
		noCurrent("edit_cell_source", map[string]any{"cell_index": 0, "old_string": "1", "new_string": "2"}),
		on("edit_cell_source", map[string]any{"cell_index": 0, "old_string": "zzz", "new_string": "y"}),
		on("edit_cell_source", map[string]any{"cell_index": 0, "old_string": "1", "new_string": "2"}),
		on("edit_cell_source", map[string]any{"cell_index": 0, "old_string": "absent", "new_string": "absent"}),
		on("edit_cell_source", map[string]any{"cell_index": 0, "old_string": "", "new_string": "b"}),
		on("edit_cell_source", map[string]any{"cell_id": "nope", "old_string": "a", "new_string": "b"}),
		on("edit_cell_source", map[string]any{"old_string": "a", "new_string": "b"}),
		noCurrent("overwrite_cell_source", map[string]any{"cell_index": 0, "cell_source": "d = 4"}),
		on("overwrite_cell_source", map[string]any{"cell_index": 9, "cell_source": "d = 4"}),
		on("overwrite_cell_source", map[string]any{"cell_id": "nope", "cell_source": "d = 4"}),
		on("overwrite_cell_source", map[string]any{"cell_source": "d = 4"}),
		noCurrent("clear_cell_output", map[string]any{"cell_index": 0}),
		on("clear_cell_output", map[string]any{"cell_index": 9}),
		on("clear_cell_output", map[string]any{"cell_id": "nope"}),
		on("clear_cell_output", map[string]any{}),

		// Execution.
		noCurrent("execute_cell", map[string]any{"cell_index": 0}),
		on("execute_cell", map[string]any{"cell_index": 9}),
		on("execute_cell", map[string]any{"cell_id": "nope"}),
		on("execute_cell", map[string]any{}),
		on("execute_cell", map[string]any{"cell_index": 0, "timeout": -1}),
		noCurrent("insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": "e = 5"}),
		on("insert_execute_code_cell", map[string]any{"cell_index": 99, "cell_source": "e = 5"}),
		on("insert_execute_code_cell", map[string]any{"cell_index": -1}),
		noCurrent("execute_code", map[string]any{"code": "1"}),
		on("execute_code", map[string]any{"code": "1", "kernel_id": "00000000-0000-0000-0000-000000000000"}),
		on("execute_code", map[string]any{}),

		// Files and servers.
		on("list_files", map[string]any{"path": "/etc"}),
		on("list_files", map[string]any{"path": "../.."}),
		on("list_files", map[string]any{"path": h.dir + "/nowhere"}),
		on("list_files", map[string]any{"pattern": "[a"}),
		on("list_files", map[string]any{"max_depth": 9}),
		on("list_files", map[string]any{"path": "a\x00b"}),
		on("connect_to_jupyter", map[string]any{"jupyter_url": ""}),
		on("connect_to_jupyter", map[string]any{"jupyter_url": "not a url"}),
		on("connect_to_jupyter", map[string]any{"jupyter_url": deadURL}),
		on("connect_to_jupyter", map[string]any{"jupyter_url": h.srv.URL, "jupyter_token": "wrong"}),
		on("connect_to_jupyter", map[string]any{"jupyter_url": h.srv.URL, "document_provider": "datalayer"}),

		// Sandboxes.
		on("launch_sandbox", map[string]any{"sandbox_name": ""}),
		on("launch_sandbox", map[string]any{"sandbox_name": "s", "variant": "nosuch"}),
		on("launch_sandbox", map[string]any{"sandbox_name": "s", "variant": "eval", "gpu": "T4"}),
		on("launch_sandbox", map[string]any{"sandbox_name": "s", "variant": "eval", "environment_version": "3"}),
		on("launch_sandbox", map[string]any{"sandbox_name": "s", "variant": "eval", "snapshot_name": "snap"}),
		on("launch_sandbox", map[string]any{"sandbox_name": "s", "variant": "eval", "timeout": 999999}),
		on("launch_sandbox", map[string]any{"sandbox_name": "s\x07", "variant": "eval"}),
		on("use_sandbox", map[string]any{"sandbox_name": "ghost"}),
		on("terminate_sandbox", map[string]any{"sandbox_name": "ghost"}),
	}

	refused := map[string]bool{}
	for i, r := range refusals {
		t.Run(fmt.Sprintf("%02d-%s", i, r.tool), func(t *testing.T) {
			res := callTool(t, r.cs, r.tool, r.args)
			text := textOf(res)
			if !res.IsError {
				t.Fatalf("%s(%v) succeeded, want a refusal: %s", r.tool, r.args, text)
			}
			refused[r.tool] = true
			t.Logf("%s(%v) -> %s", r.tool, r.args, text)
			if bad := foreignNames(r.tool, text); len(bad) > 0 {
				t.Errorf("%s refusal names %s, which %s does not take:\n%s", r.tool, strings.Join(bad, ", "), r.tool, text)
			}
		})
	}
	// Every tool that takes an argument was refused at least once.
	for name, args := range toolArgs() {
		if len(args) > 0 && !refused[name] {
			t.Errorf("no refusal of %s was tried", name)
		}
	}
}
