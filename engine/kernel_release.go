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
// It holds no lock through the shutdown: a channel being retired is in
// e.retiring (unusedLocked put it there), and a new channel to its kernel
// waits for it (acquireKernel), so the kernel is not shut down under a
// user who took it up meanwhile.
func (e *Engine) retireKernel(k *kernelEntry) bool {
	e.mu.RLock()
	ours := e.started[k.id] // attachKernel's mark; sessions.go resets it on a switch
	e.mu.RUnlock()
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return e.retire(ctx, k, ours).ShutDown
}

// retire closes k's channel and, when ours says this process started its
// kernel, shuts the kernel down unless another client is connected to it.
// A server switch calls it with the old server's marks.
func (e *Engine) retire(ctx context.Context, k *kernelEntry, ours bool) KernelFate {
	defer e.doneRetiring(k)
	f := KernelFate{Attached: !ours, Kept: ours && e.cfg.KeepKernels}
	if f.Attached || f.Kept || k.client == nil {
		k.conn.Close()
		return f
	}
	// Asked while our channel is still open, the server counts it among
	// the kernel's connections: any more are another client's (JupyterLab,
	// another agent's server on the same notebook), who still needs it.
	// A channel whose socket is down (or went down meanwhile) is not
	// counted: when in doubt the kernel is left running.
	mine := k.conn.Connected()
	info, err := k.client.GetKernel(ctx, k.id)
	mine = mine && k.conn.Connected()
	k.conn.Close()
	e.mu.RLock()
	other := e.kernels[k.id]
	hook := e.retireHook
	e.mu.RUnlock()
	switch {
	case jupyter.IsNotFound(err):
		e.forgetStarted(k.id)
		f.gone = true
		return f // gone already (shut down outside, or the server restarted)
	case err != nil:
		e.log.Warn("not shutting down a kernel this server started: cannot ask about it", "kernel", k.id, "err", err)
		f.Err = err
		return f
	case other != nil && other != k && other.client == k.client:
		// A channel opened meanwhile (acquireKernel waits for this one to
		// retire, so only a defensive check): someone uses the kernel again.
		f.InUse = true
		e.log.Info("leaving a kernel this server started running: a notebook uses it again", "kernel", k.id)
		return f
	case info.Connections > btoi(mine):
		f.InUse = true
		e.log.Info("leaving a kernel this server started running: another client is connected to it", "kernel", k.id, "connections", info.Connections)
		return f
	}
	if hook != nil {
		hook(k.id)
	}
	if err := k.client.ShutdownKernel(ctx, k.id); err != nil && !jupyter.IsNotFound(err) {
		e.log.Warn("shutting down a kernel this server started", "kernel", k.id, "err", err)
		f.Err = err
		return f
	}
	e.forgetStarted(k.id)
	e.log.Info("shut down a kernel this server started and no longer uses", "kernel", k.id)
	f.ShutDown = true
	return f
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// doneRetiring lets the channels waiting for k's retirement go on.
func (e *Engine) doneRetiring(k *kernelEntry) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if k.retired == nil {
		return
	}
	if e.retiring[k.id] == k.retired {
		delete(e.retiring, k.id)
	}
	close(k.retired)
	k.retired = nil
}

// waitRetired waits while a channel to kernel id is being retired,
// reporting whether it waited.
func (e *Engine) waitRetired(ctx context.Context, id string) (bool, error) {
	e.mu.RLock()
	ch := e.retiring[id]
	e.mu.RUnlock()
	if ch == nil {
		return false, nil
	}
	e.retireWaits.Add(1)
	select {
	case <-ch:
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	}
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
