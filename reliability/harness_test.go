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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

const protocolVersion = "2025-11-25"

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := jupytertest.StartMain(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds the product once per test run, from the module root.
// RELIABILITY_BIN names a binary to use instead.
func binary(t testing.TB) string {
	t.Helper()
	if b := os.Getenv("RELIABILITY_BIN"); b != "" {
		return b
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "jms-reliability-bin")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "jupyter-mcp-server")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// lockedBuffer collects a process's output while tests read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// product is a running jupyter-mcp-server binary.
type product struct {
	t        testing.TB
	cmd      *exec.Cmd
	stdout   *lockedBuffer
	stderr   *lockedBuffer
	Endpoint string // http://127.0.0.1:PORT/mcp
	Token    string
	exited   chan struct{}
	waitErr  error
}

// cleanEnv is the test's environment without any variable the binary reads
// as configuration, so a developer's JUPYTER_URL or MCP_TOKEN cannot change
// what a test exercises.
func cleanEnv(extra ...string) []string {
	drop := map[string]bool{}
	for _, k := range []string{"TRANSPORT", "PORT", "MCP_BIND", "MCP_TOKEN", "MCP_NO_AUTH_LOOPBACK_ONLY", "MCP_TUI", "MCP_FEED",
		"JUPYTER_URL", "JUPYTER_TOKEN", "JUPYTER_ROOT_DIR", "START_NEW_CODE_SANDBOX", "SANDBOX_VARIANT",
		"EXECUTION_TIMEOUT", "MAX_EXECUTION_TIMEOUT", "OUTPUT_IMAGES", "MAX_OUTPUT_BYTES", "KERNEL_AUTO_RESTART",
		"APPROVE", "APPROVE_TIMEOUT", "RECORD_FILE", "LOG_FILE", "LOG_LEVEL"} {
		drop[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, append([]string{"PYDEVD_DISABLE_FILE_VALIDATION=1"}, extra...)...)
}

// launch starts the binary with args and returns at once.
func launch(t testing.TB, args []string, env ...string) *product {
	t.Helper()
	p := &product{t: t, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(binary(t), args...)
	p.cmd.Env = cleanEnv(env...)
	p.cmd.Stdout = p.stdout
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			// SIGTERM first, so that a managed Jupyter server and its
			// kernels are shut down by the product itself.
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
	})
	return p
}

// startHTTP runs the binary as a headless streamable HTTP server on a free
// port with token and waits until it prints its endpoint.
func startHTTP(t testing.TB, token string, args ...string) *product {
	t.Helper()
	all := append([]string{"--transport", "streamable-http", "--port", "0", "--feed", ""}, args...)
	var env []string
	if token != "" {
		env = append(env, "MCP_TOKEN="+token)
	}
	p := launch(t, all, env...)
	p.Token = token
	deadline := time.After(90 * time.Second)
	for {
		if out := p.stderr.String(); strings.Contains(out, "MCP endpoint: ") {
			line := out[strings.Index(out, "MCP endpoint: ")+len("MCP endpoint: "):]
			p.Endpoint = strings.TrimSpace(strings.SplitN(line, "\n", 2)[0])
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("the binary exited before serving (%v); stderr:\n%s", p.waitErr, p.stderr.String())
		case <-deadline:
			t.Fatalf("the binary never printed its endpoint; stderr:\n%s", p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startShared runs the binary against the package's shared Jupyter server.
func startShared(t testing.TB, token string, args ...string) (*product, *jupytertest.Server) {
	t.Helper()
	srv := jupytertest.Shared(t)
	reapKernels(t, srv)
	p := startHTTP(t, token, append([]string{"--jupyter-url", srv.URL, "--jupyter-token", srv.Token}, args...)...)
	return p, srv
}

// bearer adds the MCP token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connectHTTP opens an MCP session over streamable HTTP with a real go-sdk
// client. Reconnects are off: a test that kills the server wants the
// failure, not retries.
func connectHTTP(t testing.TB, endpoint, token string) *sdk.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	transport := &sdk.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: bearer{token: token, base: tr}},
		MaxRetries: -1,
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "reliability-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (p *product) connect(t testing.TB) *sdk.ClientSession {
	return connectHTTP(t, p.Endpoint, p.Token)
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

func textOf(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

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
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
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
	data, _ := io.ReadAll(resp.Body)
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && r.session == "" {
		r.session = id
	}
	return resp.StatusCode, string(data), messages(resp.Header.Get("Content-Type"), data), nil
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
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + protocolVersion +
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
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
