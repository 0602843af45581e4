package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// target is the binary under test and the Jupyter server it talks to.
type target struct {
	bin          string
	jupyterURL   string
	jupyterToken string
	logDir       string
}

func (t *target) jupyterArgs() []string {
	return []string{"--jupyter-url", t.jupyterURL, "--jupyter-token", t.jupyterToken}
}

// logFile opens a file for a child process's stderr, so that a failure can
// be explained after the fact.
func (t *target) logFile(name string) *os.File {
	f, err := os.Create(t.logDir + "/" + name + ".log")
	if err != nil {
		return nil
	}
	return f
}

// waited runs cmd.Wait in the background: the channel closes once it has
// returned.
func waited(cmd *exec.Cmd) <-chan struct{} {
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	return exited
}

// waitOrKill gives a process asked to stop grace to exit (exited is from
// waited), then kills it, and returns once it is gone.
func waitOrKill(cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration) {
	select {
	case <-exited:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// stdioServer is the binary serving one session over stdin/stdout.
type stdioServer struct {
	cs  *sdk.ClientSession
	pid int
	log *os.File
}

func (t *target) startStdio(ctx context.Context, name string, extra ...string) (*stdioServer, error) {
	args := append([]string{"--transport", "stdio"}, t.jupyterArgs()...)
	cmd := exec.Command(t.bin, append(args, extra...)...)
	cmd.Env = harness.CleanEnv()
	log := t.logFile(name)
	if log != nil {
		cmd.Stderr = log
	}
	cs, err := harness.ConnectStdio(ctx, benchClient, cmd)
	if err != nil {
		if log != nil {
			log.Close()
		}
		return nil, fmt.Errorf("%s over stdio: %w%s", t.bin, err, tail(log))
	}
	return &stdioServer{cs: cs, pid: cmd.Process.Pid, log: log}, nil
}

func (s *stdioServer) close() {
	_ = s.cs.Close()
	if s.log != nil {
		s.log.Close()
	}
}

// tail is the end of a child's log, for error messages.
func tail(f *os.File) string {
	if f == nil {
		return ""
	}
	data, err := os.ReadFile(f.Name())
	if err != nil || len(data) == 0 {
		return ""
	}
	if len(data) > 1500 {
		data = data[len(data)-1500:]
	}
	return "\n--- " + f.Name() + " ---\n" + string(data)
}

// httpServer is the binary serving streamable HTTP on a free loopback port.
type httpServer struct {
	endpoint string
	token    string
	pid      int
	proc     *harness.Process
	log      *os.File
	// tmux names the tmux session it runs in, when it shows the TUI, and
	// the tmux server of its own that runs it (see tmux).
	tmux string
}

func (t *target) httpArgs(port int, token string) []string {
	return append([]string{"--transport", "streamable-http", "--port", strconv.Itoa(port), "--mcp-token", token}, t.jupyterArgs()...)
}

func (t *target) startHTTP(ctx context.Context, name string) (*httpServer, error) {
	token := fmt.Sprintf("bench-%d-%s", os.Getpid(), name)
	log := t.logFile(name)
	var w io.Writer
	if log != nil {
		w = log
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	p, err := harness.ServeHTTP(wctx, t.bin, token, t.jupyterArgs(), w)
	if err != nil {
		if log != nil {
			log.Close()
		}
		return nil, fmt.Errorf("%s over HTTP: %w", t.bin, err)
	}
	return &httpServer{endpoint: p.Endpoint, token: token, pid: p.Pid(), proc: p, log: log}, nil
}

// startTUI runs the binary with --tui in a detached tmux session sized like
// a real terminal; tmux is the terminal the TUI draws to.
func (t *target) startTUI(ctx context.Context, session string) (*httpServer, error) {
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	token := "bench-" + strconv.Itoa(port)
	quoted := []string{"exec", shellQuote(t.bin)}
	for _, a := range append(t.httpArgs(port, token), "--tui") {
		quoted = append(quoted, shellQuote(a))
	}
	out, err := tmux(session, "new-session", "-d", "-s", session, "-x", "160", "-y", "50",
		strings.Join(quoted, " ")).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("tmux new-session: %v: %s", err, out)
	}
	h := &httpServer{endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), token: token, tmux: session}
	// "exec" makes the pane's process the binary itself.
	out, err = tmux(session, "list-panes", "-t", session, "-F", "#{pane_pid}").Output()
	if err == nil {
		h.pid, err = strconv.Atoi(strings.TrimSpace(string(out)))
	}
	if err != nil {
		h.close()
		return nil, fmt.Errorf("tmux pane pid: %v", err)
	}
	if err := h.waitListening(ctx, port); err != nil {
		screen, _ := tmux(session, "capture-pane", "-p", "-t", session).Output()
		h.close()
		return nil, fmt.Errorf("TUI server: %w\n--- screen ---\n%s", err, screen)
	}
	return h, nil
}

// tmux returns a tmux command on the tmux server named session (tmux -L),
// which the bench starts for its session alone: a tmux someone else runs on
// the machine neither slows the TUI's terminal nor sees the session, and
// killing the server leaves nothing behind.
func tmux(session string, args ...string) *exec.Cmd {
	return exec.Command("tmux", append([]string{"-L", session}, args...)...)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (h *httpServer) waitListening(ctx context.Context, port int) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return errors.New("the server did not listen within 30 s")
}

func (h *httpServer) close() {
	if h.tmux != "" {
		_ = tmux(h.tmux, "kill-server").Run()
		// The pane's process gets SIGHUP; wait for it so that it does not
		// outlive the run.
		for i := 0; i < 100 && h.pid > 0 && alive(h.pid); i++ {
			time.Sleep(20 * time.Millisecond)
		}
		return
	}
	if h.proc != nil {
		h.proc.Stop(5 * time.Second)
	}
	if h.log != nil {
		h.log.Close()
	}
}

func alive(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

func (h *httpServer) httpClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return harness.AuthClient(h.token, tr)
}

// benchClient is the name the benchmark's MCP clients introduce themselves
// by.
const benchClient = "jupyter-mcp-bench"

// connectSDK opens an MCP session with the go-sdk streamable HTTP client.
func (h *httpServer) connectSDK(ctx context.Context) (*sdk.ClientSession, error) {
	return harness.ConnectHTTP(ctx, benchClient, h.endpoint, h.httpClient(), true)
}

// callTool calls a tool and turns an error result into a Go error, so that a
// benchmark never times failures.
func callTool(ctx context.Context, cs *sdk.ClientSession, name string, args map[string]any) (*sdk.CallToolResult, error) {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("%s answered an error: %.500s", name, harness.Text(res))
	}
	return res, nil
}

func countImages(res *sdk.CallToolResult) int {
	n := 0
	for _, c := range res.Content {
		if _, ok := c.(*sdk.ImageContent); ok {
			n++
		}
	}
	return n
}

// rawSession is a lean streamable HTTP MCP client: plain POSTs of JSON-RPC,
// answers read from JSON or from the SSE stream the server picks. The
// throughput figure uses it so that the client's own CPU, on the same two
// cores, takes as little as possible from the server being measured.
type rawSession struct {
	hc       *http.Client
	endpoint string
	id       string
	next     atomic.Int64
}

func (h *httpServer) connectRaw(ctx context.Context) (*rawSession, error) {
	r := &rawSession{hc: h.httpClient(), endpoint: h.endpoint}
	init := map[string]any{"protocolVersion": harness.ProtocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "jupyter-mcp-bench-raw", "version": "1"}}
	if _, err := r.rpc(ctx, "initialize", init); err != nil {
		return nil, err
	}
	if err := r.notify(ctx, "notifications/initialized"); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rawSession) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", harness.ProtocolVersion)
	if r.id != "" {
		req.Header.Set("Mcp-Session-Id", r.id)
	}
	return r.hc.Do(req)
}

func (r *rawSession) notify(ctx context.Context, method string) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	resp, err := r.post(ctx, body)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: HTTP %s", method, resp.Status)
	}
	return nil
}

// rpcAnswer is the part of a JSON-RPC response the benchmark checks.
type rpcAnswer struct {
	Result *struct {
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// rpc sends one request and returns its raw response message, failing on a
// JSON-RPC error or a tool result with isError.
func (r *rawSession) rpc(ctx context.Context, method string, params any) ([]byte, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.next.Add(1), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	resp, err := r.post(ctx, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return nil, fmt.Errorf("%s: HTTP %s: %s", method, resp.Status, data)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		r.id = sid
	}
	var msg []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 16<<10), 64<<20)
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok && bytes.Contains(d, []byte(`"id"`)) {
				msg = bytes.Clone(bytes.TrimSpace(d))
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	} else if msg, err = io.ReadAll(resp.Body); err != nil {
		return nil, err
	}
	// A result that is not an error is the common case; it is recognised
	// without decoding the whole answer, which keeps the client's share of
	// the two cores small. Anything else is decoded and explained.
	if bytes.Contains(msg, []byte(`"result":`)) && !bytes.Contains(msg, []byte(`"isError":true`)) &&
		!bytes.Contains(msg, []byte(`"error":{`)) {
		return msg, nil
	}
	var a rpcAnswer
	if err := json.Unmarshal(msg, &a); err != nil {
		return nil, fmt.Errorf("%s: unreadable answer %.200q: %w", method, msg, err)
	}
	switch {
	case a.Error != nil:
		return nil, fmt.Errorf("%s: %s", method, a.Error.Message)
	case a.Result == nil:
		return nil, fmt.Errorf("%s: no result in %.200q", method, msg)
	case a.Result.IsError:
		return nil, fmt.Errorf("%s answered an error: %.300s", method, msg)
	}
	return msg, nil
}

func (r *rawSession) callTool(ctx context.Context, name string, args map[string]any) ([]byte, error) {
	return r.rpc(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
}
