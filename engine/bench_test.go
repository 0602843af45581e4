package engine

import (
	"context"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// benchEngine starts a Jupyter server, a kernel on it and an engine on it
// for a benchmark; the engine is closed when the benchmark ends.
func benchEngine(b *testing.B) (*jupytertest.Server, *jupyter.Kernel, *Engine) {
	b.Helper()
	srv := jupytertest.Start(b)
	k := srv.StartKernel(b)
	e, err := New(context.Background(), Config{JupyterURL: srv.URL, JupyterToken: srv.Token})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return srv, k, e
}

// BenchmarkRoundTrip compares execute_code("1+1") through the engine with
// the same request on a bare kernel channel: the difference is the engine's
// overhead (target: under a millisecond).
func BenchmarkRoundTrip(b *testing.B) {
	srv, k, e := benchEngine(b)
	ctx := context.Background()
	b.Run("raw", func(b *testing.B) {
		conn := jupytertest.Connect(b, srv.Client(), k.ID)
		for b.Loop() {
			run, err := conn.Execute(ctx, jupyter.ExecuteRequest{Code: "1+1", StoreHistory: true, StopOnError: true})
			if err != nil {
				b.Fatal(err)
			}
			for range run.Messages() {
			}
			if _, err := run.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.ExecuteCode(ctx, "s", "1+1", ExecOptions{KernelID: k.ID, Timeout: time.Minute}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// read_cell on a 2,000-cell notebook, from parallel readers.
	nb := notebook.New()
	for range 2000 {
		nb.Cells = append(nb.Cells, nb.NewCell(notebook.Code, "x = 1"))
	}
	data, err := nb.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	path := srv.Subdir(b) + "/bench.ipynb"
	if _, err := srv.Client().SaveNotebook(ctx, path, data); err != nil {
		b.Fatal(err)
	}
	if _, err := e.UseNotebook(ctx, UseRequest{Session: "s", Name: "nb", Path: path, Mode: "connect", KernelID: k.ID}); err != nil {
		b.Fatal(err)
	}
	b.Run("read_cell", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, _, err := e.ReadCell(ctx, "s", "nb", CellRef{Index: ptr(i % 2000)}); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
}
