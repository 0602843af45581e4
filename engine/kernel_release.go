package engine

import (
	"context"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// Kernels this process started are its to stop. A notebook's kernel that
// use_notebook started (a new Jupyter session for the path) is shut down
// when the last thing holding it lets go (the notebook is released and no
// execution still collects from it) and, for those still held, when the
// engine closes. A kernel the engine attached to (by id, or the kernel of a
// Jupyter session the path already had) belongs to someone else and is
// left alone, and so is a kernel another client is connected to when we let
// go of it. Config.KeepKernels keeps them all.

// shutdownTimeout bounds one kernel shutdown: Jupyter waits for the
// kernel to exit (and kills it after a few seconds) before it answers.
const shutdownTimeout = 30 * time.Second

// retireKernel closes a channel nothing holds any more and shuts its kernel
// down when this process started it, reporting whether it did. It is the
// one place a released kernel goes: notebooks released (unuse_notebook),
// runs ending on a released kernel, and the engine closing all end here.
func (e *Engine) retireKernel(k *kernelEntry) bool {
	e.mu.RLock()
	ours := e.started[k.id] // attachKernel's mark; sessions.go resets it on a switch
	e.mu.RUnlock()
	if !ours || e.cfg.KeepKernels || k.client == nil {
		k.conn.Close()
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	// Asked while our channel is still open, the server counts it among
	// the kernel's connections: any more are another client's (JupyterLab,
	// another agent's server on the same notebook), who still needs it.
	info, err := k.client.GetKernel(ctx, k.id)
	k.conn.Close()
	switch {
	case jupyter.IsNotFound(err):
		e.forgetStarted(k.id)
		return false // gone already (shut down outside, or the server restarted)
	case err != nil:
		e.log.Warn("not shutting down a kernel this server started: cannot ask about it", "kernel", k.id, "err", err)
		return false
	case info.Connections > 1:
		e.log.Info("leaving a kernel this server started running: another client is connected to it", "kernel", k.id, "connections", info.Connections)
		return false
	}
	if err := k.client.ShutdownKernel(ctx, k.id); err != nil && !jupyter.IsNotFound(err) {
		e.log.Warn("shutting down a kernel this server started", "kernel", k.id, "err", err)
		return false
	}
	e.forgetStarted(k.id)
	e.log.Info("shut down a kernel this server started and no longer uses", "kernel", k.id)
	return true
}

// retireAll retires kernels at once (the engine closing): shutdowns take a
// moment each, and an exit should not take their sum.
func (e *Engine) retireAll(kernels map[string]*kernelEntry) {
	var wg sync.WaitGroup
	for _, k := range kernels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.retireKernel(k)
		}()
	}
	wg.Wait()
}

// forgetStarted drops a kernel that is gone from the ones this process
// started.
func (e *Engine) forgetStarted(id string) {
	e.mu.Lock()
	delete(e.started, id)
	e.mu.Unlock()
}
