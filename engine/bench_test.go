package engine

import (
	"context"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// BenchmarkRoundTrip compares execute_code("1+1") through the engine with
// the same request on a bare kernel channel: the difference is the engine's
// overhead (target: under a millisecond).
func BenchmarkRoundTrip(b *testing.B) {
	srv := jupytertest.Start(b)
	k := srv.StartKernel(b)
	ctx := context.Background()
	e, err := New(ctx, Config{JupyterURL: srv.URL, JupyterToken: srv.Token})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
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
	b.Run("read_cell", func(b *testing.B) {
		dir := srv.Subdir(b)
		if _, err := e.UseNotebook(ctx, "s", "nb", dir+"/bench.ipynb", "create", k.ID); err != nil {
			b.Fatal(err)
		}
		for range 2000 {
			if _, _, err := e.InsertCell(ctx, "s", "", -1, "code", "x = 1"); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
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
