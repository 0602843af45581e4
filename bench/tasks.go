package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp"
)

// Long runs as MCP tasks (2026-07-28, io.modelcontextprotocol/tasks):
// what declaring the extension costs a call that ends before it would
// become a task, and what finished tasks keep in memory.

// extTasks is the tasks extension's name, as a client declares it.
const extTasks = "io.modelcontextprotocol/tasks"

// figTasks is figure 13.
func (b *bench) figTasks() []*figure {
	return []*figure{b.fig13a(), b.fig13b()}
}

// fig13a: execute_code 1+1 over HTTP at 2026-07-28 (the Go SDK's default),
// from a client that declared the tasks extension and from one that did
// not, taking turns on the same server and kernel. A short call of a
// tasks client runs apart from its request and is waited for up to the
// task threshold: that must cost nothing measurable.
func (b *bench) fig13a() *figure {
	const id, name = "13a", "execute_code 1+1, HTTP 2026-07-28, tasks client"
	ctx, cancel := b.callCtx()
	defer cancel()
	connect := func(client string, caps *sdk.ClientCapabilities) (*sdk.ClientSession, error) {
		tr := &sdk.StreamableClientTransport{Endpoint: b.http.endpoint, HTTPClient: b.http.httpClient()}
		cs, err := harness.NewClient(client, &sdk.ClientOptions{Capabilities: caps}).Connect(ctx, tr, nil)
		if err == nil && cs.InitializeResult().ProtocolVersion != "2026-07-28" {
			cs.Close()
			err = fmt.Errorf("the client speaks %s", cs.InitializeResult().ProtocolVersion)
		}
		return cs, err
	}
	caps := &sdk.ClientCapabilities{}
	caps.AddExtension(extTasks, nil)
	tasks, err := connect(benchClient+"-tasks", caps)
	if err != nil {
		return errFigure(id, name, err)
	}
	defer tasks.Close()
	// The same client options but for the extension: what is measured
	// is the declaration, not a client configured otherwise.
	plain, err := connect(benchClient+"-2026", &sdk.ClientCapabilities{})
	if err != nil {
		return errFigure(id, name, err)
	}
	defer plain.Close()
	var cpuT, cpuP cpuUse
	s, err := b.alternate(4*b.rounds, 10, 10, []path{
		{"no extension", cpuOf(b.http.pid, &cpuP, timed(b.executeVia(plain, "1+1", 0)))},
		{"tasks client", cpuOf(b.http.pid, &cpuT, timed(b.executeVia(tasks, "1+1", 0)))},
	})
	if err != nil {
		return errFigure(id, name, err)
	}
	return pairedFigure(id, name, s[1], s[0], "same call, no extension", 1.05,
		fmt.Sprintf("server CPU %.0f vs %.0f us/call", cpuT.perCall(), cpuP.perCall()))
}

// taskCalls is how many finished tasks fig13b keeps, and taskLines how
// many lines of output each has.
const (
	taskCalls = 200
	taskLines = 100
)

// fig13b: the heap that 200 finished tasks hold, each with ~100 lines of
// output, beyond what the same 200 calls leave behind as a session's plain
// calls (the engine's event history, which both fill alike): an
// engine and server in this process on the bench's Jupyter, every call of
// the tasks client made a task (threshold 1 ms), heap measured after a
// garbage collection once all have ended.
func (b *bench) fig13b() *figure {
	const id, name = "13b", "memory of 200 finished tasks"
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	eng, err := engine.New(ctx, engine.Config{JupyterURL: b.jup.URL, JupyterToken: b.jup.Token})
	if err != nil {
		return errFigure(id, name, err)
	}
	defer eng.Close()
	srv := mcp.New(eng, mcp.Options{TaskAfter: time.Millisecond})
	connect := func(client string, caps *sdk.ClientCapabilities, version string) (*sdk.ClientSession, func(), error) {
		sr, cw := io.Pipe()
		cr, sw := io.Pipe()
		sctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { _ = srv.RunIO(sctx, sr, sw); close(done) }()
		cs, err := harness.NewClient(client, &sdk.ClientOptions{Capabilities: caps}).Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		closeIt := func() {
			if cs != nil {
				cs.Close()
			}
			cw.Close()
			stop()
			<-done
		}
		if err != nil {
			closeIt()
		}
		return cs, closeIt, err
	}
	caps := &sdk.ClientCapabilities{}
	caps.AddExtension(extTasks, nil)
	tasksCS, closeTasks, err := connect(benchClient+"-tasks", caps, "")
	if err != nil {
		return errFigure(id, name, err)
	}
	defer closeTasks()
	// The baseline is a session's client (2025-11-25): a 2026-07-28 call
	// runs apart from its request too, and its run keeps its result a
	// minute for a late retry, which would hide what a task keeps.
	plainCS, closePlain, err := connect(benchClient+"-session", nil, harness.ProtocolVersion)
	if err != nil {
		return errFigure(id, name, err)
	}
	defer closePlain()
	code := fmt.Sprintf("print('\\n'.join('line %%d of a finished task' %% i for i in range(%d)))", taskLines)
	finished := eng.Bus().SubscribeTo(4*taskCalls, event.EvCallFinished)
	defer finished.Close()
	// runAll makes n calls and waits until the engine has recorded n
	// finished calls (a task's call ends after its request).
	runAll := func(cs *sdk.ClientSession, n int) error {
		for i := 0; i < n; i++ {
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": code, "kernel_id": b.kernel}})
			cancel()
			if err != nil {
				return err
			}
		}
		deadline := time.After(2 * time.Minute)
		for seen := 0; seen < n; {
			select {
			case ev := <-finished.C():
				if ev.Call != nil && ev.Call.Tool == "execute_code" {
					if ev.Call.IsError {
						return fmt.Errorf("execute_code failed: %.300s", ev.Call.Text)
					}
					seen++
				}
			case <-deadline:
				return fmt.Errorf("%d of %d calls finished", seen, n)
			}
		}
		return nil
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// Warm both paths up (kernel channel, buffers, the SDK's sessions).
	if err := runAll(plainCS, 5); err != nil {
		return errFigure(id, name, err)
	}
	if err := runAll(tasksCS, 5); err != nil {
		return errFigure(id, name, err)
	}
	h0 := heap()
	if err := runAll(plainCS, taskCalls); err != nil {
		return errFigure(id, name, err)
	}
	h1 := heap()
	if err := runAll(tasksCS, taskCalls); err != nil {
		return errFigure(id, name, err)
	}
	h2 := heap()
	plainGrowth := int64(h1) - int64(h0)
	tasksGrowth := int64(h2) - int64(h1)
	kept := max(0, tasksGrowth-plainGrowth)
	mbKept := float64(kept) / (1 << 20)
	runtime.KeepAlive(srv)
	return &figure{ID: id, Name: name, Unit: "MB", Ours: mbKept, Samples: taskCalls, goal: atMost, limit: 8,
		Notes: fmt.Sprintf("heap after GC, %d tasks of %d output lines each: +%.0f KB as tasks, +%.0f KB for the same calls plain (2025-11-25 session); %.1f KB a task",
			taskCalls, taskLines, float64(tasksGrowth)/1024, float64(plainGrowth)/1024, float64(kept)/1024/taskCalls)}
}
