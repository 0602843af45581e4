package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// A task lives in the replica that created it, and its id says which:
// behind a round-robin proxy, a poll that lands on the other replica is
// told the task is another process's; with --peers that replica hands the
// poll (by its Mcp-Name, the task id) to the one holding it.

// tasksPost sends one 2026-07-28 request of a client that declared the
// tasks extension, with the headers of the transport, and returns its
// answer's result or error.
func tasksPost(t *testing.T, endpoint, token, method string, params map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks-agent", "version": "1"},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Authorization": "Bearer " + token} {
		req.Header.Set(k, v)
	}
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimPrefix(line, "data: ")
		var msg struct {
			Result map[string]any `json:"result"`
			Error  map[string]any `json:"error"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && (msg.Result != nil || msg.Error != nil) {
			return msg.Result, msg.Error
		}
	}
	t.Fatalf("%s: no answer in %d %s", method, resp.StatusCode, raw)
	return nil, nil
}

func TestATaskIsFoundThroughItsReplica(t *testing.T) {
	srv := jupytertest.Shared(t)
	reapKernels(t, srv)
	const token = "replicas-tasks-token"
	kernel := srv.StartKernel(t).ID
	for _, peers := range []bool{false, true} {
		t.Run(fmt.Sprintf("peers=%v", peers), func(t *testing.T) {
			_, _, front := replicas(t, srv, token, peers)
			created, rerr := tasksPost(t, front, token, "tools/call", map[string]any{"name": "execute_code",
				"arguments": map[string]any{"code": "import time\ntime.sleep(3)\nprint('from its replica')", "kernel_id": kernel, "timeout": 60}})
			if rerr != nil || created["resultType"] != "task" {
				t.Fatalf("not a task: %v %v", rerr, created)
			}
			id := created["taskId"].(string)
			found, elsewhere := 0, 0
			for i := 0; i < 6; i++ {
				got, rerr := tasksPost(t, front, token, "tasks/get", map[string]any{"taskId": id})
				switch {
				case rerr == nil && got["taskId"] == id:
					found++
				case rerr != nil && strings.Contains(fmt.Sprint(rerr["message"]), "another server process"):
					elsewhere++
				default:
					t.Fatalf("poll %d: %v %v", i, rerr, got)
				}
			}
			t.Logf("peers=%v: %d of 6 polls found the task, %d were told it is another process's", peers, found, elsewhere)
			if want := map[bool]int{false: 3, true: 6}[peers]; found != want {
				t.Errorf("found %d of 6, want %d", found, want)
			}
			if !peers {
				return
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				got, rerr := tasksPost(t, front, token, "tasks/get", map[string]any{"taskId": id})
				if rerr != nil {
					t.Fatal(rerr)
				}
				if got["status"] == "completed" {
					if b, _ := json.Marshal(got["result"]); !strings.Contains(string(b), "from its replica") {
						t.Errorf("result %s", b)
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("still %v", got["status"])
				}
				time.Sleep(300 * time.Millisecond)
			}
		})
	}
}
