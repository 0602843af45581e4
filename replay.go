package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/contract"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui"
)

const replayUsage = `usage: jupyter-mcp-server replay [--speed N] FILE
       jupyter-mcp-server replay --against FILE [--jupyter-url URL] [--from DIR] [--follow-switches] [-- SERVER FLAGS]

Plays a file written with --record in the workbench (space pauses and resumes,
. steps one call while paused), or with --against runs its tool calls against
this build and prints what answers differently (exit 1 when anything does).
A replay --against runs the recording's code on this machine, as you: replay
only recordings you trust. The token of --jupyter-url is read from
JUPYTER_TOKEN (a flag is visible to every user in ps).

`

// replayOptions are replay's flags.
type replayOptions struct {
	file         string
	speed        float64
	against      string
	jupyterURL   string
	jupyterToken string
	from         string
	follow       bool     // --follow-switches
	serverArgs   []string // after "--": more flags for the replayed server
}

// parseReplayArgs reads replay's flags, which may come before or after the
// file; "--" ends them and passes the rest to the server --against runs.
func parseReplayArgs(args []string, out io.Writer) (*replayOptions, error) {
	o := &replayOptions{}
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, replayUsage); fs.PrintDefaults() }
	fs.Float64Var(&o.speed, "speed", 1, "pace of the workbench replay: N times the recorded pace; 0 plays it as fast as possible")
	fs.StringVar(&o.against, "against", "", "run the recorded calls against this build and compare the answers (no workbench)")
	fs.StringVar(&o.jupyterURL, "jupyter-url", "", "with --against: the Jupyter server to run them on (default: a fresh managed one in an empty temporary directory)")
	fs.StringVar(&o.jupyterToken, "jupyter-token", "", "with --against: the token of --jupyter-url (better: JUPYTER_TOKEN, which ps does not show)")
	fs.BoolVar(&o.follow, "follow-switches", false, "with --against: also replay the recorded connect_to_jupyter and sandbox calls, which may reach another Jupyter server or run code in a sandbox")
	fs.StringVar(&o.from, "from", "", "with --against and a managed Jupyter: copy this directory's files into its root first (the notebooks the recording started from)")
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		// flag stops at "--" (dropping it) or at the first non-flag.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			o.serverArgs = rest
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	switch {
	case o.against != "" && len(positional) > 0:
		return nil, fmt.Errorf("replay --against takes the file as its value, not %q too", positional[0])
	case o.against == "" && len(positional) != 1:
		return nil, errors.New("replay needs one file written with --record")
	case o.against == "" && (o.jupyterURL != "" || o.from != "" || o.follow || len(o.serverArgs) > 0):
		return nil, errors.New("--jupyter-url, --from, --follow-switches and server flags go with --against")
	case o.from != "" && o.jupyterURL != "":
		return nil, errors.New("--from fills the root of a managed Jupyter; with --jupyter-url the server's own files are used")
	case o.speed < 0:
		return nil, fmt.Errorf("--speed %v: want 0 (as fast as possible) or more", o.speed)
	}
	if len(positional) == 1 {
		o.file = positional[0]
	}
	if o.jupyterToken == "" {
		o.jupyterToken = os.Getenv("JUPYTER_TOKEN")
	}
	return o, nil
}

// runReplay plays a --record file into the workbench, or with --against
// runs its calls against this build.
func runReplay(args []string) int {
	o, err := parseReplayArgs(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server replay:", err)
		fmt.Fprint(os.Stderr, replayUsage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.against != "" {
		return replayAgainst(ctx, o, os.Stdout, os.Stderr)
	}
	th, err := envTheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server replay:", err)
		return 2
	}
	backend, err := observe.Replay(o.file, replayPace(o.speed))
	if err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server replay:", err)
		return 1
	}
	if err := ui.Run(ctx, backend, ui.RunOptions{Theme: th, ImageProtocol: envImageProtocol(), ExportDir: exportsDir("")}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server replay:", err)
		return 1
	}
	return 0
}

// replayPace is the replay of --speed: N times the recorded pace, and 0
// as fast as possible (which ReplayOptions spells as a negative speed).
func replayPace(speed float64) observe.ReplayOptions {
	if speed == 0 {
		return observe.ReplayOptions{Speed: -1}
	}
	return observe.ReplayOptions{Speed: speed}
}

// replayAgainst runs the recorded calls, in the order they started, on a
// server of this build (this very binary, over streamable HTTP, as a client
// sees it), one MCP session per recorded session, and compares each answer
// with the recorded one. It prints a table of the differences and a
// summary line, and returns 1 when anything differs, 2 when the replay
// could not run.
func replayAgainst(ctx context.Context, o *replayOptions, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "jupyter-mcp-server replay:", err)
		return 2
	}
	calls, skipped, err := contract.ReadCalls(o.against)
	if err != nil {
		return fail(err)
	}
	if !o.follow {
		// A recorded switch would take the replay to the server or
		// sandbox the recording named, which may be someone's running
		// Jupyter: the calls after it run on the replay's own server.
		calls, skipped = contract.WithoutSwitches(calls, skipped)
	}
	if len(calls) == 0 {
		// A check that compares nothing must not pass.
		return fail(fmt.Errorf("%s holds no tool call to replay (%d not replayable)", o.against, len(skipped)))
	}
	var roots []string
	args := []string{"--transport", "streamable-http", "--port", "0", "--bind", "127.0.0.1", "--tui=false",
		"--feed", "", "--record", "", "--approve", "off", "--log-level", "warn", "--jupyter-url", o.jupyterURL}
	if o.jupyterURL == "" {
		// A fresh root for the managed Jupyter, so that what the calls see
		// is what the recording (and --from) put there, and nothing else.
		root, err := os.MkdirTemp("", "jms-replay-")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(root)
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		if o.from != "" {
			if err := copyTree(o.from, root); err != nil {
				return fail(fmt.Errorf("--from: %w", err))
			}
		}
		roots = append(roots, root)
		args = append(args, "--root-dir", root)
	}
	srv, err := startReplayServer(ctx, append(args, o.serverArgs...), o.jupyterToken)
	if err != nil {
		return fail(err)
	}
	defer srv.stop()

	cmp := contract.NewComparer(roots...)
	sessions := map[string]*sdk.ClientSession{}
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	var diffs []contract.Difference
	for _, c := range calls {
		cs := sessions[c.Session]
		if cs == nil {
			if cs, err = srv.connect(ctx); err != nil {
				return fail(err)
			}
			sessions[c.Session] = cs
		}
		args := cmp.Args(c.Args)
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.Tool, Arguments: args})
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		diffs = append(diffs, cmp.Compare(c, callResult(res, err))...)
	}
	if len(diffs) > 0 {
		contract.WriteDifferences(stdout, diffs)
	}
	fmt.Fprintln(stdout, contract.Summary(o.against, calls, skipped, diffs))
	if len(diffs) > 0 {
		return 1
	}
	return 0
}

// callResult is a replayed answer in the terms of the comparison.
func callResult(res *sdk.CallToolResult, err error) contract.CallResult {
	if err != nil || res == nil {
		return contract.CallResult{Status: contract.StatusProtocolError}
	}
	r := contract.CallResult{Status: contract.StatusOK}
	if res.IsError {
		r.Status = contract.StatusToolError
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	r.Text = strings.Join(texts, "\n")
	if res.StructuredContent != nil {
		r.Structured, _ = json.Marshal(res.StructuredContent)
	}
	if len(res.Meta) > 0 {
		r.Meta, _ = json.Marshal(res.Meta)
	}
	return r
}

// replayServer is this binary serving streamable HTTP for a replay.
type replayServer struct {
	cmd      *exec.Cmd
	endpoint string
	token    string
	exited   chan struct{}
	stderr   *tailBuffer
}

// startReplayServer runs this binary with args and waits for its endpoint.
func startReplayServer(ctx context.Context, args []string, jupyterToken string) (*replayServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 24)
	rand.Read(b)
	s := &replayServer{token: hex.EncodeToString(b), exited: make(chan struct{}), stderr: &tailBuffer{max: 16 << 10}}
	s.cmd = exec.Command(exe, args...)
	// The tokens go in the environment, where other users cannot read
	// them (and the server moves them out of it as it starts).
	s.cmd.Env = append(os.Environ(), "MCP_TOKEN="+s.token, "JUPYTER_TOKEN="+jupyterToken)
	pr, pw := io.Pipe()
	s.cmd.Stderr = io.MultiWriter(s.stderr, pw)
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.cmd.Wait()
		pw.Close()
		close(s.exited)
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if ep, ok := strings.CutPrefix(sc.Text(), "MCP endpoint: "); ok {
				found <- strings.TrimSpace(ep)
				break
			}
		}
		io.Copy(io.Discard, pr)
	}()
	wait, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	select {
	case s.endpoint = <-found:
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("the server to replay against did not start:\n%s", s.stderr.String())
	case <-wait.Done():
		s.stop()
		return nil, fmt.Errorf("the server to replay against did not start in time:\n%s", s.stderr.String())
	}
}

// connect opens an MCP session on the server, as a host would: protocol
// 2025-11-25, bearer token.
func (s *replayServer) connect(ctx context.Context) (*sdk.ClientSession, error) {
	hc := &http.Client{Transport: bearerTransport{token: s.token}}
	tr := &sdk.StreamableClientTransport{Endpoint: s.endpoint, HTTPClient: hc, MaxRetries: -1}
	client := sdk.NewClient(&sdk.Implementation{Name: "jupyter-mcp-server replay", Version: version}, nil)
	cs, err := client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, fmt.Errorf("connecting to the replayed server: %w", err)
	}
	return cs, nil
}

// stop ends the server the way a person would (SIGTERM: it stops its
// managed Jupyter and kernels), killing it if it takes more than 30 s.
func (s *replayServer) stop() {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.cmd.Process.Kill()
	}
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// bearerTransport adds the MCP token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// copyTree copies the files and directories under src into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
