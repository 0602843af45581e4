//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// startStdio runs the binary over stdio with the managed Jupyter server's
// interpreter set to python, and opens a session: initialize is answered
// whatever Jupyter is doing.
func startStdio(t *testing.T, python string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), "--transport", "stdio", "--feed", "", "--root-dir", t.TempDir(), "--python", python)
	cmd.Env = harness.CleanEnv()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := harness.ConnectStdio(ctx, "startup-test", cmd)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// The binary answers initialize and tools/list while its managed Jupyter
// server cannot have started yet (its interpreter is held behind a gate the
// test opens), and a tool call made meanwhile waits for the server and then
// succeeds.
func TestStartupCallsWaitForJupyter(t *testing.T) {
	t.Parallel()
	gate, gated := gatedPython(t)
	cs := startStdio(t, gated)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list while Jupyter starts: %v", err)
	}
	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_kernels", Arguments: map[string]any{}})
		done <- answer{res, err}
	}()
	// A request sent after the call is answered only once the server has
	// read the call: from then on the call is in the server's hands.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-done:
		t.Fatalf("list_kernels answered while Jupyter could not have started: %v %q", a.err, harness.Text(a.res))
	default:
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil || a.res.IsError {
		t.Fatalf("list_kernels made during the start: %v %q", a.err, harness.Text(a.res))
	}
	t.Logf("list_kernels made during the start: %q", harness.Text(a.res))
}

// A managed Jupyter server that cannot start is named as such in the answer
// of the first call that needs it, as soon as its process has failed (not
// after the start timeout, which would say it did not answer in time).
func TestStartupFailureIsNamed(t *testing.T) {
	t.Parallel()
	cs := startStdio(t, "/bin/false")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_kernels", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	text := harness.Text(res)
	for _, want := range []string{"the managed Jupyter server failed to start: jupyter-server is not installed", "--python: /bin/false", "--jupyter-url"} {
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("list_kernels: %q does not say %q", text, want)
		}
	}
}

// The workbench draws while its managed Jupyter server cannot have started
// yet, its header saying Jupyter is starting; once the server is up the
// header says so no more. The MCP endpoint answers meanwhile.
func TestWorkbenchHeaderWhileJupyterStarts(t *testing.T) {
	needTmux(t)
	gate, gated := gatedPython(t)
	dir := filepath.Dir(gate)
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	token := "startup-token-0123456789"
	tm := startTmux(t, []string{"MCP_TOKEN=" + token, "PYDEVD_DISABLE_FILE_VALIDATION=1"},
		fmt.Sprintf("%s --port %d --root-dir %s --python %s --log-file %s", harness.Binary(t), port, dir, gated, filepath.Join(dir, "server.log")))
	tm.waitScreen(60*time.Second, fmt.Sprintf("127.0.0.1:%d/mcp", port), "jupyter starting…")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, err := harness.ConnectHTTP(ctx, "startup-agent", fmt.Sprintf("http://127.0.0.1:%d/mcp", port), harness.AuthClient(token, nil), true)
	if err != nil {
		t.Fatalf("initialize while Jupyter starts: %v", err)
	}
	defer cs.Close()
	if !strings.Contains(tm.screen(), "jupyter starting…") {
		t.Fatalf("the header stopped saying Jupyter is starting before it could have:\n%s", tm.screen())
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "list_kernels", map[string]any{})
	deadline := time.Now().Add(30 * time.Second)
	for strings.Contains(tm.screen(), "jupyter starting") {
		if time.Now().After(deadline) {
			t.Fatalf("the header still says Jupyter is starting after a call succeeded:\n%s", tm.screen())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A Jupyter server given by URL is not waited for either: the binary starts
// and answers initialize with nothing listening there, and a call that
// needs Jupyter fails with the usual error naming it.
func TestStartupDoesNotWaitForJupyterURL(t *testing.T) {
	t.Parallel()
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	cmd := exec.Command(harness.Binary(t), "--transport", "stdio", "--feed", "", "--jupyter-url", url, "--jupyter-token", "t")
	cmd.Env = harness.CleanEnv()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := harness.ConnectStdio(ctx, "startup-test", cmd)
	if err != nil {
		t.Fatalf("initialize with nothing at %s: %v", url, err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_kernels", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if text := harness.Text(res); !res.IsError || !strings.Contains(text, "Jupyter at "+url+" is not answering (connection refused)") {
		t.Fatalf("list_kernels: %q", text)
	}
}

// gatedPython writes a python that waits for the file gate to exist before
// it runs Jupyter's Python: a managed Jupyter server started with it stays
// starting until the test creates gate.
func gatedPython(t *testing.T) (gate, gated string) {
	t.Helper()
	py, err := jupyter.FindPython("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gate = filepath.Join(dir, "gate")
	gated = filepath.Join(dir, "python-gated")
	script := "#!/bin/sh\nwhile [ ! -e '" + gate + "' ]; do sleep 0.05; done\nexec '" + py.Path + "' \"$@\"\n"
	if err := os.WriteFile(gated, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return gate, gated
}
