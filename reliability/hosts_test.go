package reliability

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// Serving past loopback on purpose: with --bind 0.0.0.0 the binary answers
// to the names of this machine and to --allowed-hosts, still refuses a
// forged Host and still wants the token. Only loopback traffic is sent: the
// requests go to 127.0.0.1 and name the machine in their Host header.
func TestBindAllServesThisMachinesNames(t *testing.T) {
	const token = "reliability-hosts-token-31c7"
	_, srv := startShared(t, token)
	p := harness.StartHTTP(t, token, "--jupyter-url", srv.URL, "--jupyter-token", srv.Token,
		"--bind", "0.0.0.0", "--allowed-hosts", "mcp.example, gateway.internal:8443")
	if !strings.Contains(p.Stderr.String(), "reachable from other machines") {
		t.Errorf("no warning about serving past loopback:\n%s", p.Stderr.String())
	}
	port := p.Endpoint[strings.LastIndex(p.Endpoint, ":")+1 : strings.LastIndex(p.Endpoint, "/")]
	endpoint := "http://127.0.0.1:" + port + "/mcp"
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cases := []struct {
		name   string
		host   string
		token  string
		status int
	}{
		{"host name", hostname + ":" + port, token, http.StatusOK},
		{"host name, no token", hostname + ":" + port, "", http.StatusUnauthorized},
		{"allowed host", "mcp.example:" + port, token, http.StatusOK},
		{"allowed host with its port", "gateway.internal:8443", token, http.StatusOK},
		{"forged host", "evil.example:" + port, token, http.StatusForbidden},
		{"rebound host", "127.0.0.1.nip.io:" + port, token, http.StatusForbidden},
		{"loopback", "127.0.0.1:" + port, token, http.StatusOK},
	}
	if ip := interfaceAddress(); ip != "" {
		cases = append(cases, struct {
			name   string
			host   string
			token  string
			status int
		}{"interface address", net.JoinHostPort(ip, port), token, http.StatusOK})
	}
	for _, c := range cases {
		code, body, _, err := newRPC(t, endpoint, c.token).post(ctx, initializeBody(), map[string]string{"Host": c.host})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t.Logf("Host %s (%s) -> %d %s", c.host, c.name, code, truncate(strings.TrimSpace(body), 160))
		if code != c.status {
			t.Errorf("%s: Host %s got %d, want %d: %s", c.name, c.host, code, c.status, truncate(body, 300))
		}
		if code == http.StatusOK && !strings.Contains(body, "Jupyter MCP Server") {
			t.Errorf("%s: initialize answer %q", c.name, truncate(body, 300))
		}
		if code == http.StatusForbidden && !strings.Contains(body, "--allowed-hosts") {
			t.Errorf("%s: the refusal does not say how to allow a name: %q", c.name, body)
		}
	}
}

// interfaceAddress is a non-loopback address of this machine, "" when it
// has none.
func interfaceAddress() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// One body limit is in force, --max-body, and its 413 names it. The limit is
// set above the SDK's 4 MiB default, so a body between the two shows which
// one really applies.
func TestMaxBodyIsTheOneLimit(t *testing.T) {
	const token = "reliability-body-token-8d02"
	const limit = 6 << 20
	_, srv := startShared(t, token)
	p := harness.StartHTTP(t, token, "--jupyter-url", srv.URL, "--jupyter-token", srv.Token, "--max-body", strconv.Itoa(limit))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A valid initialize padded to a size: the padding is a field the
	// server ignores.
	padded := func(size int) []byte {
		head := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + harness.ProtocolVersion +
			`","capabilities":{},"clientInfo":{"name":"raw","version":"1"},"padding":"`)
		tail := []byte(`"}}`)
		return append(append(head, bytes.Repeat([]byte("x"), size-len(head)-len(tail))...), tail...)
	}
	for _, c := range []struct {
		name   string
		size   int
		status int
	}{
		{"5 MiB, over the SDK default, under the limit", 5 << 20, http.StatusOK},
		{"at the limit", limit, http.StatusOK},
		{"one byte over", limit + 1, http.StatusRequestEntityTooLarge},
	} {
		code, body, _, err := newRPC(t, p.Endpoint, token).post(ctx, padded(c.size), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t.Logf("%s (%d bytes) -> %d %s", c.name, c.size, code, truncate(strings.TrimSpace(body), 160))
		if code != c.status {
			t.Errorf("%s: %d bytes got %d, want %d: %s", c.name, c.size, code, c.status, truncate(body, 300))
		}
		if code == http.StatusRequestEntityTooLarge && (!strings.Contains(body, strconv.Itoa(limit)) || !strings.Contains(body, "--max-body")) {
			t.Errorf("the 413 does not name the limit and the flag: %q", body)
		}
	}
}
