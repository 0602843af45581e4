package nbfile

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// The tests that need a Jupyter server share one.
func TestMain(m *testing.M) { os.Exit(jupytertest.StartMain(m)) }

// fixture is one test's directory on the shared server.
type fixture struct {
	srv    *jupytertest.Server
	client *jupyter.Client
	dir    string // relative to the server root
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := jupytertest.Shared(t)
	return &fixture{srv: srv, client: srv.Client(), dir: srv.Subdir(t)}
}

// path is a contents path inside the test's directory.
func (f *fixture) path(name string) string { return f.dir + "/" + name }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func checkNoError(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
