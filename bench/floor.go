package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// fig10 is figure 1's `1+1` against a stock jupyter-server that someone
// else started (the --jupyter-url case): Nagle on in the server, so what
// keeps us on the floor is the client alone. On that server's kernel it
// pairs our binary over stdio with jupyter_client straight over ZeroMQ and
// with our raw channel; the same pairs on the managed server run in the same
// rounds for reference.
func (b *bench) fig10() []*figure {
	const code = "1+1"
	fail := func(err error) []*figure {
		return []*figure{errFigure("10", "execute_code 1+1, stock jupyter-server", err)}
	}
	progress("starting a stock %s", stockServer)
	st, err := startStock(b.ctx, b.work, b.root)
	if err != nil {
		return fail(err)
	}
	defer st.stop()
	jc, err := jupyter.NewClient(st.url, st.token, jupyter.Options{Timeout: 2 * time.Minute})
	if err != nil {
		return fail(err)
	}
	ctx, cancel := b.callCtx()
	k, err := jc.StartKernel(ctx, "python3")
	cancel()
	if err != nil {
		return fail(err)
	}
	defer func() {
		ctx, cancel := b.callCtx()
		defer cancel()
		_ = jc.ShutdownKernel(ctx, k.ID)
	}()
	pyLog, err := os.Create(filepath.Join(b.work, "stock-baseline.log"))
	if err != nil {
		return fail(err)
	}
	defer pyLog.Close()
	py, err := startBaseline(b.jup.Python, b.work, pyLog)
	if err != nil {
		return fail(err)
	}
	defer py.close()
	if err := py.connect(filepath.Join(st.runtime, "kernel-"+k.ID+".json")); err != nil {
		return fail(err)
	}
	ctx, cancel = b.callCtx()
	raw, err := jc.ConnectKernel(ctx, k.ID)
	cancel()
	if err != nil {
		return fail(err)
	}
	defer raw.Close()
	t := &target{bin: b.t.bin, jupyterURL: st.url, jupyterToken: st.token, logDir: b.work}
	srv, err := t.startStdio(b.ctx, "stock-stdio")
	if err != nil {
		return fail(err)
	}
	defer srv.close()

	var cpu, stockCPU cpuUse
	paths := []path{
		{"stock stdio", cpuOf(srv.pid, &cpu, timed(b.executeOn(srv.cs, k.ID, code, 0)))},
		{"stock jupyter_client", func(n int) (samples, error) { return py.run(n, code, "text") }},
		{"stock raw", cpuOf(st.pid, &stockCPU, timed(b.rawExecuteOn(raw, code, "text")))},
		{"managed stdio", timed(b.executeVia(b.stdio.cs, code, 0))},
		{"managed jupyter_client", func(n int) (samples, error) { return b.py.run(n, code, "text") }},
		{"managed raw", timed(b.rawExecute(code, "text"))},
	}
	s, err := b.alternate(4*b.rounds, 10, 10, paths)
	if err != nil {
		return fail(err)
	}
	ours, base, rawS, mOurs, mBase, mRaw := s[0], s[1], s[2], s[3], s[4], s[5]
	f10a := pairedFigure("10a", "execute_code 1+1, stdio, stock server", ours, base, "jupyter_client", 1.15, cpu.note())
	f10b := pairedFigure("10b", "raw channel 1+1, stock server", rawS, base, "jupyter_client", 0,
		fmt.Sprintf("; stock server CPU %.0f us/call", stockCPU.perCall()))
	f10b.goal = info
	f10c := pairedFigure("10c", "execute_code 1+1, stdio, managed server", mOurs, mBase, "jupyter_client", 0,
		"(reference: TCP_NODELAY server, figure 1a's pair)")
	f10c.goal = info
	// The raw channel on both servers: what Nagle in the stock server
	// costs our channel is 10b's ratio against this one's.
	f10d := pairedFigure("10d", "raw channel 1+1, managed server", mRaw, mBase, "jupyter_client", 0, "(reference for 10b)")
	f10d.goal = info
	return []*figure{f10a, f10b, f10c, f10d}
}
