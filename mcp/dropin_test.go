package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// Answers as the reference's own clients read them (issue 25: a client
// written for the reference must work unchanged). interop/reference.mjs runs
// the reference's whole test suite against a built binary; these pin each
// difference that suite found, at the level of one call.

// writeRawNotebook writes a notebook with the given cells (nbformat 4.5
// JSON objects) under the test directory and returns its contents path.
func (h *harness) writeRawNotebook(name string, cells ...map[string]any) string {
	h.t.Helper()
	nb := map[string]any{"cells": cells, "metadata": map[string]any{}, "nbformat": 4, "nbformat_minor": 5}
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

// texts is the text of each content entry, in order.
func texts(res *sdk.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			out = append(out, t.Text)
		}
	}
	return out
}

// read_cell answers the reference's "readable text entries": the header,
// then the source, then each output, as separate entries (its clients read
// the source as the second entry), with the id after what the reference's
// header has.
func TestReadCellAnswersTheReferencesEntries(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeRawNotebook("read.ipynb",
		map[string]any{"cell_type": "markdown", "id": "m1", "metadata": map[string]any{}, "source": "# Title"},
		map[string]any{"cell_type": "code", "id": "c1", "metadata": map[string]any{}, "source": "print('hi')\n1 + 1", "execution_count": 3,
			"outputs": []any{
				map[string]any{"output_type": "stream", "name": "stdout", "text": "hi\n"},
				map[string]any{"output_type": "execute_result", "execution_count": 3, "data": map[string]any{"text/plain": "2"}, "metadata": map[string]any{}},
			}})
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "read", "notebook_path": path})

	_, m, res := ok(t, cs, "read_cell", map[string]any{"cell_index": 1})
	header := "=====Cell 1 | type: code | execution count: 3 | id: c1====="
	want := []any{header, "print('hi')\n1 + 1", "hi\n", "2"}
	if !reflect.DeepEqual(m["result"], want) {
		t.Errorf("result = %q, want %q", m["result"], want)
	}
	if got := texts(res); !reflect.DeepEqual(got, []string{header, "print('hi')\n1 + 1", "hi\n", "2"}) {
		t.Errorf("content = %q", got)
	}
	if !reflect.DeepEqual(m["outputs"], []any{"hi\n", "2"}) || m["count"] != float64(2) {
		t.Errorf("outputs = %q count %v, want the cell's two outputs", m["outputs"], m["count"])
	}

	// Without outputs, and for a markdown cell: the header and the source.
	_, m, _ = ok(t, cs, "read_cell", map[string]any{"cell_index": 1, "include_outputs": false})
	if !reflect.DeepEqual(m["result"], []any{header, "print('hi')\n1 + 1"}) || m["count"] != float64(0) {
		t.Errorf("without outputs: result %q count %v", m["result"], m["count"])
	}
	_, m, _ = ok(t, cs, "read_cell", map[string]any{"cell_index": 0})
	if !reflect.DeepEqual(m["result"], []any{"=====Cell 0 | type: markdown | execution count: N/A | id: m1=====", "# Title"}) {
		t.Errorf("markdown: result %q", m["result"])
	}
}

// edit_cell_source with old_string == new_string is the reference's no-op:
// checked as any edit (the text is there, once unless replace_all), then
// nothing changes and nothing is saved.
func TestEditWithTheSameTextIsANoOp(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("same.ipynb", "unchanged = True", "a = 1\na = 2")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "same", "notebook_path": path})
	before := h.file(path)

	text, _, res := ok(t, cs, "edit_cell_source", map[string]any{"cell_index": 0, "old_string": "unchanged = True", "new_string": "unchanged = True"})
	if text != "Cell 0 edited successfully - no changes detected" || cellIDMeta(res) != "cell-0" {
		t.Errorf("edit to the same text: %q %v", text, res.Meta)
	}
	if after := h.file(path); string(after) != string(before) {
		t.Errorf("a no-op edit rewrote the file:\n%s", after)
	}
	ok(t, cs, "edit_cell_source", map[string]any{"cell_index": 1, "old_string": "a = ", "new_string": "a = ", "replace_all": true})
	fails(t, cs, "edit_cell_source", map[string]any{"cell_index": 1, "old_string": "a = ", "new_string": "a = "}, "occurs 2 times")
	fails(t, cs, "edit_cell_source", map[string]any{"cell_index": 0, "old_string": "absent", "new_string": "absent"}, "not found")
}

// notebookKernel is the kernel list_notebooks shows for a notebook.
func notebookKernel(t *testing.T, cs *sdk.ClientSession, name string) string {
	t.Helper()
	_, m, _ := ok(t, cs, "list_notebooks", nil)
	items, _ := m["items"].([]any)
	for _, it := range items {
		if row, _ := it.(map[string]any); row["Name"] == name {
			id, _ := row["Kernel_ID"].(string)
			return id
		}
	}
	t.Fatalf("list_notebooks has no %q: %v", name, m)
	return ""
}

// restart_notebook on a kernel removed from outside starts a new one and
// says so with its id, in the reference's words ("reprovisioned"); a live
// kernel restarts in place.
func TestRestartAfterTheKernelWasRemovedNamesTheNewOne(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("gone.ipynb", "x = 1")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "gone", "notebook_path": path})
	live := notebookKernel(t, cs, "gone")
	text, _, _ := ok(t, cs, "restart_notebook", map[string]any{"notebook_name": "gone"})
	if !strings.Contains(text, "kernel restarted successfully") || notebookKernel(t, cs, "gone") != live {
		t.Errorf("restart of a live kernel: %q", text)
	}

	// A second name of the notebook follows it to the new kernel.
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "gone2", "notebook_path": path})
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "gone", "notebook_path": path})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.srv.Client().ShutdownKernel(ctx, live); err != nil {
		t.Fatal(err)
	}
	text, _, _ = ok(t, cs, "restart_notebook", map[string]any{"notebook_name": "gone"})
	now := notebookKernel(t, cs, "gone")
	if now == live || now == "" {
		t.Fatalf("the notebook is still on kernel %s", now)
	}
	if also := notebookKernel(t, cs, "gone2"); also != now {
		t.Errorf("its second name is on kernel %s, not the new %s", also, now)
	}
	if !strings.Contains(text, "reprovisioned") || !strings.Contains(text, "new kernel '"+now+"'") || !strings.Contains(text, live) {
		t.Errorf("restart after the kernel was removed: %q (new kernel %s, old %s)", text, now, live)
	}
	_, m, _ := ok(t, cs, "execute_code", map[string]any{"code": "print('on the new one')"})
	if outs, _ := m["outputs"].([]any); len(outs) != 1 || outs[0] != "on the new one\n" {
		t.Errorf("after the restart: %v", m["outputs"])
	}
}

// A path already in use opens under a second name, as in the reference: the
// two names are one notebook (an edit through one is read through the
// other, on the same kernel), use_notebook says "Reactivating" when it makes
// a name in use current again, and each name is released on its own.
func TestASecondNameForAPathInUse(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("shared.ipynb", "#md # Shared")
	other := h.writeNotebook("other.ipynb", "#md # Other")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "default", "notebook_path": path})
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "a", "notebook_path": other})

	text, _, _ := ok(t, cs, "use_notebook", map[string]any{"notebook_name": "b", "notebook_path": path})
	if !strings.Contains(text, "Successfully activate notebook 'b'") || !strings.Contains(text, "also in use as 'default'") {
		t.Errorf("second name: %q", text)
	}
	if notebookKernel(t, cs, "b") != notebookKernel(t, cs, "default") {
		t.Errorf("the two names of one notebook are on two kernels")
	}
	ok(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "print('via b')"})
	_, m, _ := ok(t, cs, "read_cell", map[string]any{"cell_index": 1, "notebook_name": "default"})
	if r, _ := m["result"].([]any); len(r) < 2 || r[1] != "print('via b')" {
		t.Errorf("an insert through 'b' read through 'default': %v", m["result"])
	}
	_, m, _ = ok(t, cs, "list_notebooks", nil)
	current := map[string]string{}
	for _, it := range m["items"].([]any) {
		row := it.(map[string]any)
		current[row["Name"].(string)] = row["Activate"].(string)
	}
	if len(current) != 3 || current["b"] != "✓" || current["default"] != "" || current["a"] != "" {
		t.Errorf("list_notebooks: %v", current)
	}

	text, _, _ = ok(t, cs, "use_notebook", map[string]any{"notebook_name": "a", "notebook_path": other})
	if !strings.Contains(text, "[INFO] Reactivating notebook 'a' and deactivating 'b'.") {
		t.Errorf("reactivating: %q", text)
	}
	fails(t, cs, "use_notebook", map[string]any{"notebook_name": "c", "notebook_path": path, "mode": "create"}, "already exists")

	// Releasing one name leaves the notebook, and its kernel, to the other.
	kernel := notebookKernel(t, cs, "default")
	text, _, _ = ok(t, cs, "unuse_notebook", map[string]any{"notebook_name": "default"})
	if !strings.Contains(text, "Notebook 'default' unused successfully") || !strings.Contains(text, "still in use as 'b'") {
		t.Errorf("unuse of one name: %q", text)
	}
	if notebookKernel(t, cs, "b") != kernel {
		t.Errorf("releasing 'default' changed the kernel of 'b'")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.srv.Client().GetKernel(ctx, kernel); err != nil {
		t.Errorf("the kernel of 'b' after 'default' went: %v", err)
	}
	text, _, _ = ok(t, cs, "unuse_notebook", map[string]any{"notebook_name": "b"})
	if !strings.Contains(text, "shut down") {
		t.Errorf("unuse of the last name: %q", text)
	}
}

// A notebook use_notebook creates starts, as the reference's does, with
// one markdown cell (when main configures the engine so): its clients read
// cell 0 and insert at 1.
func TestACreatedNotebookStartsAsTheReferences(t *testing.T) {
	h := newHarnessWith(t, func(c *engine.Config) { c.CreatedHeading = CreatedNotebookHeading })
	cs := h.connect()
	srv := h.srv
	path := h.dir + "/made.ipynb"
	text, _, _ := ok(t, cs, "use_notebook", map[string]any{"notebook_name": "made", "notebook_path": path, "mode": "create"})
	if !strings.Contains(text, "Notebook has 1 cells") {
		t.Errorf("use_notebook create: %q", text)
	}
	_, m, _ := ok(t, cs, "read_cell", map[string]any{"cell_index": 0})
	if r, _ := m["result"].([]any); len(r) != 2 || !strings.Contains(r[0].(string), "type: markdown") || r[1] != CreatedNotebookHeading {
		t.Errorf("cell 0 of a created notebook: %v", m["result"])
	}
	ok(t, cs, "insert_cell", map[string]any{"cell_index": 1, "cell_type": "code", "cell_source": "x = 1"})
	var file struct {
		Cells []struct {
			Type string `json:"cell_type"`
		} `json:"cells"`
	}
	raw, err := os.ReadFile(srv.Path(path))
	if err != nil || json.Unmarshal(raw, &file) != nil || len(file.Cells) != 2 || file.Cells[0].Type != "markdown" {
		t.Errorf("the created file: %s (%v)", raw, err)
	}
}

// list_kernels shows a kernel whose run outlived its call as busy, and idle
// once the run ends, as the reference's orphaned-timeout tests expect: the
// state comes from our own channel to the kernel when we have one.
func TestListKernelsShowsARunThatOutlivedItsCall(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("busy.ipynb", "import time; time.sleep(3)")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "busy", "notebook_path": path})
	kernel := notebookKernel(t, cs, "busy")
	state := func() string {
		_, m, _ := ok(t, cs, "list_kernels", nil)
		for _, it := range m["items"].([]any) {
			if row := it.(map[string]any); row["ID"] == kernel {
				return row["State"].(string)
			}
		}
		return "missing"
	}
	ok(t, cs, "execute_cell", map[string]any{"cell_index": 0, "timeout": 1})
	if s := state(); s != "busy" {
		t.Errorf("right after the call timed out the kernel is %q, want busy", s)
	}
	deadline := time.Now().Add(20 * time.Second)
	for state() != "idle" {
		if time.Now().After(deadline) {
			t.Fatalf("the kernel never went back to idle: %q", state())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The cache fields the SDK puts at the top of results: a notebook's
// contents, a cell, the notebooks in use and capabilities:// are private
// and stale at once; the tool list is the same for everyone.
func TestNotebookContentIsPrivateToCaches(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("cache.ipynb", "x = 1")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "cache", "notebook_path": path})
	ctx := context.Background()
	for _, uri := range []string{"notebook://cache", "notebook://cache/cells/cell-0", "capabilities://"} {
		r, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if r.CacheScope != "private" || r.TTLMs != 0 {
			t.Errorf("%s: cacheScope %q ttlMs %d, want private, 0", uri, r.CacheScope, r.TTLMs)
		}
	}
	rl, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rl.CacheScope != "private" {
		t.Errorf("resources/list: cacheScope %q, want private", rl.CacheScope)
	}
	tl, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tl.CacheScope != "public" || tl.TTLMs != 0 {
		t.Errorf("tools/list: cacheScope %q ttlMs %d", tl.CacheScope, tl.TTLMs)
	}
}

// Every tool carries a top-level title and an icon, which GUI hosts show
// (the annotations' title is kept for older hosts), and so does the server.
func TestToolsHaveTitlesAndIcons(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Title == "" || tool.Annotations == nil || tool.Annotations.Title != tool.Title {
			t.Errorf("%s: title %q, annotations' %v", tool.Name, tool.Title, tool.Annotations)
		}
		if len(tool.Icons) != 1 || tool.Icons[0].MIMEType != "image/svg+xml" || !strings.HasPrefix(tool.Icons[0].Source, "data:image/svg+xml;base64,") {
			t.Errorf("%s: icons %+v", tool.Name, tool.Icons)
			continue
		}
		svg, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(tool.Icons[0].Source, "data:image/svg+xml;base64,"))
		if err != nil || !strings.HasPrefix(string(svg), "<svg xmlns=") {
			t.Errorf("%s: icon %q (%v)", tool.Name, svg, err)
		}
	}
	if info := cs.InitializeResult().ServerInfo; len(info.Icons) != 1 {
		t.Errorf("server icons %+v", info.Icons)
	}
}

// With execution.interrupt-on-timeout (--interrupt-on-timeout), a run that
// outlasts its call's timeout is interrupted, as the reference does: the
// answer ends with the reference's marker, the KeyboardInterrupt is among
// the outputs (text is never dropped), the kernel is free at once, and the
// notebook holds what the run produced.
func TestInterruptOnTimeout(t *testing.T) {
	h := newHarnessWith(t, func(c *engine.Config) {
		c.Capabilities = []engine.Capability{{Name: engine.CapInterruptOnTimeout, Enabled: true, Source: "flag"}}
	})
	cs := h.connect()
	path := h.writeNotebook("slow.ipynb", "import time\nprint('start', flush=True)\ntime.sleep(60)")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "slow", "notebook_path": path})

	start := time.Now()
	_, m, _ := ok(t, cs, "execute_cell", map[string]any{"cell_index": 0, "timeout": 1})
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the interrupted run took %v", took)
	}
	r, _ := m["result"].([]any)
	outs, _ := m["outputs"].([]any)
	if len(r) == 0 || r[len(r)-1] != "[TIMEOUT ERROR: Execution exceeded 1 seconds and was interrupted]" {
		t.Errorf("result %q", r)
	}
	if len(outs) != 2 || outs[0] != "start\n" || !strings.Contains(fmt.Sprint(outs[1]), "KeyboardInterrupt") || m["count"] != float64(2) {
		t.Errorf("outputs %q count %v, want start and the KeyboardInterrupt", outs, m["count"])
	}
	if file := string(h.file(path)); !strings.Contains(file, "KeyboardInterrupt") || !strings.Contains(file, "start") {
		t.Errorf("the notebook does not hold the interrupted run:\n%s", file)
	}

	_, m, _ = ok(t, cs, "execute_code", map[string]any{"code": "import time; time.sleep(60)", "timeout": 1})
	if r, _ := m["result"].([]any); len(r) == 0 || r[len(r)-1] != "[TIMEOUT ERROR: IPython execution exceeded 1 seconds and was interrupted]" {
		t.Errorf("execute_code result %q", r)
	}
	start = time.Now()
	_, m, _ = ok(t, cs, "execute_code", map[string]any{"code": "print('next')", "timeout": 30})
	if outs, _ := m["outputs"].([]any); len(outs) != 1 || outs[0] != "next\n" || time.Since(start) > 10*time.Second {
		t.Errorf("after the interrupt: %q in %v", m["outputs"], time.Since(start))
	}
	if !strings.Contains(instructions, timeoutInstruction) || !strings.Contains(cs.InitializeResult().Instructions, interruptInstruction) {
		t.Errorf("the instructions do not say a timeout interrupts the run: %q", cs.InitializeResult().Instructions)
	}
	rr, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "capabilities://"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, engine.CapInterruptOnTimeout) {
		t.Errorf("capabilities:// does not list %s: %v", engine.CapInterruptOnTimeout, err)
	}
}

// delete_cell answers in the reference's words (its clients look for
// "deleted cell source:" followed by the source), with the id added.
func TestDeleteAnswersTheReferencesWords(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("del.ipynb", "x = 1\ny = 2", "#md Hello **World** !")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "del", "notebook_path": path})
	text, _, _ := ok(t, cs, "delete_cell", map[string]any{"cell_indices": []int{1}})
	want := "Cell 1 (markdown) deleted successfully (its id was cell-1).\ndeleted cell source:\nHello **World** !"
	if text != want {
		t.Errorf("delete_cell: %q, want %q", text, want)
	}
	text, _, _ = ok(t, cs, "delete_cell", map[string]any{"cell_indices": []int{0}, "include_source": false})
	if text != "Cell 0 (code) deleted successfully (its id was cell-0)." {
		t.Errorf("delete_cell without source: %q", text)
	}
}

// A negative index is refused as out of range, the reference's words,
// whether the schema or the engine refuses it.
func TestANegativeIndexIsOutOfRange(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("neg.ipynb", "1")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "neg", "notebook_path": path})
	text := fails(t, cs, "clear_cell_output", map[string]any{"cell_index": -1}, "cell_index -1 is out of range: the least it takes is 0")
	if !strings.HasPrefix(text, "Error executing tool clear_cell_output: invalid arguments: ") {
		t.Errorf("%q", text)
	}
	fails(t, cs, "delete_cell", map[string]any{"cell_indices": []int{-1}}, "out of range")
}
