package main

// The edges around the gate, each closed, against a real Jupyter.

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"

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
