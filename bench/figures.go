package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// fig3 is start-up: process start to the initialize answer over stdio with
// Jupyter already running; then the binary's size and its idle memory.
func (b *bench) fig3() []*figure {
	const launches = 15
	var s samples
	var idle int64
	for i := 0; i < launches+1; i++ {
		d, r, err := b.startOnce(i == launches)
		if err != nil {
			return []*figure{errFigure("3", "start-up", err)}
		}
		// The first launch pays for cold page caches; it is not timed.
		if i > 0 && i < launches+1 {
			s = append(s, d)
		}
		if r > 0 {
			idle = r
		}
	}
	var size int64
	if st, err := os.Stat(b.t.bin); err == nil {
		size = st.Size()
	}
	return []*figure{
		{ID: "3a", Name: "start-up to initialize, stdio", Unit: "ms", Ours: ms(s.p50()), Samples: len(s),
			goal: atMost, limit: 50,
			Notes: fmt.Sprintf("p50 of %d launches; max %.1f ms; Jupyter already running (--jupyter-url)", len(s), ms(s.pct(1)))},
		{ID: "3b", Name: "binary size", Unit: "MB", Ours: mb(size), goal: info, Notes: filepath.Base(b.t.bin)},
		{ID: "3c", Name: "idle RSS, stdio", Unit: "MB", Ours: mb(idle), goal: atMost, limit: 30,
			Notes: "VmRSS 1 s after initialize"},
	}
}

// startOnce launches the binary, times it to the initialize answer, and
// when asked measures its resident memory once it has settled.
func (b *bench) startOnce(measure bool) (time.Duration, int64, error) {
	cmd := exec.Command(b.t.bin, append([]string{"--transport", "stdio"}, b.t.jupyterArgs()...)...)
	log := b.t.logFile("startup")
	if log != nil {
		defer log.Close()
		cmd.Stderr = log
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + harness.ProtocolVersion +
		`","capabilities":{},"clientInfo":{"name":"jupyter-mcp-bench","version":"1"}}}` + "\n"
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		in.Close()
		waitOrKill(cmd, waited(cmd), 5*time.Second)
	}()
	if _, err := io.WriteString(in, initialize); err != nil {
		return 0, 0, err
	}
	rd := bufio.NewReader(out)
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			return 0, 0, fmt.Errorf("no initialize answer: %w%s", err, tail(log))
		}
		if bytes.Contains(line, []byte(`"id":1`)) {
			if !bytes.Contains(line, []byte(`"result"`)) {
				return 0, 0, fmt.Errorf("initialize failed: %s", line)
			}
			break
		}
	}
	d := time.Since(t0)
	var r int64
	if measure {
		if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
			return 0, 0, err
		}
		time.Sleep(time.Second)
		if r, err = rss(cmd.Process.Pid); err != nil {
			return 0, 0, err
		}
	}
	go func() { _, _ = io.Copy(io.Discard, rd) }()
	return d, r, nil
}

// fig4 is insert_cell and edit_cell_source on a 2,000-cell notebook of about
// 5 MB, each saved before it answers, against one raw Contents API save of
// the same notebook (to another file, so the two never touch each other).
func (b *bench) fig4() []*figure {
	nb, err := os.ReadFile(filepath.Join(b.root, "raw.ipynb"))
	if err != nil {
		return []*figure{errFigure("4", "notebook edits", err)}
	}
	ctx, cancel := b.callCtx()
	defer cancel()
	if _, err := callTool(ctx, b.stdio.cs, "use_notebook", map[string]any{
		"notebook_name": "big", "notebook_path": "big.ipynb", "kernel_id": b.kernel}); err != nil {
		return []*figure{errFigure("4", "notebook edits", err)}
	}
	insert := func() error {
		ctx, cancel := b.callCtx()
		defer cancel()
		_, err := callTool(ctx, b.stdio.cs, "insert_cell", map[string]any{
			"cell_index": -1, "cell_type": "code", "cell_source": "x = 1", "notebook_name": "big"})
		return err
	}
	from, to := markerA, markerB
	edit := func() error {
		ctx, cancel := b.callCtx()
		defer cancel()
		_, err := callTool(ctx, b.stdio.cs, "edit_cell_source", map[string]any{
			"cell_index": editCell, "old_string": from, "new_string": to, "notebook_name": "big"})
		from, to = to, from
		return err
	}
	save := func() error {
		ctx, cancel := b.callCtx()
		defer cancel()
		_, err := b.jc.SaveNotebook(ctx, "raw.ipynb", nb)
		return err
	}
	s, err := b.alternate(b.rounds, 3, 1, []path{
		{"insert_cell", timed(insert)},
		{"contents save", timed(save)},
		{"edit_cell_source", timed(edit)},
	})
	if err != nil {
		return []*figure{errFigure("4", "notebook edits", err)}
	}
	size := fmt.Sprintf("(%.1f MB notebook)", mb(int64(len(nb))))
	return []*figure{
		pairedFigure("4a", "insert_cell, 2,000 cells", s[0], s[1], "contents save", 1.5, size),
		pairedFigure("4b", "edit_cell_source, 2,000 cells", s[2], s[1], "contents save", 1.5, size),
	}
}

// fig5 is read_cell throughput over HTTP: 8 sessions calling as fast as
// they get answers, on this machine's cores (the client shares them).
func (b *bench) fig5() []*figure {
	const sessions = 8
	const warm, window = time.Second, 5 * time.Second
	fail := func(err error) []*figure { return []*figure{errFigure("5", "read_cell throughput", err)} }
	var ss []*rawSession
	for i := 0; i < sessions; i++ {
		ctx, cancel := b.callCtx()
		r, err := b.http.connectRaw(ctx)
		if err == nil {
			_, err = r.callTool(ctx, "use_notebook", map[string]any{
				"notebook_name": "reader", "notebook_path": "read.ipynb", "kernel_id": b.kernel})
		}
		cancel()
		if err != nil {
			return fail(err)
		}
		ss = append(ss, r)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		lat      samples
		firstErr error
	)
	start := time.Now()
	measureFrom, measureTo := start.Add(warm), start.Add(warm+window)
	for i, r := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine samples
			for n := i * 250; ; n++ {
				t0 := time.Now()
				if t0.After(measureTo) || ctx.Err() != nil {
					break
				}
				_, err := r.callTool(ctx, "read_cell", map[string]any{"cell_index": n % 2000, "notebook_name": "reader"})
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
				if t0.After(measureFrom) && time.Now().Before(measureTo) {
					mine = append(mine, time.Since(t0))
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	// CPU use over the measured window says who was busy: the server, or
	// the client that shares its cores.
	time.Sleep(time.Until(measureFrom))
	srv0, _ := cpuTime(b.http.pid)
	self0, _ := cpuTime(os.Getpid())
	time.Sleep(time.Until(measureTo))
	srv1, _ := cpuTime(b.http.pid)
	self1, _ := cpuTime(os.Getpid())
	wg.Wait()
	if firstErr != nil {
		return fail(firstErr)
	}
	rate := float64(len(lat)) / window.Seconds()
	srvCores, cliCores := (srv1-srv0).Seconds()/window.Seconds(), (self1-self0).Seconds()/window.Seconds()
	return []*figure{{
		ID: "5", Name: "read_cell throughput, HTTP, 8 sessions", Unit: "calls/s", Ours: rate, Samples: len(lat),
		goal: atLeast, limit: 3000,
		Notes: fmt.Sprintf("p50 %.2f ms, p99 %.2f ms; server used %.2f cores, client %.2f", ms(lat.p50()), ms(lat.pct(0.99)),
			srvCores, cliCores),
		Extra: map[string]float64{"p50_ms": ms(lat.p50()), "p99_ms": ms(lat.pct(0.99)),
			"server_cores": srvCores, "client_cores": cliCores,
			"server_cpu_us_per_call": 1e6 * (srv1 - srv0).Seconds() / float64(len(lat))},
	}}
}

// fig6 is memory with ten 2,000-cell notebooks in use in one fresh process.
func (b *bench) fig6() []*figure {
	fail := func(err error) []*figure { return []*figure{errFigure("6", "RSS, 10 notebooks in use", err)} }
	nb, err := os.ReadFile(filepath.Join(b.root, "read.ipynb"))
	if err != nil {
		return fail(err)
	}
	srv, err := b.t.startStdio(b.ctx, "memory")
	if err != nil {
		return fail(err)
	}
	defer srv.close()
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("mem-%d.ipynb", i)
		if err := os.WriteFile(filepath.Join(b.root, name), nb, 0o644); err != nil {
			return fail(err)
		}
		ctx, cancel := b.callCtx()
		_, err := callTool(ctx, srv.cs, "use_notebook", map[string]any{
			"notebook_name": fmt.Sprintf("mem%d", i), "notebook_path": name, "kernel_id": b.kernel})
		if err == nil {
			_, err = callTool(ctx, srv.cs, "read_cell", map[string]any{"cell_index": 1999, "notebook_name": fmt.Sprintf("mem%d", i)})
		}
		cancel()
		if err != nil {
			return fail(err)
		}
	}
	time.Sleep(time.Second)
	r, err := rss(srv.pid)
	if err != nil {
		return fail(err)
	}
	hwm, _ := procStatus(srv.pid, "VmHWM")
	return []*figure{{ID: "6", Name: "RSS, 10 notebooks x 2,000 cells", Unit: "MB", Ours: mb(r), goal: atMost, limit: 250,
		Notes: fmt.Sprintf("%.1f MB of notebook JSON in use; peak (VmHWM) %.1f MB", 10*mb(int64(len(nb))), mb(hwm))}}
}
