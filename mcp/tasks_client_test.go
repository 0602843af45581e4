package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// A 2026-07-28 tasks client written against the ext-tasks schema
// (modelcontextprotocol/ext-tasks, schema/draft): the Go SDK has no tasks,
// and its CallToolResult drops a CreateTaskResult's fields, so the tests
// speak JSON-RPC themselves, over HTTP (with the headers the transport
// requires, Mcp-Name carrying the task id) and over stdio (a connection
// to RunIO).

// taskConn is one connection of a raw 2026-07-28 client.
type taskConn struct {
	t         *testing.T
	transport string
	name      string // clientInfo name (version "1")
	tasks     bool   // declares the tasks extension
	endpoint  string

	mu     sync.Mutex
	nextID int
	// stdio
	w      io.WriteCloser
	lines  chan []byte
	cancel context.CancelFunc
	done   chan error
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// taskClient connects a raw client named name over transport; tasks says
// whether its requests declare the tasks extension.
func (h *harness) taskClient(transport, name string, tasks bool) *taskConn {
	h.t.Helper()
	c := &taskConn{t: h.t, transport: transport, name: name, tasks: tasks}
	switch transport {
	case "http":
		c.endpoint = h.endpoint()
	case "stdio":
		ctx, cancel := context.WithCancel(context.Background())
		sr, cw := io.Pipe()
		cr, sw := io.Pipe()
		c.w, c.cancel, c.done = cw, cancel, make(chan error, 1)
		c.lines = make(chan []byte, 64)
		go func() { c.done <- h.s.RunIO(ctx, sr, sw) }()
		go func() {
			sc := bufio.NewScanner(cr)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				c.lines <- append([]byte(nil), sc.Bytes()...)
			}
			close(c.lines)
		}()
		h.t.Cleanup(c.close)
	default:
		h.t.Fatalf("unknown transport %q", transport)
	}
	return c
}

// close ends a stdio connection (the client went away).
func (c *taskConn) close() {
	if c.transport != "stdio" || c.cancel == nil {
		return
	}
	c.w.Close()
	c.cancel()
	<-c.done
	c.cancel = nil
}

// meta is the per-request _meta of 2026-07-28.
func (c *taskConn) meta() map[string]any {
	caps := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	if c.tasks {
		caps["extensions"] = map[string]any{extTasks: map[string]any{}}
	}
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": c.name, "version": "1"},
	}
}

// request sends method with params and returns its result, or its error.
func (c *taskConn) request(method string, params map[string]any) (map[string]any, *rpcError) {
	c.t.Helper()
	raw, rerr := c.requestRaw(method, params)
	if rerr != nil {
		return nil, rerr
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		c.t.Fatalf("%s: result %s: %v", method, raw, err)
	}
	return m, nil
}

// requestRaw is request with the result as it came.
func (c *taskConn) requestRaw(method string, params map[string]any) (json.RawMessage, *rpcError) {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = c.meta()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	var answer []byte
	switch c.transport {
	case "http":
		answer = c.postHTTP(method, params, body, id)
	case "stdio":
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, err := c.w.Write(append(body, '\n')); err != nil {
			c.t.Fatalf("%s: %v", method, err)
		}
		timeout := time.After(90 * time.Second)
		for answer == nil {
			select {
			case line, ok := <-c.lines:
				if !ok {
					c.t.Fatalf("%s: the connection ended", method)
				}
				if idOf(line) == id {
					answer = line
				}
			case <-timeout:
				c.t.Fatalf("%s: no answer", method)
			}
		}
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(answer, &msg); err != nil {
		c.t.Fatalf("%s: answer %s: %v", method, answer, err)
	}
	if msg.Error != nil {
		return nil, msg.Error
	}
	return msg.Result, nil
}

// idOf is a JSON-RPC answer's numeric id (0: none).
func idOf(line []byte) int {
	var m struct {
		ID     *int            `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil || m.ID == nil || m.Method != "" {
		return 0
	}
	return *m.ID
}

// postHTTP posts one request with the headers of 2026-07-28 and returns
// the answer with id (from JSON or from the event stream).
func (c *taskConn) postHTTP(method string, params map[string]any, body []byte, id int) []byte {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.endpoint, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	switch {
	case method == "tools/call":
		req.Header.Set("Mcp-Name", params["name"].(string))
	case taskNamed[method]:
		if id, _ := params["taskId"].(string); id != "" {
			req.Header.Set("Mcp-Name", id)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	all, _ := io.ReadAll(resp.Body)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return all
	}
	for _, line := range strings.Split(string(all), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && idOf([]byte(data)) == id {
			return []byte(data)
		}
	}
	c.t.Fatalf("%s: no answer in the stream: %s", method, all)
	return nil
}

// call is tools/call of tool with args.
func (c *taskConn) call(tool string, args map[string]any) (map[string]any, *rpcError) {
	c.t.Helper()
	return c.request("tools/call", map[string]any{"name": tool, "arguments": args})
}

// get is tasks/get of id.
func (c *taskConn) get(id string) (map[string]any, *rpcError) {
	c.t.Helper()
	return c.request("tasks/get", map[string]any{"taskId": id})
}

// pollUntil polls id until its status is one of want (every interval), and
// returns the last answer and the number of polls.
func (c *taskConn) pollUntil(id string, within time.Duration, want ...string) (map[string]any, int) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for n := 1; ; n++ {
		got, err := c.get(id)
		if err != nil {
			c.t.Fatalf("tasks/get %s: %v", id, err)
		}
		for _, w := range want {
			if got["status"] == w {
				return got, n
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s still %v after %s: %v", id, got["status"], within, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// resultText joins the text content of a CallToolResult decoded as a map.
func resultText(res map[string]any) string {
	var parts []string
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok && m["type"] == "text" {
			parts = append(parts, m["text"].(string))
		}
	}
	return strings.Join(parts, "\n")
}
