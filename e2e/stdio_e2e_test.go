package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// A malformed line on stdio is answered with a JSON-RPC error and the
// session goes on; before, the SDK ended the session (and the process) on it.
func TestStdioAnswersMalformedLines(t *testing.T) {
	bin := harness.Binary(t)
	cmd := exec.Command(bin, "--transport", "stdio", "--feed", "", "--root-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "PYDEVD_DISABLE_FILE_VALIDATION=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("the server did not exit cleanly at the end of its input: %v", err)
		}
	}()
	out := bufio.NewReader(stdout)
	exchange := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		reply, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer to %q: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(reply), &m); err != nil {
			t.Fatalf("answer to %q is not JSON: %q", line, reply)
		}
		return m
	}
	wantError := func(line string, code float64) {
		t.Helper()
		m := exchange(line)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != code || m["id"] != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("answer to %q = %v, want a JSON-RPC error %v with id null", line, m, code)
		}
		t.Logf("%q -> %v", line, m)
	}
	wantError("this is not json", -32700)
	wantError(`{"jsonrpc":"2.0","id":2,"method":"tools/list"`, -32700)
	wantError(`{"foo":1}`, -32600)
	wantError(`[]`, -32600)
	// The session is still there and answers properly.
	m := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize after the malformed lines: %v", m)
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	wantError("{not json either", -32700)
	m = exchange(`{"jsonrpc":"2.0","id":"t","method":"tools/list"}`)
	if m["id"] != "t" || !strings.Contains(jsonText(m["result"]), "execute_code") {
		t.Fatalf("tools/list after a malformed line: %.300v", m)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
