package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// path is one way of doing the measured thing: ours or a baseline. batch
// runs n timed calls.
type path struct {
	name  string
	batch func(n int) (samples, error)
}

// timed turns a single call into a batch timed here.
func timed(one func() error) func(n int) (samples, error) {
	return func(n int) (samples, error) {
		s := make(samples, 0, n)
		for i := 0; i < n; i++ {
			t0 := time.Now()
			if err := one(); err != nil {
				return nil, err
			}
			s = append(s, time.Since(t0))
		}
		return s, nil
	}
}

// alternate warms every path up, then runs b.rounds rounds of n calls per
// path, the paths taking turns within each round.
func (b *bench) alternate(n, warm int, paths []path) ([]samples, error) {
	out := make([]samples, len(paths))
	for _, p := range paths {
		if _, err := p.batch(warm); err != nil {
			return nil, fmt.Errorf("%s (warm-up): %w", p.name, err)
		}
	}
	for r := 0; r < b.rounds; r++ {
		if b.ctx.Err() != nil {
			return nil, b.ctx.Err()
		}
		for i, p := range paths {
			s, err := p.batch(n)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.name, err)
			}
			out[i] = append(out[i], s...)
		}
		var parts []string
		for i, p := range paths {
			parts = append(parts, fmt.Sprintf("%s %.2f ms", p.name, ms(out[i].p50())))
		}
		progress("  round %d/%d: p50 so far: %s", r+1, b.rounds, strings.Join(parts, ", "))
	}
	return out, nil
}

// executeVia is execute_code on the shared kernel through one MCP session;
// the answer must carry the output we asked for.
func (b *bench) executeVia(cs *sdk.ClientSession, code string, images int) func() error {
	return func() error {
		ctx, cancel := b.callCtx()
		defer cancel()
		res, err := callTool(ctx, cs, "execute_code", map[string]any{"code": code, "kernel_id": b.kernel})
		if err != nil {
			return err
		}
		if images > 0 && countImages(res) < images {
			return fmt.Errorf("execute_code returned no image: %.300s", resultText(res))
		}
		if images == 0 && !strings.Contains(resultText(res), "2") {
			return fmt.Errorf("execute_code did not return 2: %.300s", resultText(res))
		}
		return nil
	}
}

// rawExecute is our own kernel channel with nothing above it: Execute, then
// the outputs until the run is done.
func (b *bench) rawExecute(code, want string) func() error {
	return func() error {
		ctx, cancel := b.callCtx()
		defer cancel()
		return rawRun(ctx, b.raw, code, want)
	}
}

func rawRun(ctx context.Context, kc *jupyter.KernelConn, code, want string) error {
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: code, StopOnError: true})
	if err != nil {
		return err
	}
	seen := false
	for m := range run.Messages() {
		switch {
		case want == "text" && m.Header.MsgType == "execute_result":
			seen = true
		case want == "png" && (m.Header.MsgType == "display_data" || m.Header.MsgType == "execute_result") &&
			strings.Contains(string(m.Content), `"image/png"`):
			seen = true
		}
	}
	rep, err := run.Wait(ctx)
	if err != nil {
		return err
	}
	if rep == nil || rep.Status != "ok" {
		return fmt.Errorf("execution failed: %+v", rep)
	}
	if want != "" && !seen {
		return errors.New("no " + want + " output arrived")
	}
	return nil
}

// pairedFigure builds a ratio row from ours and a baseline.
func pairedFigure(id, name string, ours, base samples, baseName string, limit float64, notes string) *figure {
	bv := ms(base.p50())
	return &figure{ID: id, Name: name, Unit: "ms", Ours: ms(ours.p50()), Baseline: &bv, BaselineName: baseName,
		Samples: len(ours), goal: ratioMax, limit: limit,
		Notes: strings.TrimSpace(fmt.Sprintf("p50; p95 %.2f vs %.2f ms; n=%d each %s",
			ms(ours.pct(0.95)), ms(base.pct(0.95)), len(ours), notes))}
}

// fig1 is execute_code("1+1") over stdio and over HTTP against
// jupyter_client and against our own raw kernel channel, all on one kernel.
func (b *bench) fig1() []*figure {
	const code = "1+1"
	paths := []path{
		{"stdio", timed(b.executeVia(b.stdio.cs, code, 0))},
		{"jupyter_client", func(n int) (samples, error) { return b.py.run(n, code, "text") }},
		{"http", timed(b.executeVia(b.httpSDK, code, 0))},
		{"raw channel", timed(b.rawExecute(code, "text"))},
	}
	s, err := b.alternate(40, 10, paths)
	if err != nil {
		return []*figure{errFigure("1", "execute_code 1+1", err)}
	}
	stdio, py, http, raw := s[0], s[1], s[2], s[3]
	return []*figure{
		pairedFigure("1a", "execute_code 1+1, stdio", stdio, py, "jupyter_client", 1.25, ""),
		pairedFigure("1b", "execute_code 1+1, stdio", stdio, raw, "raw channel", 1.10, ""),
		pairedFigure("1c", "execute_code 1+1, HTTP", http, py, "jupyter_client", 1.25, ""),
		pairedFigure("1d", "execute_code 1+1, HTTP", http, raw, "raw channel", 1.10, ""),
	}
}

// plotCode draws a small line plot; the inline backend sends it as a PNG.
const plotCode = `fig, ax = plt.subplots(figsize=(4, 3))
ax.plot([1, 3, 2, 4])
plt.show()`

// fig2 is a matplotlib cell end to end: the PNG must reach the caller.
func (b *bench) fig2() []*figure {
	ctx, cancel := b.callCtx()
	defer cancel()
	// Importing matplotlib takes seconds the first time: not what we time.
	if err := rawRun(ctx, b.raw, "import matplotlib.pyplot as plt\n%matplotlib inline", ""); err != nil {
		return []*figure{errFigure("2", "plot cell", err)}
	}
	paths := []path{
		{"stdio", timed(b.executeVia(b.stdio.cs, plotCode, 1))},
		{"jupyter_client", func(n int) (samples, error) { return b.py.run(n, plotCode, "png") }},
	}
	s, err := b.alternate(10, 3, paths)
	if err != nil {
		return []*figure{errFigure("2", "plot cell", err)}
	}
	return []*figure{pairedFigure("2", "plot cell (PNG), stdio", s[0], s[1], "jupyter_client", 1.15, "")}
}
