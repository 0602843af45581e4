package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// floodCode prints 200,000 lines: the TUI streams them while it shows the
// execution live.
const floodCode = "for i in range(200000): print(i)"

// floodRig is one HTTP server under the flood: a session that floods one
// kernel, and a session that times small calls meanwhile on another.
type floodRig struct {
	name   string
	srv    *httpServer
	flood  *sdk.ClientSession
	probe  *sdk.ClientSession
	floodK string
	probeK string

	probes  samples // all of them, for the progress line
	reads   samples // the read_cell probes
	execs   samples // the execute_code probes
	floods  samples
	cpu     time.Duration // CPU the server used during the floods
	rssEach []int64       // RSS after each flood
	peak    int64         // highest RSS sampled during the floods
}

// fig7 compares the binary with --tui (inside tmux) against the same binary
// without it, under the same flood, in alternating rounds.
func (b *bench) fig7() []*figure {
	fail := func(err error) []*figure { return []*figure{errFigure("7", "TUI under a flood", err)} }
	if _, err := exec.LookPath("tmux"); err != nil {
		return fail(errors.New("tmux is not installed: the TUI needs a terminal"))
	}
	session := fmt.Sprintf("jupyter-mcp-bench-%d", os.Getpid())
	tuiSrv, err := b.t.startTUI(b.ctx, session)
	if err != nil {
		return fail(err)
	}
	defer tuiSrv.close()
	plainSrv, err := b.t.startHTTP(b.ctx, "http-flood")
	if err != nil {
		return fail(err)
	}
	defer plainSrv.close()

	// Four kernels: a kernel broadcasts its output to every connection, so
	// each server floods and probes kernels that the other does not watch.
	kernels := make([]string, 4)
	var wg sync.WaitGroup
	var kerr error
	var kmu sync.Mutex
	for i := range kernels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := b.callCtx()
			defer cancel()
			k, err := b.jc.StartKernel(ctx, "python3")
			kmu.Lock()
			defer kmu.Unlock()
			if err != nil {
				kerr = err
				return
			}
			kernels[i] = k.ID
		}()
	}
	wg.Wait()
	if kerr != nil {
		return fail(kerr)
	}
	defer func() {
		for _, k := range kernels {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = b.jc.ShutdownKernel(ctx, k)
			cancel()
		}
	}()

	rigs := []*floodRig{
		{name: "tui", srv: tuiSrv, floodK: kernels[0], probeK: kernels[1]},
		{name: "plain", srv: plainSrv, floodK: kernels[2], probeK: kernels[3]},
	}
	for _, r := range rigs {
		if err := b.prepareRig(r); err != nil {
			return fail(fmt.Errorf("%s: %w", r.name, err))
		}
		defer r.flood.Close()
		defer r.probe.Close()
	}

	const floods = 5
	for round := 0; round < floods; round++ {
		for _, r := range rigs {
			if err := b.floodOnce(r); err != nil {
				return fail(fmt.Errorf("%s: %w", r.name, err))
			}
			progress("  flood %d/%d %s: flood call %.0f ms, probe p50 so far %.2f ms (%d calls), RSS %.1f MB",
				round+1, floods, r.name, ms(r.floods[len(r.floods)-1]), ms(r.probes.p50()), len(r.probes), mb(r.rssEach[len(r.rssEach)-1]))
		}
	}

	// The comparison means something only if the TUI was really drawing.
	screen, _ := tmux(session, "capture-pane", "-p", "-t", session).Output()
	if !strings.Contains(string(screen), "execute_code") {
		return fail(fmt.Errorf("the TUI screen does not show the calls:\n%s", screen))
	}

	tui, plain := rigs[0], rigs[1]
	first, last := tui.rssEach[0], tui.rssEach[len(tui.rssEach)-1]
	floodBase := ms(plain.floods.p50())
	// The two kinds of probe differ tenfold in latency, so each gets its
	// own row: a p50 of the mix would land between the two clusters.
	return []*figure{
		pairedFigure("7a", "read_cell during a flood, TUI on", tui.reads, plain.reads, "TUI off", 1.10,
			"(second session)"),
		pairedFigure("7b", "execute_code 1+1 during a flood, TUI on", tui.execs, plain.execs, "TUI off", 1.10,
			"(second session, another kernel)"),
		{ID: "7c", Name: "the flood call itself, TUI on", Unit: "ms", Ours: ms(tui.floods.p50()), Baseline: &floodBase,
			BaselineName: "TUI off", Samples: len(tui.floods), goal: info,
			Notes: fmt.Sprintf("p50 of %d floods of 200,000 lines each; server CPU during them %.2f s vs %.2f s",
				len(tui.floods), tui.cpu.Seconds(), plain.cpu.Seconds())},
		// Bounded: after the last flood the TUI holds no more than 20%
		// more than after the first, so memory does not grow with output.
		{ID: "7d", Name: "TUI RSS after 5 floods", Unit: "MB", Ours: mb(last), goal: atMost, limit: 1.2 * mb(first),
			Notes: fmt.Sprintf("bounded: <= 1.2x the %.1f MB after flood 1; peak %.1f MB; TUI off: %.1f MB",
				mb(first), mb(tui.peak), mb(plain.rssEach[len(plain.rssEach)-1]))},
	}
}

// prepareRig opens the two sessions and warms both kernels and the notebook
// the probe reads.
func (b *bench) prepareRig(r *floodRig) error {
	ctx, cancel := b.callCtx()
	defer cancel()
	var err error
	if r.flood, err = r.srv.connectSDK(ctx); err != nil {
		return err
	}
	if r.probe, err = r.srv.connectSDK(ctx); err != nil {
		return err
	}
	if _, err := callTool(ctx, r.probe, "use_notebook", map[string]any{
		"notebook_name": "probe", "notebook_path": "read.ipynb", "kernel_id": r.probeK}); err != nil {
		return err
	}
	for i := 0; i < 5; i++ {
		if err := r.probeOnce(ctx, i); err != nil {
			return err
		}
	}
	_, err = callTool(ctx, r.flood, "execute_code", map[string]any{"code": "print('warm')", "kernel_id": r.floodK})
	return err
}

// probeOnce is one small call: read_cell and execute_code take turns.
func (r *floodRig) probeOnce(ctx context.Context, i int) error {
	if i%2 == 0 {
		_, err := callTool(ctx, r.probe, "read_cell", map[string]any{"cell_index": i % 2000, "notebook_name": "probe"})
		return err
	}
	res, err := callTool(ctx, r.probe, "execute_code", map[string]any{"code": "1+1", "kernel_id": r.probeK})
	if err == nil && !strings.Contains(harness.Text(res), "2") {
		err = fmt.Errorf("execute_code did not return 2: %.300s", harness.Text(res))
	}
	return err
}

// floodOnce runs one flood and times small calls in the other session until
// it ends; it samples the server's memory meanwhile.
func (b *bench) floodOnce(r *floodRig) error {
	ctx, cancel := b.callCtx()
	defer cancel()
	done := make(chan error, 1)
	t0 := time.Now()
	go func() {
		res, err := callTool(ctx, r.flood, "execute_code", map[string]any{"code": floodCode, "kernel_id": r.floodK, "timeout": 120})
		if err != nil {
			done <- err
			return
		}
		// The answer is cut at --max-output; either its last line or the
		// note about the cut must be there.
		if text := harness.Text(res); !strings.Contains(text, "199999") && !strings.Contains(text, "output cut") {
			err = fmt.Errorf("the flood's answer is incomplete: %.300s", text)
		}
		done <- err
	}()
	var floodErr error
	lastSample := time.Time{}
	cpu0, err := cpuTime(r.srv.pid)
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		select {
		case floodErr = <-done:
			r.floods = append(r.floods, time.Since(t0))
			if floodErr != nil {
				return floodErr
			}
			cpu1, err := cpuTime(r.srv.pid)
			if err != nil {
				return err
			}
			r.cpu += cpu1 - cpu0
			// Let the TUI catch up with what it was sent before the
			// memory reading.
			time.Sleep(500 * time.Millisecond)
			m, err := rss(r.srv.pid)
			if err != nil {
				return err
			}
			r.rssEach = append(r.rssEach, m)
			r.peak = max(r.peak, m)
			return nil
		default:
		}
		p0 := time.Now()
		if err := r.probeOnce(ctx, i); err != nil {
			return err
		}
		d := time.Since(p0)
		r.probes = append(r.probes, d)
		if i%2 == 0 {
			r.reads = append(r.reads, d)
		} else {
			r.execs = append(r.execs, d)
		}
		if time.Since(lastSample) > 100*time.Millisecond {
			if m, err := rss(r.srv.pid); err == nil {
				r.peak = max(r.peak, m)
			}
			lastSample = time.Now()
		}
	}
}
