// Package reliability holds the tests that hold the product to its promises
// under load, faults, bad input and hostile requests: they build and run the
// real binary (and, where the race detector should see the server's inside,
// an in-process engine and MCP server) against real Jupyter servers.
package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.MainWithJupyter(m)) }

// startShared runs the binary against the package's shared Jupyter server.
func startShared(t testing.TB, token string, args ...string) (*harness.Process, *jupytertest.Server) {
	t.Helper()
	srv := jupytertest.Shared(t)
	reapKernels(t, srv)
	p := harness.StartHTTP(t, token, append([]string{"--jupyter-url", srv.URL, "--jupyter-token", srv.Token}, args...)...)
	return p, srv
}

// callTool calls a tool; a protocol error fails the test.
func callTool(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", name, args, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its text.
func ok(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any) (string, *sdk.CallToolResult) {
	t.Helper()
	res := callTool(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, textOf(res))
	}
	return textOf(res), res
}

// fails calls a tool that must fail with isError and a message containing
// every one of want (case-insensitive).
func fails(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any, want ...string) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	text := textOf(res)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want an error mentioning %q: %s", name, args, want, text)
	}
	for _, w := range want {
		if !strings.Contains(strings.ToLower(text), strings.ToLower(w)) {
			t.Errorf("%s(%v) error %q does not mention %q", name, args, text, w)
		}
	}
	return text
}

// textOf is the text content of a result.
var textOf = harness.Text

// allOf is everything a result carries, as JSON, for searching secrets in.
func allOf(res *sdk.CallToolResult) string {
	b, _ := json.Marshal(res)
	return string(b)
}

// cellID is the id a result says it acted on.
func cellID(res *sdk.CallToolResult) string {
	id, _ := res.Meta["io.jupyter-mcp/cell_id"].(string)
	return id
}

// writeNotebook writes a notebook of code cells with the given sources
// under the server root and returns its contents path.
func writeNotebook(t testing.TB, srv *jupytertest.Server, rel string, sources ...string) string {
	t.Helper()
	var cells []map[string]any
	for i, s := range sources {
		cells = append(cells, map[string]any{"cell_type": "code", "id": fmt.Sprintf("c%d", i), "metadata": map[string]any{},
			"source": s, "outputs": []any{}, "execution_count": nil})
	}
	if cells == nil {
		cells = []map[string]any{}
	}
	data, err := json.MarshalIndent(map[string]any{"cells": cells, "metadata": map[string]any{}, "nbformat": 4, "nbformat_minor": 5}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(srv.Path(rel), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return rel
}

// parseFile reads a notebook from disk and parses it as the engine does.
func parseFile(t testing.TB, path string) *notebook.Notebook {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := notebook.Parse(data)
	if err != nil {
		t.Fatalf("%s does not parse: %v\n%s", path, err, truncate(string(data), 2000))
	}
	return nb
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// rpc is a raw JSON-RPC exchange over HTTP, for what a well-behaved client
// library will not send.
type rpc struct {
	endpoint string
	token    string
	session  string
	client   *http.Client
}

func newRPC(t testing.TB, endpoint, token string) *rpc {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &rpc{endpoint: endpoint, token: token, client: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

// post sends body and returns the status, the response body and the
// JSON-RPC messages in it (from an SSE stream or a plain JSON body).
func (r *rpc) post(ctx context.Context, body []byte, hdr map[string]string) (int, string, []map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
		req.Header.Set("Mcp-Protocol-Version", harness.ProtocolVersion)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	// A stream's headers (and its priming event) come at once: a client
	// that hangs up mid-call (ctx done) sees it here, while reading.
	data, err := io.ReadAll(resp.Body)
	if ctx.Err() == nil {
		err = nil
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && r.session == "" {
		r.session = id
	}
	return resp.StatusCode, string(data), messages(resp.Header.Get("Content-Type"), data), err
}

// messages extracts JSON-RPC messages from a response body.
func messages(contentType string, data []byte) []map[string]any {
	var out []map[string]any
	if strings.HasPrefix(contentType, "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				var m map[string]any
				if json.Unmarshal([]byte(strings.TrimSpace(line)), &m) == nil {
					out = append(out, m)
				}
			}
		}
		return out
	}
	var m map[string]any
	if json.Unmarshal(data, &m) == nil {
		out = append(out, m)
	}
	return out
}

func initializeBody() []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"harness.ProtocolVersion":"` + harness.ProtocolVersion +
		`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
}

// initialize opens a raw session (initialize + initialized).
func (r *rpc) initialize(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, body, _, err := r.post(ctx, initializeBody(), nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("initialize: %d %v %s", code, err, body)
	}
	code, body, _, err = r.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	if err != nil || code/100 != 2 {
		t.Fatalf("initialized: %d %v %s", code, err, body)
	}
}

// freePort is a loopback port nothing listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}
