package reliability

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp/guard"
)

// inproc is the engine and the MCP server in this process, behind the same
// guard the binary uses, served by httptest: the race detector sees the
// server's inside while real HTTP clients drive it.
type inproc struct {
	srv   *jupytertest.Server
	e     *engine.Engine
	s     *mcp.Server
	http  *httptest.Server
	token string
}

func testLogger() *slog.Logger {
	if os.Getenv("RELIABILITY_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startInProcess builds an engine on srv and serves MCP over HTTP. close
// shuts everything down in the binary's order (HTTP, then the engine);
// tests that do not call it get it at cleanup.
func startInProcess(t testing.TB, srv *jupytertest.Server) (*inproc, func()) {
	t.Helper()
	reapKernels(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := engine.New(ctx, engine.Config{JupyterURL: srv.URL, JupyterToken: srv.Token, Logger: testLogger()})
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	s := mcp.New(e, mcp.Options{Version: "test", Images: true, Logger: testLogger()})
	const token = "inprocess-token"
	g, err := guard.New(s.HTTPHandler(), guard.Options{Token: token, BindHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", g)
	hs := httptest.NewServer(mux)
	ip := &inproc{srv: srv, e: e, s: s, http: hs, token: token}
	closed := false
	closeFn := func() {
		if closed {
			return
		}
		closed = true
		hs.CloseClientConnections()
		hs.Close()
		e.Close()
		if p := s.SchemaProblems(); len(p) > 0 {
			t.Errorf("results that did not match their output schema: %v", p)
		}
	}
	t.Cleanup(closeFn)
	return ip, closeFn
}

func (ip *inproc) endpoint() string { return ip.http.URL + "/mcp" }

func (ip *inproc) connect(t testing.TB) *sdk.ClientSession {
	return harness.ConnectHTTPT(t, ip.endpoint(), ip.token)
}
