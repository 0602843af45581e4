package e2e

// The built binary at MCP 2026-07-28, as a host built on the Go SDK speaks
// it by default: a held call asked of the host's user through input_required
// (stdio, and HTTP with --trust-client-approval), and `attach` paired
// through the question the host is shown in the answer to its next call.

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// startNewestHost runs the binary over stdio with a host at the Go SDK's
// default protocol whose user answers with answer.
func startNewestHost(t *testing.T, answer func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error), args []string, env ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), append([]string{"--transport", "stdio"}, args...)...)
	cmd.Env = harness.CleanEnv(env...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, err := harness.NewClient("newest-host", &sdk.ClientOptions{ElicitationHandler: answer}).
		Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, nil)
	if err != nil {
		t.Fatalf("stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the host speaks %s", v)
	}
	return cs
}

// A held call is put to the person at the client on 2026-07-28, over
// stdio (the host) and over HTTP (with --trust-client-approval): allowed
// it runs, denied it does not.
func TestNewestClientsApproveThroughInputRequired(t *testing.T) {
	var mu sync.Mutex
	decision := "allow"
	asked := 0
	answer := func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked++
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
	}
	set := func(d string) {
		mu.Lock()
		decision = d
		mu.Unlock()
	}
	check := func(t *testing.T, cs *sdk.ClientSession) {
		call(t, cs, "use_notebook", map[string]any{"notebook_name": "eras", "notebook_path": "eras.ipynb", "mode": "create"})
		keep := call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "keep = 1", "notebook_name": "eras"})
		drop := call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "drop = 1", "notebook_name": "eras"})
		idOf := func(res *sdk.CallToolResult) string { id, _ := res.Meta["io.jupyter-mcp/cell_id"].(string); return id }
		mu.Lock()
		before := asked
		mu.Unlock()
		call(t, cs, "delete_cell", map[string]any{"cell_ids_to_delete": []string{idOf(drop)}, "notebook_name": "eras"})
		set("deny")
		defer set("allow")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "delete_cell", Arguments: map[string]any{"cell_ids_to_delete": []string{idOf(keep)}, "notebook_name": "eras"}})
		if err != nil || !res.IsError || !strings.Contains(harness.Text(res), "declined") {
			t.Fatalf("a denied delete: %v %s", err, harness.Text(res))
		}
		set("allow")
		text := harness.Text(call(t, cs, "read_notebook", map[string]any{"notebook_name": "eras"}))
		if !strings.Contains(text, "keep = 1") || strings.Contains(text, "drop = 1") {
			t.Errorf("after an allowed and a denied delete the notebook reads:\n%s", text)
		}
		mu.Lock()
		defer mu.Unlock()
		if asked-before < 2 {
			t.Errorf("the person was asked %d times for two deletes", asked-before)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		check(t, startNewestHost(t, answer, []string{"--root-dir", t.TempDir(), "--approve", "destructive", "--feed", "off"}))
	})
	t.Run("http", func(t *testing.T) {
		const token = "eras-e2e-token"
		p := harness.StartHTTP(t, token, "--root-dir", t.TempDir(), "--approve", "destructive", "--trust-client-approval")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := harness.NewClient("newest-http", &sdk.ClientOptions{ElicitationHandler: answer}).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: p.Endpoint, HTTPClient: harness.AuthClient(token, nil), MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("over HTTP the client speaks %s", v)
		}
		check(t, cs)
	})
}

// `attach` pairs through a 2026-07-28 host: a server cannot send it a
// request, so the pairing question comes in the answer to its next tool
// call; the person types the code there and the terminal is paired.
func TestAttachPairsThroughANewestHost(t *testing.T) {
	needTmux(t)
	root := t.TempDir()
	runtime := t.TempDir()
	codes := make(chan string, 1)
	questions := make(chan string, 8)
	host := func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		schema, _ := json.Marshal(req.Params.RequestedSchema)
		if strings.Contains(string(schema), `"code"`) {
			questions <- req.Params.Message
			select {
			case code := <-codes:
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"code": code}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
	}
	cs := startNewestHost(t, host, []string{"--root-dir", root, "--approve", "destructive"}, "XDG_RUNTIME_DIR="+runtime)
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "paired", "notebook_path": "paired.ipynb", "mode": "create"})

	tm := startTmux(t, []string{"XDG_RUNTIME_DIR=" + runtime, "CI=true"}, harness.Binary(t)+" attach")
	scr := tm.waitScreen(30*time.Second, "type this code")
	code := pairingCode.FindString(scr)
	if code == "" {
		t.Fatalf("no pairing code on the screen:\n%s", scr)
	}
	// The agent goes on working; its next call after the pairing was
	// asked for carries the question, and goes on once it is answered.
	codes <- code
	deadline := time.Now().Add(30 * time.Second)
	for q := ""; q == ""; {
		if time.Now().After(deadline) {
			t.Fatal("the host was never asked to pair")
		}
		call(t, cs, "list_notebooks", nil)
		select {
		case q = <-questions:
			if strings.Contains(q, code) || !strings.Contains(q, "jupyter-mcp-server attach") {
				t.Errorf("the host's question: %s", q)
			}
		case <-time.After(300 * time.Millisecond):
		}
	}
	tm.waitScreen(30*time.Second, "attached to stdio, paired", "workbenches 1 paired")
	tm.quit()
}
