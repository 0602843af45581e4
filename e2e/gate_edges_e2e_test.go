package e2e

// The edges around the gate, each closed, against a real Jupyter.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// A JSON-RPC batch on stdio is answered with an invalid-request error for
// each request in it, and the session (with its kernels) goes on; before,
// the SDK ended the whole server on it.
func TestStdioBatchKeepsTheSession(t *testing.T) {
	root := t.TempDir()
	cmd := exec.Command(harness.Binary(t), "--transport", "stdio", "--feed", "off", "--root-dir", root)
	cmd.Env = harness.CleanEnv()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("the server did not exit cleanly: %v", err)
		}
	}()
	out := bufio.NewReader(stdout)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// reply is the next answer, past the server's own notifications.
	reply := func() any {
		t.Helper()
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				t.Fatalf("no answer (the server ended?): %v", err)
			}
			var v any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("not JSON: %q", line)
			}
			if m, ok := v.(map[string]any); ok && m["method"] != nil {
				continue
			}
			return v
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	reply()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"use_notebook","arguments":{"notebook_name":"b","notebook_path":"b.ipynb","mode":"create"}}}`)
	if m, _ := reply().(map[string]any); m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("use_notebook: %v", m)
	}

	send(`[{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/progress","params":{}},{"jsonrpc":"2.0","id":"four","method":"tools/list"}]`)
	arr, ok := reply().([]any)
	if !ok || len(arr) != 2 {
		t.Fatalf("a batch of two requests: %v", arr)
	}
	for i, want := range []any{float64(3), "four"} {
		m := arr[i].(map[string]any)
		e, _ := m["error"].(map[string]any)
		if m["id"] != want || e == nil || e["code"] != float64(-32600) || !strings.Contains(e["message"].(string), "batches are not supported") {
			t.Fatalf("answer %d: %v", i, m)
		}
	}
	// The same id twice, which the SDK also died of, and notifications only.
	send(`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`)
	if arr, ok := reply().([]any); !ok || len(arr) != 2 {
		t.Fatalf("a batch repeating an id: %v", arr)
	}
	send(`[{"jsonrpc":"2.0","method":"notifications/progress","params":{}}]`)
	if m, _ := reply().(map[string]any); m["id"] != nil || m["error"] == nil {
		t.Fatalf("a batch of notifications: %v", m)
	}

	// The session and its notebook's kernel are still there.
	send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"print(6*7)"}}}`)
	m, _ := reply().(map[string]any)
	if m["id"] != float64(6) || !strings.Contains(jsonText(m["result"]), "42") {
		t.Fatalf("execute_code after the batches: %.300v", m)
	}
}

// A recording that switched to another Jupyter server (one without a
// token, so nothing was redacted) and deleted a cell there: replay
// --against must not follow the switch to that server, still running, nor
// run the recorded sandbox call, unless --follow-switches says so.
func TestReplayDoesNotFollowARecordedSwitch(t *testing.T) {
	victim := jupytertest.Start(t)
	dir := victim.Subdir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nb := `{"cells":[{"cell_type":"code","execution_count":null,"id":"f00d0001","metadata":{},"outputs":[],"source":"precious = 1"}],"metadata":{},"nbformat":4,"nbformat_minor":5}`
	if _, err := victim.Client().SaveNotebook(ctx, dir+"/victim.ipynb", []byte(nb)); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "switch.jsonl")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	at := time.Now().Add(-time.Minute)
	call := func(id, tool string, args map[string]any, text string) {
		raw, _ := json.Marshal(args)
		at = at.Add(time.Second)
		enc.Encode(event.Event{Time: at, Type: event.EvCallStarted, Call: &event.CallEvent{ID: id, Session: "s1", Tool: tool, Args: raw, Status: event.CallRunning, Started: at}})
		enc.Encode(event.Event{Time: at.Add(time.Millisecond), Type: event.EvCallFinished, Call: &event.CallEvent{ID: id, Session: "s1", Tool: tool, Status: event.CallOK, Text: text}})
	}
	call("c1", "connect_to_jupyter", map[string]any{"jupyter_url": victim.URL, "jupyter_token": victim.Token}, "Successfully connected to Jupyter server at "+victim.URL+".")
	call("c2", "use_notebook", map[string]any{"notebook_name": "v", "notebook_path": dir + "/victim.ipynb"}, "ok")
	call("c3", "delete_cell", map[string]any{"notebook_name": "v", "cell_indices": []int{0}}, "Cell 0 (code) deleted successfully.")
	call("c4", "launch_sandbox", map[string]any{"sandbox_name": "box", "variant": "eval"}, "ok")
	if err := os.WriteFile(rec, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	rctx, rcancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer rcancel()
	cmd := exec.CommandContext(rctx, harness.Binary(t), "replay", "--against", rec)
	cmd.Env = harness.CleanEnv()
	out, _ := cmd.CombinedOutput()
	t.Logf("replay:\n%s", out)
	data, err := os.ReadFile(victim.Path(dir + "/victim.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "precious = 1") {
		t.Fatalf("the replay followed the recorded switch and deleted the other server's cell: %s", data)
	}
	for _, want := range []string{"a switch to another Jupyter server (--follow-switches replays it)", "a sandbox call (--follow-switches replays it)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the summary does not count %q", want)
		}
	}
}

// One client opening session after session past --max-sessions closes its
// own, not the other clients'; and a session that starts on a notebook it
// did not choose (the one last used on the server) is told, in every cell
// result, which notebook that is.
func TestSessionCapSharesAndInheritedNotebooks(t *testing.T) {
	p := harness.StartHTTP(t, "cap-token-0123456789", "--root-dir", t.TempDir(), "--max-sessions", "4")
	connect := func(name string) *sdk.ClientSession {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := harness.ConnectHTTP(ctx, name, p.Endpoint, harness.AuthClient(p.Token, nil), false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a := connect("agent-a")
	call(t, a, "use_notebook", map[string]any{"notebook_name": "mine", "notebook_path": "mine.ipynb", "mode": "create"})
	call(t, a, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "mine = 1"})
	call(t, a, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "mine = 2"})
	for range 8 {
		connect("hog")
	}
	// agent-a's session is still live.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := a.CallTool(ctx, &sdk.CallToolParams{Name: "list_notebooks", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("the other client's sessions evicted agent-a's: %v", err)
	}

	// A fresh session of another client starts on "mine" and deletes
	// there ("mine = 1", after the markdown cell a created notebook starts
	// with): the answer names the notebook, and says it was not chosen.
	b := connect("agent-b")
	res := call(t, b, "delete_cell", map[string]any{"cell_indices": []int{1}})
	if text := harness.Text(res); !strings.Contains(text, "notebook 'mine' (mine.ipynb), which this session did not choose") {
		t.Fatalf("the delete in an inherited notebook does not name it: %s", text)
	}
	res = call(t, b, "read_cell", map[string]any{"cell_index": 1})
	if text := harness.Text(res); !strings.Contains(text, "notebook 'mine'") {
		t.Fatalf("a read in an inherited notebook does not name it: %s", text)
	}
	// Once it chose, it is not told any more.
	call(t, b, "use_notebook", map[string]any{"notebook_name": "mine", "notebook_path": "mine.ipynb"})
	if text := harness.Text(call(t, b, "read_cell", map[string]any{"cell_index": 1})); strings.Contains(text, "did not choose") {
		t.Fatalf("told after choosing: %s", text)
	}
}

// An output nested deeper than a notebook can hold is saved as a stub that
// says so, the cell's other outputs are saved, and the agent is told;
// before, the notebook could not be saved at all while the run "succeeded".
func TestUnsaveableOutputIsStubbed(t *testing.T) {
	root := t.TempDir()
	cs := harness.StartStdio(t, []string{"--feed", "off", "--root-dir", root})
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "deep", "notebook_path": "deep.ipynb", "mode": "create"})
	code := "import sys\nsys.setrecursionlimit(20000)\nfrom IPython.display import display\nprint('before')\nd = 1\nfor _ in range(1500):\n    d = [d]\ndisplay({'application/json': d, 'text/plain': 'deep'}, raw=True)\nprint('after')"
	res := call(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": code})
	text := harness.Text(res)
	if !strings.Contains(text, "could not be saved in the notebook") || !strings.Contains(text, "nested 1500 levels deep") {
		t.Fatalf("the agent was not told: %s", text)
	}
	var data []byte
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		data, _ = os.ReadFile(filepath.Join(root, "deep.ipynb"))
		if strings.Contains(string(data), "after") {
			break
		}
	}
	for _, want := range []string{"before", "after", "was not saved: its JSON nests 1500 levels deep"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the saved notebook lacks %q:\n%.2000s", want, data)
		}
	}
}

// A notebook holding NaN and infinities (nbformat writes them, Jupyter
// reads them) opens, reads, saves with them kept, and serves its resources.
func TestNotebookWithNaNOpensAndSaves(t *testing.T) {
	root := t.TempDir()
	nb := `{
 "cells": [
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "0a0a0a0a",
   "metadata": {"score": NaN},
   "outputs": [
    {
     "data": {"application/json": {"x": [1.5, NaN, Infinity, -Infinity]}, "text/plain": ["{'x': [1.5, nan, inf, -inf]}"]},
     "execution_count": 1,
     "metadata": {},
     "output_type": "execute_result"
    }
   ],
   "source": ["x = float('nan')"]
  }
 ],
 "metadata": {"limits": [-Infinity, Infinity]},
 "nbformat": 4,
 "nbformat_minor": 5
}
`
	if err := os.WriteFile(filepath.Join(root, "nan.ipynb"), []byte(nb), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := harness.StartStdio(t, []string{"--feed", "off", "--root-dir", root})
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "nan", "notebook_path": "nan.ipynb"})
	if text := harness.Text(call(t, cs, "read_cell", map[string]any{"cell_index": 0})); !strings.Contains(text, "nan") {
		t.Errorf("read_cell: %s", text)
	}
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "markdown", "cell_source": "# added"})
	data, _ := os.ReadFile(filepath.Join(root, "nan.ipynb"))
	for _, want := range []string{`"score": NaN`, "-Infinity", "# added"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the saved notebook lacks %q:\n%s", want, data)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "notebook://nan/cells/0a0a0a0a"})
	if err != nil {
		t.Fatalf("the cell's resource: %v", err)
	}
	if len(res.Contents) == 0 || !strings.Contains(res.Contents[0].Text, `"score":null`) && !strings.Contains(res.Contents[0].Text, `"score": null`) {
		t.Errorf("the cell's resource: %+v", res.Contents)
	}
}

// With --log-level debug and a stderr nobody reads (a host that never
// drains the pipe), the server keeps answering: logging never blocks a
// call. The kernel writes a megabyte to its stderr, which the managed
// Jupyter's log, at debug level, passes to ours.
func TestLoggingNeverBlocksACall(t *testing.T) {
	root := t.TempDir()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close() // kept open and never read: writes block once it is full
	cmd := exec.Command(harness.Binary(t), "--transport", "stdio", "--feed", "off", "--root-dir", root, "--log-level", "debug")
	cmd.Env = harness.CleanEnv()
	cmd.Stderr = pw
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := harness.ConnectStdio(ctx, "log-agent", cmd)
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "log", "notebook_path": "log.ipynb", "mode": "create"})
	done := make(chan error, 1)
	go func() {
		for i := range 5 {
			cctx, ccancel := context.WithTimeout(context.Background(), 60*time.Second)
			res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "execute_code", Arguments: map[string]any{
				"code": "import os, sys\nfor _ in range(256):\n    os.write(2, (('noise %d ' % " + strconv.Itoa(i) + ") * 512 + '\\n').encode())\nprint('ok')"}})
			ccancel()
			if err != nil {
				done <- err
				return
			}
			if !strings.Contains(harness.Text(res), "ok") {
				done <- fmt.Errorf("call %d answered: %s", i, harness.Text(res))
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the server stalled on its undrained stderr")
	}
}
