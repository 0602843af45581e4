package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// The built binary, headless over streamable HTTP with --approve execute
// (and --trust-client-approval) on its managed Jupyter: the host's user is
// asked through elicitation.
// While they read the question for an execute_cell, the agent swaps the
// cell's source from a second session; their allow does not run the new
// source, they are asked again, shown it, and their decline leaves the
// cell unrun on disk. use_sandbox is asked about too.
func TestApprovalBoundEndToEnd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	const token = "bound-e2e-token-0123456789"
	// An HTTP client's own answer counts only when the operator says so
	// (the gate: --trust-client-approval); this test is about what the
	// answer is bound to.
	p := harness.StartHTTP(t, token, "--approve", "execute", "--trust-client-approval", "--root-dir", root)
	other := harness.ConnectHTTPT(t, p.Endpoint, token)

	var mu sync.Mutex
	var asked []string
	answer := func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, req.Params.Message)
		n := len(asked)
		mu.Unlock()
		if n == 1 && strings.Contains(req.Params.Message, "execute_cell") {
			res := callAny(t, other, "overwrite_cell_source", map[string]any{"cell_index": 1, "cell_source": "ran = 'swapped'\nprint(ran)"})
			if res.IsError {
				t.Errorf("overwrite_cell_source: %s", harness.Text(res))
			}
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
		}
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := harness.NewClient("bound-agent", &sdk.ClientOptions{ElicitationHandler: answer}).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: p.Endpoint, HTTPClient: harness.AuthClient(token, tr), MaxRetries: -1}, harness.SessionOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	call(t, cs, "use_notebook", map[string]any{"notebook_name": "bound", "notebook_path": "bound.ipynb", "mode": "create"})
	call(t, other, "use_notebook", map[string]any{"notebook_name": "bound", "notebook_path": "bound.ipynb"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "ran = 'shown'\nprint(ran)"})

	res := callAny(t, cs, "execute_cell", map[string]any{"cell_index": 1, "timeout": 30})
	mu.Lock()
	questions := append([]string(nil), asked...)
	mu.Unlock()
	if len(questions) != 2 {
		t.Fatalf("the person was asked %d times (want twice: again after the swap); the call answered: %s", len(questions), harness.Text(res))
	}
	if !strings.Contains(questions[0], "ran = 'shown'") {
		t.Errorf("the first question does not show the cell:\n%s", questions[0])
	}
	if !strings.Contains(questions[1], "Asked again: what it would do changed after you were shown it") || !strings.Contains(questions[1], "ran = 'swapped'") {
		t.Errorf("the second question does not say what changed, or show it:\n%s", questions[1])
	}
	if !res.IsError || !strings.Contains(harness.Text(res), "declined") {
		t.Fatalf("declined when asked again, the call answered: %s", harness.Text(res))
	}

	res = callAny(t, cs, "use_sandbox", map[string]any{"sandbox_name": "nowhere"})
	mu.Lock()
	n := len(asked)
	mu.Unlock()
	if n != 3 || !res.IsError {
		t.Fatalf("use_sandbox under --approve execute: asked %d times in all, answered %v: %s", n, res.IsError, harness.Text(res))
	}

	// Nothing ran: the cell on disk has no outputs and no execution count.
	data, err := os.ReadFile(filepath.Join(root, "bound.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			Source         any   `json:"source"`
			Outputs        []any `json:"outputs"`
			ExecutionCount *int  `json:"execution_count"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &nb); err != nil || len(nb.Cells) != 2 {
		t.Fatalf("the notebook on disk: %v\n%s", err, data)
	}
	if c := nb.Cells[1]; len(c.Outputs) != 0 || c.ExecutionCount != nil {
		t.Fatalf("the cell ran after the person declined it: %+v", c)
	}
}

// callAny makes a call whose result may be an error.
func callAny(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}
