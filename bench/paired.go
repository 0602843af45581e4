package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
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

// cpuUse is the CPU time a process spent over some calls.
type cpuUse struct {
	cpu      time.Duration
	switches int64 // context switches
	calls    int
}

func (u cpuUse) perCall() float64 {
	return float64(u.cpu.Microseconds()) / float64(max(1, u.calls))
}

func (u cpuUse) switchesPerCall() float64 { return float64(u.switches) / float64(max(1, u.calls)) }

func (u cpuUse) note() string {
	if u.calls == 0 {
		return ""
	}
	return fmt.Sprintf("; server CPU %.0f us/call, %.0f context switches/call", u.perCall(), u.switchesPerCall())
}

// cpuOf adds the CPU time process pid spends during each batch to u.
func cpuOf(pid int, u *cpuUse, batch func(n int) (samples, error)) func(n int) (samples, error) {
	return func(n int) (samples, error) {
		c0, err := cpuTime(pid)
		if err != nil {
			return nil, err
		}
		x0 := contextSwitches(pid)
		s, err := batch(n)
		c1, _ := cpuTime(pid)
		u.cpu += c1 - c0
		u.switches += contextSwitches(pid) - x0
		u.calls += n
		return s, err
	}
}

// alternate warms every path up, then runs rounds rounds of n calls per
// path, the paths taking turns within each round. Short rounds spread a
// burst of load from elsewhere on the machine over every path alike.
func (b *bench) alternate(rounds, n, warm int, paths []path) ([]samples, error) {
	out := make([]samples, len(paths))
	for _, p := range paths {
		if _, err := p.batch(warm); err != nil {
			return nil, fmt.Errorf("%s (warm-up): %w", p.name, err)
		}
	}
	every := max(1, rounds/8) // about eight progress lines per figure
	for r := 0; r < rounds; r++ {
		if b.ctx.Err() != nil {
			return nil, b.ctx.Err()
		}
		// The order rotates by one every round: on a loaded machine a
		// path's place in the round moves its p50 by more than the
		// differences the figures look for (a raw channel measured 0.80x
		// and 1.05x against a copy of itself, placed last or first).
		for j := range paths {
			i := (j + r) % len(paths)
			s, err := paths[i].batch(n)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", paths[i].name, err)
			}
			out[i] = append(out[i], s...)
		}
		if (r+1)%every != 0 && r+1 != rounds {
			continue
		}
		var parts []string
		for i, p := range paths {
			parts = append(parts, fmt.Sprintf("%s %.2f ms", p.name, ms(out[i].p50())))
		}
		progress("  round %d/%d: p50 so far: %s", r+1, rounds, strings.Join(parts, ", "))
	}
	return out, nil
}

// executeVia is execute_code on the shared kernel through one MCP session;
// the answer must carry the output we asked for.
func (b *bench) executeVia(cs *sdk.ClientSession, code string, images int) func() error {
	return b.executeOn(cs, b.kernel, code, images)
}

// executeOn is executeVia on a kernel of the caller's choosing.
func (b *bench) executeOn(cs *sdk.ClientSession, kernel, code string, images int) func() error {
	return func() error {
		ctx, cancel := b.callCtx()
		defer cancel()
		res, err := callTool(ctx, cs, "execute_code", map[string]any{"code": code, "kernel_id": kernel})
		if err != nil {
			return err
		}
		if images > 0 && countImages(res) < images {
			return fmt.Errorf("execute_code returned no image: %.300s", harness.Text(res))
		}
		if images == 0 && !strings.Contains(harness.Text(res), "2") {
			return fmt.Errorf("execute_code did not return 2: %.300s", harness.Text(res))
		}
		return nil
	}
}

// rawExecute is our own kernel channel with nothing above it: Execute, then
// the outputs until the run is done.
func (b *bench) rawExecute(code, want string) func() error {
	return b.rawExecuteOn(b.raw, code, want)
}

// rawExecuteOn is rawExecute on another channel.
func (b *bench) rawExecuteOn(kc *jupyter.KernelConn, code, want string) func() error {
	return func() error {
		ctx, cancel := b.callCtx()
		defer cancel()
		return rawRun(ctx, kc, code, want)
	}
}

func rawRun(ctx context.Context, kc *jupyter.KernelConn, code, want string) error {
	// The same request the engine sends (and jupyter_client sends by
	// default): history on, so the kernel does the same work on every path.
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: code, StoreHistory: true, StopOnError: true})
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
		Notes: fmt.Sprintf("p50; p95 %.2f vs %.2f ms; n=%s", ms(ours.pct(0.95)), ms(base.pct(0.95)),
			counts(len(ours), len(base))) + joinNote(notes)}
}

// joinNote appends a note: a clause after "; ", a remark after a space.
func joinNote(n string) string {
	switch {
	case n == "":
		return ""
	case strings.HasPrefix(n, ";"):
		return n
	}
	return " " + n
}

func counts(a, b int) string {
	if a == b {
		return fmt.Sprintf("%d each", a)
	}
	return fmt.Sprintf("%d vs %d", a, b)
}

// fig1 is execute_code("1+1") over stdio and over HTTP against
// jupyter_client and against our own raw kernel channel, all on one kernel.
func (b *bench) fig1() []*figure {
	const code = "1+1"
	var stdioCPU, httpCPU, rawCPU cpuUse
	paths := []path{
		{"stdio", cpuOf(b.stdio.pid, &stdioCPU, timed(b.executeVia(b.stdio.cs, code, 0)))},
		{"jupyter_client", func(n int) (samples, error) { return b.py.run(n, code, "text") }},
		{"http", cpuOf(b.http.pid, &httpCPU, timed(b.executeVia(b.httpSDK, code, 0)))},
		{"raw channel", cpuOf(os.Getpid(), &rawCPU, timed(b.rawExecute(code, "text")))},
		// A ping is the MCP transport alone: it splits our overhead into
		// the protocol and the engine's part.
		{"ping", timed(func() error {
			ctx, cancel := b.callCtx()
			defer cancel()
			return b.stdio.cs.Ping(ctx, nil)
		})},
	}
	s, err := b.alternate(4*b.rounds, 10, 10, paths)
	if err != nil {
		return []*figure{errFigure("1", "execute_code 1+1", err)}
	}
	stdio, py, http, raw, ping := s[0], s[1], s[2], s[3], s[4]
	// CPU per call says how much of our overhead is work and how much is
	// waiting (wake-ups, scheduling) on a busy machine.
	// The raw channel runs in this process, so its cost is measured here.
	stdioNote, httpNote := stdioCPU.note(), httpCPU.note()
	vsRaw := func(f *figure, ours cpuUse) *figure {
		f.Extra = map[string]float64{
			"server_cpu_us_per_call": ours.perCall(), "server_switches_per_call": ours.switchesPerCall(),
			"raw_cpu_us_per_call": rawCPU.perCall(), "raw_switches_per_call": rawCPU.switchesPerCall(),
		}
		return f
	}
	return []*figure{
		pairedFigure("1a", "execute_code 1+1, stdio", stdio, py, "jupyter_client", 1.25, stdioNote),
		vsRaw(pairedFigure("1b", "execute_code 1+1, stdio", stdio, raw, "raw channel", 1.10, stdioNote), stdioCPU),
		pairedFigure("1c", "execute_code 1+1, HTTP", http, py, "jupyter_client", 1.25, httpNote),
		vsRaw(pairedFigure("1d", "execute_code 1+1, HTTP", http, raw, "raw channel", 1.10, httpNote), httpCPU),
		{ID: "1e", Name: "MCP ping, stdio", Unit: "ms", Ours: ms(ping.p50()), Samples: len(ping), goal: info,
			Notes: fmt.Sprintf("p50; p95 %.2f ms; the transport's share of 1a/1b", ms(ping.pct(0.95)))},
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
	var cpu cpuUse
	paths := []path{
		{"stdio", cpuOf(b.stdio.pid, &cpu, timed(b.executeVia(b.stdio.cs, plotCode, 1)))},
		{"jupyter_client", func(n int) (samples, error) { return b.py.run(n, plotCode, "png") }},
	}
	s, err := b.alternate(2*b.rounds, 5, 3, paths)
	if err != nil {
		return []*figure{errFigure("2", "plot cell", err)}
	}
	return []*figure{pairedFigure("2", "plot cell (PNG), stdio", s[0], s[1], "jupyter_client", 1.15, cpu.note())}
}
