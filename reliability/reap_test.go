package reliability

import (
	"context"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// reapKernels shuts down, when the test ends, every kernel of srv that was
// not running when it began: the shared server outlives the test, and tests
// that kill the product or leave kernels to it should not leave them running.
func reapKernels(t testing.TB, srv *jupytertest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := srv.Client()
	before := map[string]bool{}
	ks, err := c.ListKernels(ctx)
	if err != nil {
		t.Fatalf("listing kernels: %v", err)
	}
	for _, k := range ks {
		before[k.ID] = true
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ks, err := c.ListKernels(ctx)
		if err != nil {
			return
		}
		for _, k := range ks {
			if !before[k.ID] {
				_ = c.ShutdownKernel(ctx, k.ID)
			}
		}
	})
}
