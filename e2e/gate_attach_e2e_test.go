package e2e

// Pairing as a person does it: `attach` in a terminal shows a code, the
// person types it into the question their MCP host shows, and from then on
// that terminal decides the held calls; each decided call says who decided.

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// pairingCode is a code as attach shows it.
var pairingCode = regexp.MustCompile(`\b[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}\b`)

func TestAttachPairsThroughTheHost(t *testing.T) {
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
	cmdArgs := []string{"--root-dir", root, "--approve", "destructive"}
	cs, _ := startStdioHostWith(t, host, cmdArgs, "XDG_RUNTIME_DIR="+runtime)
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "paired", "notebook_path": "paired.ipynb", "mode": "create"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "x = 1"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "y = 2"})

	tm := startTmux(t, []string{"XDG_RUNTIME_DIR=" + runtime, "CI=true"}, harness.Binary(t)+" attach")
	scr := tm.waitScreen(30*time.Second, "type this code")
	code := pairingCode.FindString(scr)
	if code == "" {
		t.Fatalf("no pairing code on the screen:\n%s", scr)
	}
	var q string
	select {
	case q = <-questions:
	case <-time.After(30 * time.Second):
		t.Fatal("the host was never asked to pair")
	}
	if strings.Contains(q, code) {
		t.Fatalf("the host's question gives the code away: %s", q)
	}
	if !strings.Contains(q, "jupyter-mcp-server attach") {
		t.Errorf("the question does not say which process asks: %s", q)
	}
	codes <- strings.ToLower(code) // typed as a person might
	tm.waitScreen(30*time.Second, "attached to stdio, paired", "workbenches 1 paired")

	// A held call now waits for this terminal, not for the host. It
	// deletes "x = 1", cell 1 after the one markdown cell a created
	// notebook starts with.
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "delete_cell", Arguments: map[string]any{"cell_indices": []int{1}}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	tm.waitScreen(30*time.Second, "Held delete_cell", "y allow")
	decide(tm, "y") // after reading the card: a key within a second of it changing asks again
	select {
	case res := <-done:
		if res == nil || res.IsError {
			t.Fatalf("the allowed delete failed: %s", harness.Text(res))
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the delete was never decided:\n%s", tm.screen())
	}
	tm.waitScreen(20*time.Second, "decided by: workbench 1, attached")
	tm.quit()
}

// startStdioHostWith runs the binary over stdio with a host that answers
// elicitations with answer; it returns the session and the server's pid.
func startStdioHostWith(t *testing.T, answer func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error), args []string, env ...string) (*sdk.ClientSession, int) {
	t.Helper()
	return startStdioHost(t, &hostUser{custom: answer}, args, env...)
}
