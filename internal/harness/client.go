package harness

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProtocolVersion is what real hosts speak; the go-sdk client's default
// differs, so every client here pins it.
const ProtocolVersion = "2025-11-25"

// SessionOptions pin a client session to ProtocolVersion.
func SessionOptions() *sdk.ClientSessionOptions {
	return &sdk.ClientSessionOptions{ProtocolVersion: ProtocolVersion}
}

// NewClient is a go-sdk client that introduces itself as name.
func NewClient(name string, opts *sdk.ClientOptions) *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, opts)
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

// AuthClient is an HTTP client that sends token as its bearer token on
// every request, through base (nil: http.DefaultTransport).
func AuthClient(token string, base http.RoundTripper) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: bearer{token: token, base: base}}
}

// ConnectHTTP opens an MCP session on a streamable HTTP endpoint with a
// go-sdk client named name, pinned to ProtocolVersion. hc carries the
// token (see AuthClient). Without retry a dropped connection is an error
// rather than a reconnection, which is what a test that kills the server
// wants.
func ConnectHTTP(ctx context.Context, name, endpoint string, hc *http.Client, retry bool) (*sdk.ClientSession, error) {
	tr := &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}
	if !retry {
		tr.MaxRetries = -1
	}
	return NewClient(name, nil).Connect(ctx, tr, SessionOptions())
}

// ConnectStdio runs cmd and opens an MCP session over its stdin and stdout
// with a go-sdk client named name, pinned to ProtocolVersion. Closing the
// session ends the process (closing its stdin, then SIGTERM after 3 s).
func ConnectStdio(ctx context.Context, name string, cmd *exec.Cmd) (*sdk.ClientSession, error) {
	return NewClient(name, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, SessionOptions())
}

// ConnectInMemory connects a go-sdk client named name to server over
// in-memory transports, pinned to ProtocolVersion.
func ConnectInMemory(ctx context.Context, server *sdk.Server, name string, opts *sdk.ClientOptions) (*sdk.ClientSession, *sdk.ServerSession, error) {
	st, ct := sdk.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		return nil, nil, err
	}
	cs, err := NewClient(name, opts).Connect(ctx, ct, SessionOptions())
	if err != nil {
		ss.Close()
		return nil, nil, err
	}
	return cs, ss, nil
}

// Connect opens a session on the test's server p (see ConnectHTTPT).
func (p *Process) Connect(t testing.TB) *sdk.ClientSession {
	t.Helper()
	return ConnectHTTPT(t, p.Endpoint, p.Token)
}

// ConnectHTTPT opens an MCP session on endpoint with token for the test,
// without retries, and closes it (and its connections) when the test ends.
func ConnectHTTPT(t testing.TB, endpoint, token string) *sdk.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := ConnectHTTP(ctx, "harness-test", endpoint, AuthClient(token, tr), false)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// StartStdio runs the test's binary with --transport stdio and args in
// CleanEnv(env...) and opens a session on it; closing the session (at the
// latest when the test ends) ends the process.
func StartStdio(t testing.TB, args []string, env ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(Binary(t), append([]string{"--transport", "stdio"}, args...)...)
	cmd.Env = CleanEnv(env...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, err := ConnectStdio(ctx, "harness-stdio", cmd)
	if err != nil {
		t.Fatalf("%s over stdio: %v", cmd.Path, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Text is the text content of a tool result, parts joined by newlines.
func Text(res *sdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// FreePort is a loopback port nothing listens on right now.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
