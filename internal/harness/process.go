package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// configEnv lists the environment variables the binary reads as options.
// CleanEnv drops them so that a developer's JUPYTER_URL or MCP_TOKEN cannot
// change what a test exercises.
var configEnv = []string{"TRANSPORT", "PORT", "MCP_BIND", "MCP_TOKEN", "MCP_TOKEN_FILE", "MCP_ALLOWED_HOSTS", "MCP_MAX_BODY", "MCP_NO_AUTH_LOOPBACK_ONLY", "MCP_SESSION_TIMEOUT", "MCP_MAX_SESSIONS", "MCP_TUI", "MCP_FEED", "MCP_TRUST_CLIENT_APPROVAL", "MCP_INSTANCE", "MCP_PEERS", "MCP_TASK_AFTER", "MCP_MAX_TASKS", "MCP_MAX_TASK_BYTES", "MCP_NOTIFY",
	"JUPYTER_URL", "JUPYTER_TOKEN", "JUPYTER_TOKEN_FILE", "JUPYTER_ROOT_DIR", "JUPYTER_PYTHON", "KEEP_KERNELS", "START_NEW_CODE_SANDBOX", "SANDBOX_VARIANT", "WATCH_INTERVAL",
	"EXECUTION_TIMEOUT", "MAX_EXECUTION_TIMEOUT", "OUTPUT_IMAGES", "MAX_OUTPUT_BYTES", "INTERRUPT_ON_TIMEOUT", "KERNEL_AUTO_RESTART",
	"APPROVE", "APPROVE_TIMEOUT", "RECORD_FILE", "MCP_THEME", "MCP_IMAGE_PROTOCOL", "LOG_FILE", "LOG_LEVEL",
	"JUPYTER_MCP_SERIAL_SAVES"}

// OptionEnv lists the variables CleanEnv drops.
func OptionEnv() []string { return slices.Clone(configEnv) }

// CleanEnv is this process's environment without the binary's option
// variables, with PYDEVD_DISABLE_FILE_VALIDATION=1 and extra added.
func CleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(configEnv, k) {
			env = append(env, kv)
		}
	}
	return append(env, append([]string{"PYDEVD_DISABLE_FILE_VALIDATION=1"}, extra...)...)
}

// LockedBuffer collects a process's output while others read it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Process is a running jupyter-mcp-server binary.
type Process struct {
	Cmd      *exec.Cmd
	Stdout   *LockedBuffer
	Stderr   *LockedBuffer
	Endpoint string // http://127.0.0.1:PORT/mcp, once WaitEndpoint returned
	Token    string // the MCP token it was given, if any
	exited   chan struct{}
	waitErr  error
}

// Launch starts bin with args in CleanEnv(env...) and returns at once. Its
// stderr also goes to log when log is not nil (a file to explain a failure
// after the fact).
func Launch(bin string, args, env []string, log io.Writer) (*Process, error) {
	p := &Process{Stdout: &LockedBuffer{}, Stderr: &LockedBuffer{}, exited: make(chan struct{})}
	p.Cmd = exec.Command(bin, args...)
	p.Cmd.Env = CleanEnv(env...)
	p.Cmd.Stdout = p.Stdout
	p.Cmd.Stderr = p.Stderr
	if log != nil {
		p.Cmd.Stderr = io.MultiWriter(p.Stderr, log)
	}
	if err := p.Cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.waitErr = p.Cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// WaitErr is what waiting for the process returned; valid once Exited is
// closed.
func (p *Process) WaitErr() error { return p.waitErr }

// Pid is the process id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Stop sends SIGTERM, so that the product shuts a managed Jupyter server
// and its kernels down itself, and kills it if it has not exited within
// grace.
func (p *Process) Stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.Cmd.Process.Kill()
		<-p.exited
	}
}

const endpointLine = "MCP endpoint: "

// WaitEndpoint waits until the process prints its MCP endpoint and sets
// p.Endpoint.
func (p *Process) WaitEndpoint(ctx context.Context) error {
	for {
		if out := p.Stderr.String(); strings.Contains(out, endpointLine) {
			line := out[strings.Index(out, endpointLine)+len(endpointLine):]
			p.Endpoint = strings.TrimSpace(strings.SplitN(line, "\n", 2)[0])
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("the binary exited before serving (%v); stderr:\n%s", p.waitErr, p.Stderr.String())
		case <-ctx.Done():
			return errors.New("the binary never printed its endpoint; stderr:\n" + p.Stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// HTTPArgs are the arguments of a headless streamable HTTP server on a
// free loopback port, without the live feed.
func HTTPArgs() []string {
	return []string{"--transport", "streamable-http", "--port", "0", "--feed", ""}
}

// ServeHTTP runs bin as a headless streamable HTTP server (HTTPArgs, then
// args) with token as MCP_TOKEN (none: a generated one, which the test
// cannot know) and waits for its endpoint. On failure the process is
// stopped.
func ServeHTTP(ctx context.Context, bin, token string, args []string, log io.Writer) (*Process, error) {
	var env []string
	if token != "" {
		env = append(env, "MCP_TOKEN="+token)
	}
	p, err := Launch(bin, append(HTTPArgs(), args...), env, log)
	if err != nil {
		return nil, err
	}
	p.Token = token
	if err := p.WaitEndpoint(ctx); err != nil {
		p.Stop(10 * time.Second)
		return nil, err
	}
	return p, nil
}

// Start launches the test's binary with args and stops it when the test
// ends.
func Start(t testing.TB, args []string, env ...string) *Process {
	t.Helper()
	p, err := Launch(Binary(t), args, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	return p
}

// StartHTTP runs the test's binary as a headless streamable HTTP server
// (see ServeHTTP) and stops it when the test ends.
func StartHTTP(t testing.TB, token string, args ...string) *Process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	p, err := ServeHTTP(ctx, Binary(t), token, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	return p
}
