package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// The group commit figures: many sessions writing one notebook at once,
// and reads of that notebook while they do.

const (
	writers       = 8   // sessions inserting at once
	writeCells    = 500 // cells of the notebook they insert into
	writeWindow   = 3 * time.Second
	readWindow    = 2 * time.Second
	writeNotebook = "gc-%s.ipynb"
)

// startHTTPWith is startHTTP with extra environment for the binary.
func (t *target) startHTTPWith(ctx context.Context, name string, env ...string) (*httpServer, error) {
	token := fmt.Sprintf("bench-%d-%s", os.Getpid(), name)
	log := t.logFile(name)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	p, err := harness.Launch(t.bin, append(harness.HTTPArgs(), t.jupyterArgs()...), append([]string{"MCP_TOKEN=" + token}, env...), log)
	if err == nil {
		if err = p.WaitEndpoint(wctx); err != nil {
			p.Stop(10 * time.Second)
		}
	}
	if err != nil {
		if log != nil {
			log.Close()
		}
		return nil, fmt.Errorf("%s over HTTP: %w", t.bin, err)
	}
	return &httpServer{endpoint: p.Endpoint, token: token, pid: p.Pid(), proc: p, log: log}, nil
}

// writeTarget is one server and its notebook for the write figures.
type writeTarget struct {
	name     string
	srv      *httpServer
	file     string
	sessions []*rawSession
}

// open starts the target's sessions on its notebook.
func (b *bench) openWriteTarget(name string, n int, env ...string) (*writeTarget, error) {
	srv, err := b.t.startHTTPWith(b.ctx, "gc-"+name, env...)
	if err != nil {
		return nil, err
	}
	w := &writeTarget{name: name, srv: srv, file: fmt.Sprintf(writeNotebook, name)}
	b.defer_(srv.close)
	if err := b.resetNotebook(w.file); err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		ctx, cancel := b.callCtx()
		r, err := srv.connectRaw(ctx)
		if err == nil {
			_, err = r.callTool(ctx, "use_notebook", map[string]any{
				"notebook_name": "gc", "notebook_path": w.file, "kernel_id": b.kernel})
		}
		cancel()
		if err != nil {
			return nil, err
		}
		w.sessions = append(w.sessions, r)
	}
	return w, nil
}

// resetNotebook writes the 500-cell notebook to file through the Contents
// API (the servers see it as an outside edit and reload it), so that every
// round starts from the same size.
func (b *bench) resetNotebook(file string) error {
	nb, err := bigNotebook(writeCells, 2500)
	if err != nil {
		return err
	}
	ctx, cancel := b.callCtx()
	defer cancel()
	_, err = b.jc.SaveNotebook(ctx, file, nb)
	return err
}

// burst runs fn in every session until the deadline (or stop closes); it
// returns the latencies of the calls and the time until the last answer.
func burst(ctx context.Context, ss []*rawSession, until time.Time, stop <-chan struct{}, fn func(r *rawSession, i, n int) error) (samples, time.Duration, error) {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		lat      samples
		firstErr error
	)
	t0 := time.Now()
	for i, r := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine samples
		calls:
			for n := 0; time.Now().Before(until); n++ {
				select {
				case <-stop:
					break calls
				default:
				}
				c0 := time.Now()
				if err := fn(r, i, n); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(c0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return lat, time.Since(t0), firstErr
}

// insertCall is insert_cell appending a small code cell.
func (b *bench) insertCall(r *rawSession, i, n int) error {
	ctx, cancel := b.callCtx()
	defer cancel()
	_, err := r.callTool(ctx, "insert_cell", map[string]any{
		"cell_index": -1, "cell_type": "code", "cell_source": fmt.Sprintf("x_%d_%d = %d", i, n, n), "notebook_name": "gc"})
	return err
}

// fig8 is group commit: 8 HTTP sessions inserting into one 500-cell
// notebook as fast as they get answers, calls/s, on a server with group
// commit (the default) against one with it off (every call saved on its
// own), rounds taking turns. Each round starts from the 500-cell file.
func (b *bench) fig8() []*figure {
	fail := func(err error) []*figure { return []*figure{errFigure("8", "group commit", err)} }
	on, err := b.openWriteTarget("on", writers)
	if err != nil {
		return fail(err)
	}
	off, err := b.openWriteTarget("off", writers, "JUPYTER_MCP_SERIAL_SAVES=1")
	if err != nil {
		return fail(err)
	}
	rounds := max(2, b.rounds/2)
	type tally struct {
		calls int
		took  time.Duration
		lat   samples
		cpu   time.Duration
	}
	res := map[string]*tally{"on": {}, "off": {}}
	for r := 0; r < rounds; r++ {
		for _, w := range []*writeTarget{on, off} {
			if err := b.resetNotebook(w.file); err != nil {
				return fail(err)
			}
			// One call per session outside the clock: the reload of
			// the reset file.
			if err := b.insertCall(w.sessions[0], 0, -1); err != nil {
				return fail(fmt.Errorf("%s: %w", w.name, err))
			}
			c0, _ := cpuTime(w.srv.pid)
			lat, took, err := burst(b.ctx, w.sessions, time.Now().Add(writeWindow), nil, b.insertCall)
			if err != nil {
				return fail(fmt.Errorf("group commit %s: %w", w.name, err))
			}
			c1, _ := cpuTime(w.srv.pid)
			t := res[w.name]
			t.calls += len(lat)
			t.took += took
			t.lat = append(t.lat, lat...)
			t.cpu += c1 - c0
		}
		progress("  round %d/%d: on %.1f calls/s, off %.1f calls/s", r+1, rounds,
			float64(res["on"].calls)/res["on"].took.Seconds(), float64(res["off"].calls)/res["off"].took.Seconds())
	}
	rate := func(t *tally) float64 { return float64(t.calls) / t.took.Seconds() }
	base := rate(res["off"])
	return []*figure{{
		ID: "8", Name: fmt.Sprintf("insert_cell, %d sessions, %d cells, group commit", writers, writeCells), Unit: "calls/s",
		Ours: rate(res["on"]), Baseline: &base, BaselineName: "group commit off",
		Samples: res["on"].calls, goal: ratioMin, limit: 4,
		Notes: fmt.Sprintf("p50 %.1f vs %.1f ms; server CPU per call %.2f vs %.2f ms; n=%s",
			ms(res["on"].lat.p50()), ms(res["off"].lat.p50()),
			ms(res["on"].cpu)/float64(max(1, res["on"].calls)), ms(res["off"].cpu)/float64(max(1, res["off"].calls)),
			counts(res["on"].calls, res["off"].calls)),
		Extra: map[string]float64{"p50_on_ms": ms(res["on"].lat.p50()), "p50_off_ms": ms(res["off"].lat.p50())},
	}}
}

// fig9 is reads during writes: read_cell and read_notebook (its default
// page of 20 cells) on the 500-cell notebook, one session each calling in a
// loop, in rounds with 8 other sessions inserting into the same notebook
// taking turns with rounds without; p50 with writes against without.
func (b *bench) fig9() []*figure {
	fail := func(err error) []*figure { return []*figure{errFigure("9", "reads during writes", err)} }
	w, err := b.openWriteTarget("read", writers+2)
	if err != nil {
		return fail(err)
	}
	readers, inserters := w.sessions[:2], w.sessions[2:]
	read := func(r *rawSession, i, n int) error {
		ctx, cancel := b.callCtx()
		defer cancel()
		var err error
		if i == 0 {
			_, err = r.callTool(ctx, "read_cell", map[string]any{"cell_index": (n * 37) % writeCells, "notebook_name": "gc"})
		} else {
			_, err = r.callTool(ctx, "read_notebook", map[string]any{"notebook_name": "gc", "start_index": (n * 20) % writeCells})
		}
		return err
	}
	// readBoth times each reader on its own.
	readBoth := func(until time.Time) (samples, samples, error) {
		var cell, page samples
		var mu sync.Mutex
		_, _, err := burst(b.ctx, readers, until, nil, func(r *rawSession, i, n int) error {
			c0 := time.Now()
			err := read(r, i, n)
			d := time.Since(c0)
			mu.Lock()
			if i == 0 {
				cell = append(cell, d)
			} else {
				page = append(page, d)
			}
			mu.Unlock()
			return err
		})
		return cell, page, err
	}
	rounds := max(2, b.rounds/2)
	var quietCell, quietPage, busyCell, busyPage samples
	writes := 0
	for r := 0; r < rounds; r++ {
		if err := b.resetNotebook(w.file); err != nil {
			return fail(err)
		}
		// The reset's reload, outside the clock.
		if err := read(readers[0], 0, 0); err != nil {
			return fail(err)
		}
		c, p, err := readBoth(time.Now().Add(readWindow))
		if err != nil {
			return fail(err)
		}
		quietCell, quietPage = append(quietCell, c...), append(quietPage, p...)

		stop := make(chan struct{})
		var wlat samples
		var werr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			wlat, _, werr = burst(b.ctx, inserters, time.Now().Add(time.Hour), stop, b.insertCall)
		}()
		// The readers start once the writers are under way.
		time.Sleep(200 * time.Millisecond)
		c, p, err = readBoth(time.Now().Add(readWindow))
		close(stop)
		<-done
		if err == nil {
			err = werr
		}
		if err != nil {
			return fail(err)
		}
		busyCell, busyPage = append(busyCell, c...), append(busyPage, p...)
		writes += len(wlat)
		progress("  round %d/%d: read_cell p50 %.2f ms quiet, %.2f ms with writes; read_notebook %.2f / %.2f ms; %d writes",
			r+1, rounds, ms(quietCell.p50()), ms(busyCell.p50()), ms(quietPage.p50()), ms(busyPage.p50()), writes)
	}
	note := fmt.Sprintf("%d inserts by %d other sessions during the reads", writes, len(inserters))
	return []*figure{
		pairedFigure("9a", "read_cell during writes, 500 cells", busyCell, quietCell, "no writes", 1.5, note),
		pairedFigure("9b", "read_notebook during writes, 500 cells", busyPage, quietPage, "no writes", 1.5, note),
	}
}
