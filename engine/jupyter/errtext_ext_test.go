package jupyter_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// Jupyter's own answer to a file written into a missing directory quotes
// the absolute path on its disk; the error this client returns does not.
func TestErrorsHideTheServerRoot(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	c := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rel := srv.Subdir(t) + "/no dir/x.txt"
	_, err := c.SaveText(ctx, rel, "x")
	var ae *jupyter.APIError
	if !errors.As(err, &ae) || ae.Status != 500 {
		t.Fatalf("SaveText into a missing directory: %v", err)
	}
	msg := err.Error()
	t.Logf("error: %s", msg)
	if strings.Contains(msg, srv.RootDir) {
		t.Errorf("the error shows the server's root %s: %q", srv.RootDir, msg)
	}
	if !strings.Contains(msg, "'"+rel+"'") || !ae.NoDirectory() || !ae.CallerCanFix() {
		t.Errorf("the error does not name the file relative to the root, or is not read as a missing directory: %q", msg)
	}
	if _, err := c.GetKernel(ctx, "a\x00b"); err == nil || !strings.Contains(err.Error(), "control character") {
		t.Errorf("a kernel id with a NUL was sent: %v", err)
	}
}
