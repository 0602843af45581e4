package reliability

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// Requests no well-behaved client sends: each gets an answer (an HTTP 4xx or
// a JSON-RPC error), none takes the server down, and a normal call works
// afterwards.
func TestMalformedJSONRPC(t *testing.T) {
	srv := jupytertest.Shared(t)
	ip, _ := startInProcess(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	r := newRPC(t, ip.endpoint(), ip.token)
	r.initialize(t)
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	bodies := []string{
		``,
		`{not json`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_files","arguments":{"path":`,
		`[]`,
		`null`,
		`"a string"`,
		`{"jsonrpc":"2.0"}`,
		`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":{"an":"object"},"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"not an object"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":42}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_files","arguments":"a string"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_files","arguments":[1,2]}}`,
		// Null arguments once made the SDK write defaults into a nil map:
		// a panic that killed the server.
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_files","arguments":null}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_notebook","arguments":null}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"insert_cell","arguments":{"cell_index":"zero","cell_type":"code","cell_source":"x"}}}`,
		`{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":null}}`,
		`{"jsonrpc":"2.0","id":11,"method":"prompts/get","params":{"name":"jupyter_cite","arguments":null}}`,
		`{"jsonrpc":"2.0","id":12,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"list_files","arguments":` + deep + `}}`,
		`[{"jsonrpc":"2.0","id":14,"method":"tools/list"},{"jsonrpc":"2.0","id":15,"method":"tools/list"}]`,
	}
	// Null arguments mean none: list_files then lists the root.
	mayWork := map[string]bool{bodies[14]: true}
	for _, b := range bodies {
		code, body, msgs, err := r.post(ctx, []byte(b), nil)
		if err != nil {
			t.Fatalf("%s: %v (did the server die?)", truncate(b, 80), err)
		}
		if code >= 500 {
			t.Errorf("%s: status %d: %s", truncate(b, 80), code, truncate(body, 300))
			continue
		}
		if code == http.StatusOK || code == http.StatusAccepted {
			// An answer in protocol: an error, or a tool result that says
			// what was wrong.
			for _, m := range msgs {
				if res, _ := m["result"].(map[string]any); res != nil && res["isError"] != true && !mayWork[b] {
					t.Errorf("%s: accepted as if valid: %s", truncate(b, 80), truncate(body, 300))
				}
			}
		}
		t.Logf("%s -> %d %s", truncate(b, 60), code, truncate(strings.TrimSpace(body), 160))
	}

	// The server still serves, this session and a new one.
	code, body, msgs, err := r.post(ctx, []byte(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"list_notebooks","arguments":{}}}`), nil)
	if err != nil || code != http.StatusOK || len(msgs) != 1 || msgs[0]["result"] == nil {
		t.Fatalf("a normal call after the bad ones: %d %v %s", code, err, body)
	}
	cs := ip.connect(t)
	ok(t, cs, "list_files", nil)
}

// Bad arguments through a real client: invalid UTF-8, huge and negative
// indices, absurd limits. Each is refused with a clear message or handled;
// a refused edit leaves the file byte-identical.
func TestBadArguments(t *testing.T) {
	srv := jupytertest.Shared(t)
	ip, _ := startInProcess(t, srv)
	sub := srv.Subdir(t)
	path := writeNotebook(t, srv, sub+"/args.ipynb", "a = 1", "b = 2")
	cs := ip.connect(t)
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "args", "notebook_path": path})
	before, _ := os.ReadFile(srv.Path(path))

	const maxInt = 9223372036854775807
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"insert_cell", map[string]any{"cell_index": maxInt, "cell_type": "code", "cell_source": "x"}},
		{"insert_cell", map[string]any{"cell_index": 1e300, "cell_type": "code", "cell_source": "x"}},
		{"insert_cell", map[string]any{"cell_index": -2, "cell_type": "code", "cell_source": "x"}},
		{"insert_cell", map[string]any{"cell_index": -maxInt - 1, "cell_type": "code", "cell_source": "x"}},
		{"insert_cell", map[string]any{"cell_index": 1.5, "cell_type": "code", "cell_source": "x"}},
		{"read_cell", map[string]any{"cell_index": maxInt}},
		{"read_cell", map[string]any{"cell_index": -1}},
		{"overwrite_cell_source", map[string]any{"cell_index": maxInt, "cell_source": "x"}},
		{"overwrite_cell_source", map[string]any{"cell_index": -5, "cell_source": "x"}},
		{"move_cell", map[string]any{"source_index": 0, "target_index": maxInt}},
		{"move_cell", map[string]any{"source_index": -1, "target_index": 0}},
		{"delete_cell", map[string]any{"cell_indices": []any{0, maxInt}}},
		{"delete_cell", map[string]any{"cell_indices": []any{-1}}},
		{"delete_cell", map[string]any{"cell_indices": []any{}}},
		{"delete_cell", map[string]any{"cell_indices": []any{1, 1}}},
		{"execute_cell", map[string]any{"cell_index": maxInt}},
		{"insert_execute_code_cell", map[string]any{"cell_index": maxInt, "cell_source": "1"}},
		{"clear_cell_output", map[string]any{"cell_index": maxInt}},
		{"edit_cell_source", map[string]any{"cell_index": 0, "old_string": "", "new_string": "x"}},
		{"read_notebook", map[string]any{"notebook_name": "args", "start_index": -1}},
		{"list_files", map[string]any{"max_depth": maxInt}},
		{"list_files", map[string]any{"path": "../../../etc"}},
		{"use_notebook", map[string]any{"notebook_name": "escape", "notebook_path": "../../etc/passwd"}},
		{"use_notebook", map[string]any{"notebook_name": "", "notebook_path": path}},
	} {
		res := callTool(t, cs, c.tool, c.args)
		text := textOf(res)
		t.Logf("%s(%v) -> error=%v %s", c.tool, c.args, res.IsError, truncate(text, 200))
		if !res.IsError {
			t.Errorf("%s(%v) succeeded: %s", c.tool, c.args, truncate(text, 200))
		} else if len(text) < 20 || strings.Contains(text, "panic") || strings.Contains(text, "internal error") {
			t.Errorf("%s(%v): unclear refusal %q", c.tool, c.args, text)
		}
		if after, _ := os.ReadFile(srv.Path(path)); !bytes.Equal(before, after) {
			t.Fatalf("%s(%v) changed the file although it was refused", c.tool, c.args)
		}
	}

	// A negative timeout is refused with its bounds (it used to be read
	// silently as the default); huge but harmless pagination is handled,
	// not refused.
	fails(t, cs, "execute_cell", map[string]any{"cell_index": 0, "timeout": -1}, "0..86400")
	// (Integers past 2^53 do not survive the SDK's JSON round trip through
	// float64 and are refused above; 2^40 is huge enough.)
	ok(t, cs, "read_notebook", map[string]any{"notebook_name": "args", "limit": 1 << 40})
	fails(t, cs, "read_notebook", map[string]any{"notebook_name": "args", "start_index": 1 << 40}, "past the end")
	ok(t, cs, "list_files", map[string]any{"start_index": 1 << 40, "limit": 1 << 40})

	// Invalid UTF-8 in a string argument: the bytes are sent raw.
	r := newRPC(t, ip.endpoint(), ip.token)
	r.initialize(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, body, _, err := r.post(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"use_notebook","arguments":{"notebook_name":"args","notebook_path":"`+path+`"}}}`), nil); err != nil || strings.Contains(body, `"isError":true`) {
		t.Fatalf("use_notebook on the raw session: %v %s", err, body)
	}
	for i, bad := range [][]byte{{0xff, 0xfe}, {0xc0, 0x80}, {0xed, 0xa0, 0x80}, []byte("ok\x00nul")} {
		body := append([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"insert_cell","arguments":{"cell_index":-1,"cell_type":"code","cell_source":"bad `), bad...)
		body = append(body, []byte(fmt.Sprintf(` %d"}}}`, i))...)
		code, resp, _, err := r.post(ctx, body, nil)
		if err != nil || code >= 500 {
			t.Fatalf("invalid UTF-8 %x: %d %v %s", bad, code, err, resp)
		}
		t.Logf("invalid UTF-8 %x -> %d %s", bad, code, truncate(resp, 200))
		data, _ := os.ReadFile(srv.Path(path))
		if !utf8.Valid(data) {
			t.Fatalf("the file is no longer valid UTF-8 after %x", bad)
		}
		parseFile(t, srv.Path(path))
	}
	// A cell source with a NUL and a lone surrogate escape round-trips as
	// valid JSON.
	ok(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "raw", "cell_source": "nul \x00 and \ufffd"})
	nb := parseFile(t, srv.Path(path))
	if last := nb.Cells[len(nb.Cells)-1].Source; last != "nul \x00 and \ufffd" {
		t.Errorf("raw cell source came back as %q", last)
	}
}

// A 10,000-cell notebook opens, reads and takes inserts in reasonable time.
func TestTenThousandCells(t *testing.T) {
	srv := jupytertest.Shared(t)
	ip, _ := startInProcess(t, srv)
	sub := srv.Subdir(t)
	sources := make([]string, 10000)
	for i := range sources {
		sources[i] = fmt.Sprintf("x_%d = %d\nprint(x_%d)", i, i, i)
	}
	path := writeNotebook(t, srv, sub+"/big.ipynb", sources...)
	cs := ip.connect(t)

	timed := func(name string, args map[string]any) string {
		start := time.Now()
		text, _ := ok(t, cs, name, args)
		took := time.Since(start)
		t.Logf("%s on 10,000 cells: %v", name, took.Round(time.Millisecond))
		if took > 15*time.Second {
			t.Errorf("%s took %v on 10,000 cells", name, took)
		}
		return text
	}
	timed("use_notebook", map[string]any{"notebook_name": "big", "notebook_path": path})
	if text := timed("read_notebook", map[string]any{"notebook_name": "big"}); !strings.Contains(text, "x_0") || !strings.Contains(text, "10000") {
		t.Errorf("read_notebook brief: %s", truncate(text, 500))
	}
	if text := timed("read_notebook", map[string]any{"notebook_name": "big", "start_index": 9990, "limit": 0, "response_format": "detailed"}); !strings.Contains(text, "x_9999") {
		t.Errorf("read_notebook tail: %s", truncate(text, 500))
	}
	timed("read_notebook", map[string]any{"notebook_name": "big", "limit": 0})
	timed("insert_cell", map[string]any{"cell_index": 5000, "cell_type": "markdown", "cell_source": "# middle"})
	timed("insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "end = True"})
	if text := timed("read_cell", map[string]any{"cell_index": 5000}); !strings.Contains(text, "# middle") {
		t.Errorf("read_cell 5000: %s", text)
	}
	nb := parseFile(t, srv.Path(path))
	if len(nb.Cells) != 10002 || nb.Cells[5000].Source != "# middle" || nb.Cells[10001].Source != "end = True" || nb.Cells[9999].Source != sources[9998] {
		t.Errorf("file after the inserts: %d cells", len(nb.Cells))
	}
}

// Files that are not valid notebooks are refused by use_notebook with a
// message naming the file, and are never written.
func TestMalformedNotebookFiles(t *testing.T) {
	srv := jupytertest.Shared(t)
	ip, _ := startInProcess(t, srv)
	sub := srv.Subdir(t)
	cs := ip.connect(t)
	valid := `{"cells":[{"cell_type":"code","id":"a","metadata":{},"source":"x = 1","outputs":[],"execution_count":null}],"metadata":{},"nbformat":4,"nbformat_minor":5}`
	files := map[string]string{
		"truncated.ipynb":       valid[:len(valid)/2],
		"empty.ipynb":           "",
		"garbage.ipynb":         "\x00\x01\x02 not json at all \xff",
		"array.ipynb":           `[1,2,3]`,
		"v5.ipynb":              strings.Replace(valid, `"nbformat":4`, `"nbformat":5`, 1),
		"nbformat-str.ipynb":    strings.Replace(valid, `"nbformat":4`, `"nbformat":"4"`, 1),
		"cells-string.ipynb":    `{"cells":"nope","metadata":{},"nbformat":4,"nbformat_minor":5}`,
		"cells-missing.ipynb":   `{"metadata":{},"nbformat":4,"nbformat_minor":5}`,
		"source-number.ipynb":   strings.Replace(valid, `"source":"x = 1"`, `"source":42`, 1),
		"type-unknown.ipynb":    strings.Replace(valid, `"cell_type":"code"`, `"cell_type":"sql"`, 1),
		"outputs-object.ipynb":  strings.Replace(valid, `"outputs":[]`, `"outputs":{}`, 1),
		"metadata-array.ipynb":  strings.Replace(valid, `"metadata":{},"nbformat"`, `"metadata":[],"nbformat"`, 1),
		"cell-not-object.ipynb": `{"cells":[42],"metadata":{},"nbformat":4,"nbformat_minor":5}`,
		"deep.ipynb":            `{"cells":[],"metadata":{"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `},"nbformat":4,"nbformat_minor":5}`,
	}
	// nbformat 3 (worksheets) is read by Jupyter itself, which upgrades it:
	// it may be refused or opened, but never mangled.
	v3 := `{"metadata":{"name":""},"nbformat":3,"nbformat_minor":0,"worksheets":[{"cells":[{"cell_type":"code","collapsed":false,"input":"print('v3')","language":"python","metadata":{},"outputs":[],"prompt_number":1}],"metadata":{}}]}`
	files["v3.ipynb"] = v3

	for name, content := range files {
		rel := sub + "/" + name
		if err := os.WriteFile(srv.Path(rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		res := callTool(t, cs, "use_notebook", map[string]any{"notebook_name": strings.TrimSuffix(name, ".ipynb"), "notebook_path": rel})
		text := textOf(res)
		after, _ := os.ReadFile(srv.Path(rel))
		t.Logf("%s -> error=%v %s", name, res.IsError, truncate(text, 200))
		if name == "v3.ipynb" && !res.IsError {
			// Opened: it must read as the same notebook, and stay a valid
			// file.
			if rt, _ := ok(t, cs, "read_cell", map[string]any{"cell_index": 0, "notebook_name": "v3"}); !strings.Contains(rt, "print('v3')") {
				t.Errorf("nbformat 3 opened but reads %q", rt)
			}
			if !bytes.Equal(after, []byte(content)) {
				t.Logf("nbformat 3 file rewritten on use_notebook (upgraded to v4)")
				parseFile(t, srv.Path(rel))
			}
			continue
		}
		if !res.IsError {
			t.Errorf("use_notebook on %s succeeded: %s", name, text)
			continue
		}
		if !strings.Contains(text, name) {
			t.Errorf("%s: the refusal does not name the file: %q", name, text)
		}
		if strings.Contains(text, "Server error") {
			t.Errorf("use_notebook on the malformed %s is reported as a server failure (%q); it is the file's fault and should be a user error saying it is not a valid notebook", name, text)
		}
		if strings.Contains(text, srv.RootDir) {
			t.Errorf("%s: the refusal shows the server's absolute path: %q", name, text)
		}
		if strings.Contains(text, "internal error") || strings.Contains(text, "panic") {
			t.Errorf("%s: %q", name, text)
		}
		if !bytes.Equal(after, []byte(content)) {
			t.Errorf("%s was written although it was refused", name)
		}
	}
	// Nothing half-opened stays in use.
	text, _ := ok(t, cs, "list_notebooks", nil)
	for name := range files {
		if n := strings.TrimSuffix(name, ".ipynb"); name != "v3.ipynb" && strings.Contains(text, n+".ipynb") {
			t.Errorf("refused %s is listed as in use: %s", name, text)
		}
	}
}
