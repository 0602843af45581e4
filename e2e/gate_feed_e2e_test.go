package e2e

// Only a person decides, stdio: code the agent runs in a kernel finds the
// server's live feed and tries to act as the person through it: decide the
// held delete_cell, revoke, and pair itself. The host's user is the only one
// who may decide here (nobody attached), and they deny the delete.

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// hostUser answers the approval questions of a stdio server as the person
// at its host does in these tests: every call but delete_cell is allowed,
// delete_cell is declined, and a pairing question (no one here ran attach)
// is declined. It keeps the questions it was asked.
type hostUser struct {
	mu    sync.Mutex
	asked []string
	// custom, when set, answers instead.
	custom func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)
}

func (h *hostUser) answer(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	if h.custom != nil {
		return h.custom(ctx, req)
	}
	msg := req.Params.Message
	h.mu.Lock()
	h.asked = append(h.asked, msg)
	h.mu.Unlock()
	schema, _ := json.Marshal(req.Params.RequestedSchema)
	switch {
	case !strings.Contains(string(schema), `"decision"`):
		// Not an approval question: a pairing one.
		return &sdk.ElicitResult{Action: "decline"}, nil
	case strings.HasPrefix(msg, "An agent wants to run delete_cell"):
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny", "reason": "keep my cells"}}, nil
	}
	return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
}

func (h *hostUser) questions() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.asked...)
}

// startStdioHost runs the binary over stdio with a host whose user answers
// as h does; it returns the session and the server's pid.
func startStdioHost(t *testing.T, h *hostUser, args []string, env ...string) (*sdk.ClientSession, int) {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), append([]string{"--transport", "stdio"}, args...)...)
	cmd.Env = harness.CleanEnv(env...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, err := harness.NewClient("gate-host", &sdk.ClientOptions{ElicitationHandler: h.answer}).
		Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, harness.SessionOptions())
	if err != nil {
		t.Fatalf("stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd.Process.Pid
}

func TestKernelCannotDecideThroughTheFeed(t *testing.T) {
	root := t.TempDir()
	runtime := t.TempDir()
	report := filepath.Join(t.TempDir(), "attack.jsonl")
	h := &hostUser{}
	cs, pid := startStdioHost(t, h, []string{"--root-dir", root, "--approve", "destructive"}, "XDG_RUNTIME_DIR="+runtime)

	call(t, cs, "use_notebook", map[string]any{"notebook_name": "gate", "notebook_path": "gate.ipynb", "mode": "create"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "keep = 1"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "keep = 2"})

	// The agent's code starts the attacker in its kernel.
	call(t, cs, "execute_code", map[string]any{"code": attackCode(feedAttack, map[string]any{"SERVER_PID": pid, "REPORT": report})})
	waitForStep(t, report, func(s attackStep) bool {
		return s.str("step") == "connected" || s.str("step") == "connect" || (s.str("step") == "found" && len(s["feeds"].([]any)) == 0)
	})
	// Its pairing request and its first action are answered first.
	waitForStep(t, report, func(s attackStep) bool {
		return s.str("step") == "result" && strings.HasPrefix(s.str("action"), "revoke")
	})

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	// "keep = 1": a created notebook starts with one markdown cell.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "delete_cell", Arguments: map[string]any{"cell_indices": []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	steps := readReport(t, report, 60*time.Second)
	t.Logf("the attack reported:\n%s", stepsText(steps))
	t.Logf("the host was asked:\n%s", strings.Join(h.questions(), "\n---\n"))
	if !res.IsError {
		t.Fatalf("the held delete_cell ran though the person at the host denied it (the kernel decided it): %s", harness.Text(res))
	}
	if text := harness.Text(res); !strings.Contains(text, "keep my cells") {
		t.Errorf("the delete was not refused by the person at the host: %s", text)
	}
	for _, s := range steps {
		if s.str("step") == "result" && s.str("error") == "" {
			t.Errorf("the feed took the kernel's %q as the person's", s.str("action"))
		}
		if s.str("step") == "paired" {
			t.Errorf("the kernel paired itself: %v", s["msg"])
		}
	}
	cells := readCells(t, cs, "gate")
	if !strings.Contains(cells, "keep = 1") || !strings.Contains(cells, "keep = 2") {
		t.Fatalf("a cell is gone: %s", cells)
	}
	// The held call was asked of the person at the host, not of the kernel.
	if !hasQuestion(h.questions(), "delete_cell") {
		t.Errorf("the host's user was never asked about delete_cell")
	}
}

// waitForStep waits until the attack reported a step that ok accepts.
func waitForStep(t *testing.T, report string, ok func(attackStep) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range parseReport(t, report) {
			if ok(s) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the attack never got that far; it reported:\n%s", stepsText(parseReport(t, report)))
}

func stepsText(steps []attackStep) string {
	var lines []string
	for _, s := range steps {
		b, _ := json.Marshal(s)
		lines = append(lines, string(b))
	}
	return strings.Join(lines, "\n")
}

func hasQuestion(qs []string, word string) bool {
	for _, q := range qs {
		if strings.Contains(q, word) {
			return true
		}
	}
	return false
}

// readCells is the notebook's cell sources as read_notebook answers.
func readCells(t *testing.T, cs *sdk.ClientSession, name string) string {
	t.Helper()
	res := call(t, cs, "read_notebook", map[string]any{"notebook_name": name, "response_format": "detailed"})
	return harness.Text(res)
}
