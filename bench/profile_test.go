package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp"
)

// These benchmarks are the in-process equivalents of the figures `make
// bench` measures through the binary, for profiling when a figure misses
// its target:
//
//	go test ./bench -run XXX -bench ExecuteCode -benchtime 300x -cpuprofile cpu.out
//	go tool pprof -top bench.test cpu.out
//
// They run the engine and the MCP server in this process over in-memory
// transports, so a profile shows our code and the SDK, not the pipes.

// inProcess is the engine and MCP server on a fresh Jupyter server, with a
// client session pinned to the protocol real hosts speak.
type inProcess struct {
	srv    *jupytertest.Server
	eng    *engine.Engine
	server *mcp.Server
	kernel string
}

func startInProcess(b *testing.B) *inProcess {
	b.Helper()
	srv := jupytertest.Start(b)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	eng, err := engine.New(ctx, engine.Config{JupyterURL: srv.URL, JupyterToken: srv.Token})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	return &inProcess{srv: srv, eng: eng, server: mcp.New(eng, mcp.Options{Images: true}),
		kernel: srv.StartKernel(b).ID}
}

func (p *inProcess) session(b *testing.B) *sdk.ClientSession {
	b.Helper()
	cs, ss, err := harness.ConnectInMemory(context.Background(), p.server.SDK(), benchClient, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkExecuteCode is figure 1 in process: execute_code("1+1") through
// the MCP server, against the raw kernel channel on the same kernel.
func BenchmarkExecuteCode(b *testing.B) {
	p := startInProcess(b)
	cs := p.session(b)
	kc, err := p.srv.Client().ConnectKernel(context.Background(), p.kernel)
	if err != nil {
		b.Fatal(err)
	}
	defer kc.Close()
	ctx := context.Background()
	call := func() error {
		_, err := callTool(ctx, cs, "execute_code", map[string]any{"code": "1+1", "kernel_id": p.kernel})
		return err
	}
	for i := 0; i < 10; i++ {
		if err := call(); err != nil {
			b.Fatal(err)
		}
		if err := rawRun(ctx, kc, "1+1", "text"); err != nil {
			b.Fatal(err)
		}
	}
	eng := func() error {
		_, err := p.eng.ExecuteCode(ctx, "bench", "1+1", engine.ExecOptions{KernelID: p.kernel,
			Progress: func(engine.ExecProgress) {}, ProgressInterval: 5 * time.Second})
		return err
	}
	var ours, raw, ping, direct samples
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		record(b, &ping, func() error { return cs.Ping(ctx, nil) })
		record(b, &ours, call)
		record(b, &raw, func() error { return rawRun(ctx, kc, "1+1", "text") })
		record(b, &direct, eng)
	}
	b.StopTimer()
	b.ReportMetric(ms(ours.p50()), "mcp-p50-ms")
	b.ReportMetric(ms(direct.p50()), "engine-p50-ms")
	b.ReportMetric(ms(raw.p50()), "raw-p50-ms")
	b.ReportMetric(ms(ping.p50()), "ping-p50-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkReadCell is figure 5 in process: read_cell on a 2,000-cell
// notebook from 8 sessions at once.
func BenchmarkReadCell(b *testing.B) {
	p := startInProcess(b)
	nb, err := bigNotebook(2000, 2500)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.srv.RootDir, "read.ipynb"), nb, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var css []*sdk.ClientSession
	for i := 0; i < 8; i++ {
		cs := p.session(b)
		if _, err := callTool(ctx, cs, "use_notebook", map[string]any{
			"notebook_name": "reader", "notebook_path": "read.ipynb", "kernel_id": p.kernel}); err != nil {
			b.Fatal(err)
		}
		css = append(css, cs)
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/len(css) + 1
	errs := make(chan error, len(css))
	for i, cs := range css {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < per; n++ {
				if _, err := callTool(ctx, cs, "read_cell", map[string]any{"cell_index": (i*250 + n) % 2000, "notebook_name": "reader"}); err != nil {
					errs <- fmt.Errorf("session %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// BenchmarkListNotebooks is the cost of the MCP layer itself: a tools/call
// whose engine work is a map lookup (list_notebooks with nothing in use),
// beside a ping, which is the SDK's round trip with no tool machinery.
func BenchmarkListNotebooks(b *testing.B) {
	p := startInProcess(b)
	cs := p.session(b)
	ctx := context.Background()
	call := func() error {
		_, err := callTool(ctx, cs, "list_notebooks", map[string]any{})
		return err
	}
	for i := 0; i < 10; i++ {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	var tool, ping samples
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		record(b, &ping, func() error { return cs.Ping(ctx, nil) })
		record(b, &tool, call)
	}
	b.StopTimer()
	b.ReportMetric(us(tool.p50()), "tool-p50-us")
	b.ReportMetric(us(ping.p50()), "ping-p50-us")
	b.ReportMetric(0, "ns/op")
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// record times one call of f with the harness's timed, failing the
// benchmark on an error, and appends the time to s.
func record(b *testing.B, s *samples, f func() error) {
	got, err := timed(f)(1)
	if err != nil {
		b.Fatal(err)
	}
	*s = append(*s, got...)
}
