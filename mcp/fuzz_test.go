package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	testharness "github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// fuzzTools are the tools whose arguments are fuzzed: every one that reads
// or edits the notebook in use. Tools that run code, start kernels or
// sandboxes, or switch the Jupyter server would make the fuzzer's inputs
// execute or fork; their argument handling is the same SDK path.
var fuzzTools = []string{
	"insert_cell", "overwrite_cell_source", "edit_cell_source", "delete_cell", "move_cell",
	"clear_cell_output", "read_cell", "read_notebook", "list_notebooks", "list_files",
	"list_kernels", "list_sandboxes",
}

// FuzzToolArguments sends arbitrary JSON arguments to the real server (real
// engine, real Jupyter, in-memory MCP transport). Whatever comes in: no
// panic, an answer every time, a refused call leaves the file byte-identical,
// the file always parses, and every result matches its output schema.
func FuzzToolArguments(f *testing.F) {
	seeds := []struct {
		tool int
		args string
	}{
		{0, `{"cell_index":0,"cell_type":"code","cell_source":"x = 1"}`},
		{0, `{"cell_index":-1,"cell_type":"markdown","cell_source":"# hi"}`},
		{0, `{"cell_index":99,"cell_type":"raw","cell_source":""}`},
		{1, `{"cell_index":0,"cell_source":"y = 2"}`},
		{1, `{"cell_id":"c0","cell_source":"z"}`},
		{2, `{"cell_index":0,"old_string":"a","new_string":"b","replace_all":true}`},
		{3, `{"cell_indices":[0,1]}`},
		{3, `{"cell_ids_to_delete":["c0","nope"]}`},
		{4, `{"source_index":0,"target_index":1}`},
		{4, `{"source_cell_id":"c1","target_cell_id":"c0"}`},
		{5, `{"cell_index":0}`},
		{6, `{"cell_index":0,"include_outputs":false}`},
		{7, `{"notebook_name":"fz","response_format":"detailed","start_index":0,"limit":0}`},
		{9, `{"path":"","max_depth":3,"pattern":"**/*.ipynb"}`},
		{0, `null`},
		{1, `{"cell_index":1e308,"cell_source":"x"}`},
		{0, `{"cell_index":0,"cell_type":"code","cell_source":"\u0000\ud800"}`},
	}
	for _, s := range seeds {
		f.Add(uint8(s.tool), []byte(s.args))
	}

	srv := jupytertest.Shared(f)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := engine.New(ctx, engine.Config{JupyterURL: srv.URL, JupyterToken: srv.Token, Logger: testLog(nil)})
	if err != nil {
		f.Fatal(err)
	}
	s := New(e, Options{Version: "fuzz", Images: true, Logger: testLog(nil)})
	cs, ss, err := testharness.ConnectInMemory(ctx, s.SDK(), "fuzz", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		cs.Close()
		ss.Wait()
		e.Close()
	})

	// One notebook per fuzzing process, reset when it grows too big.
	dir, err := os.MkdirTemp(srv.RootDir, "fuzz-")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(dir) })
	rel := strings.TrimPrefix(dir, srv.RootDir+"/") + "/fz.ipynb"
	file := srv.Path(rel)
	reset := func() {
		nb := `{"cells":[` +
			`{"cell_type":"code","id":"c0","metadata":{},"source":"a = 1","outputs":[{"output_type":"stream","name":"stdout","text":"1\n"}],"execution_count":1},` +
			`{"cell_type":"markdown","id":"c1","metadata":{},"source":"# a"},` +
			`{"cell_type":"code","id":"c2","metadata":{},"source":"b = a","outputs":[],"execution_count":null}` +
			`],"metadata":{},"nbformat":4,"nbformat_minor":5}`
		if err := os.WriteFile(file, []byte(nb), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	reset()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "use_notebook", Arguments: map[string]any{"notebook_name": "fz", "notebook_path": rel}})
	if err != nil || res.IsError {
		f.Fatalf("use_notebook: %v %v", err, res)
	}

	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		if !json.Valid(args) {
			return // the client library would not send it
		}
		before, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := notebook.Parse(before); err != nil || len(n.Cells) > 60 {
			reset()
			if before, err = os.ReadFile(file); err != nil {
				t.Fatal(err)
			}
		}
		name := fuzzTools[int(tool)%len(fuzzTools)]
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%s(%s): %v", name, args, err)
			}
			if ctx.Err() != nil {
				t.Fatalf("%s(%s): no answer in 30s", name, args)
			}
			return
		}
		text := textOf(res)
		if strings.Contains(text, "internal error in this MCP server") {
			t.Fatalf("%s(%s) panicked in the server: %s", name, args, text)
		}
		after, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError && !bytes.Equal(before, after) {
			t.Fatalf("%s(%s) was refused (%s) but changed the file", name, args, text)
		}
		if _, err := notebook.Parse(after); err != nil {
			t.Fatalf("%s(%s) left a file that does not parse: %v", name, args, err)
		}
		if p := s.SchemaProblems(); len(p) > 0 {
			t.Fatalf("%s(%s): result does not match its schema: %v", name, args, p)
		}
	})
}

// queryToken finds the values of query parameters named like a token.
var queryToken = regexp.MustCompile(`(?i)[?&][a-z_]*token=([^\s&"'#]*)`)

// userinfoPattern finds the password of a URL's userinfo.
var userinfoPattern = regexp.MustCompile(`(://[^/\s:@]*:)[^@\s/]+@`)

// FuzzRedactArgs: whatever the arguments, the copy the engine records holds
// no value of a secret argument and no URL password or query token, and is
// still JSON when the input was.
func FuzzRedactArgs(f *testing.F) {
	f.Add([]byte(`{"jupyter_url":"http://u:pw@h/?token=abc&x=1","jupyter_token":"sekrit"}`))
	f.Add([]byte(`{"proxy_token":"p","server_url":"https://h/x?access_token=q","cell_source":"token = 1"}`))
	f.Add([]byte(`{"Token":"t","nested":{"token":"n"}}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := redactArgs(raw)
		if json.Valid(raw) && !json.Valid(out) {
			t.Fatalf("redactArgs(%s) = %s: not JSON", raw, out)
		}
		var in, got map[string]any
		if json.Unmarshal(raw, &in) != nil {
			return
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("redactArgs(%s) = %s: %v", raw, out, err)
		}
		for k, v := range in {
			s, isString := v.(string)
			if !isString || s == "" {
				if fmt.Sprint(got[k]) != fmt.Sprint(v) {
					t.Fatalf("%q changed: %v -> %v", k, v, got[k])
				}
				continue
			}
			g, _ := got[k].(string)
			if secretArg(k) && g != "[redacted]" {
				t.Fatalf("secret %q kept: %q", k, g)
			}
			if strings.Contains(strings.ToLower(k), "url") {
				if m := userinfoPattern.FindStringSubmatch(g); m != nil && !strings.HasSuffix(m[0], ":[redacted]@") {
					t.Fatalf("URL %q kept a password: %q", k, g)
				}
				for _, m := range queryToken.FindAllStringSubmatch(g, -1) {
					if m[1] != "" && m[1] != "[redacted]" {
						t.Fatalf("URL %q kept a query token: %q", k, g)
					}
				}
			}
			if !secretArg(k) && !strings.Contains(strings.ToLower(k), "url") && g != s {
				t.Fatalf("plain %q changed: %q -> %q", k, s, g)
			}
		}
	})
}
