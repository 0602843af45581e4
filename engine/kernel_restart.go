package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// A kernel that goes away under a notebook (shut down or restarted from
// outside, died) is named: the channel notices (engine/jupyter/lost.go),
// the engine says which kernel, which notebook and what happened in a
// typed error (KernelLostError), the workbench gets an event (watchLoss),
// and mcp/ words it for an agent. Restarting one is here: the person's or
// the agent's restart of a notebook's kernel, and the wait for a kernel
// Jupyter's restarter brings back.

// Restarted is the answer of RestartNotebook: the notebook, on its kernel.
// Replaced is the id of the kernel it had when that kernel no longer
// existed (the Jupyter server restarted, or someone shut it down) and a new
// one was started in its place; empty when the kernel itself restarted.
type Restarted struct {
	NotebookInfo
	Replaced string
}

// RestartNotebook restarts the notebook's kernel. Its state is lost; the
// channel stays open (the kernel keeps its id) and executions running on it
// end with the kernel-died error.
func (e *Engine) RestartNotebook(ctx context.Context, session, name string) (Restarted, error) {
	d, err := e.lookup(session, name)
	if err != nil {
		return Restarted{}, err
	}
	// Our own restart is no loss; the one it follows is over.
	conn := d.kernel.conn
	crashed := crashedLoss(conn)
	conn.BeginRestart()
	defer conn.EndRestart()
	if crashed {
		// Jupyter's restarter is bringing the crashed kernel back: its
		// new process is the fresh kernel asked for, and a restart
		// request crossing it can leave the kernel dead for good.
		if e.awaitRestarter(ctx, d) {
			return Restarted{NotebookInfo: e.info(d, session)}, nil
		}
	}
	if _, err := e.requestRestart(ctx, d.file.Client(), d.kernel); err != nil {
		// jupyter_server 1.x answers a restart of a kernel it does not
		// know (it restarted, or someone shut the kernel down) with a 500,
		// not a 404: ask about the kernel itself to tell the two apart.
		if !jupyter.IsNotFound(err) {
			if _, gerr := d.file.Client().GetKernel(ctx, d.kernel.id); jupyter.IsNotFound(gerr) {
				err = gerr
			}
		}
		if jupyter.IsNotFound(err) {
			info, err := e.replaceLostKernel(ctx, session, d)
			if err != nil {
				return Restarted{}, err
			}
			return Restarted{NotebookInfo: info, Replaced: d.kernel.id}, nil
		}
		return Restarted{}, err
	}
	// What was running died with the old process. A server without its
	// own autorestart says nothing of it on the channel, so the runs are
	// ended here rather than left waiting for a reply that cannot come.
	e.mu.Lock()
	var running []*execution
	for x := range d.kernel.execs {
		running = append(running, x)
	}
	e.mu.Unlock()
	for _, x := range running {
		x.abandon(jupyter.ErrKernelDied)
	}
	if err := waitKernelReady(ctx, d.kernel.conn); err != nil {
		return Restarted{}, err
	}
	return Restarted{NotebookInfo: e.info(d, session)}, nil
}

// replaceLostKernel gives a notebook whose kernel no longer exists (the
// Jupyter server restarted, or someone shut the kernel down) a fresh one:
// what restart_notebook promises. The notebook is released and used again
// under the same names and path, and every session keeps the current
// notebook it had.
func (e *Engine) replaceLostKernel(ctx context.Context, session string, d *document) (NotebookInfo, error) {
	e.mu.Lock()
	had := map[string]string{}
	for s, n := range e.current {
		had[s] = n
	}
	names := e.namesLocked(d)
	e.mu.Unlock()
	if len(names) == 0 {
		return NotebookInfo{}, &NoNotebookError{Name: d.name}
	}
	// Nobody is told: every session keeps its current notebook below. The
	// last name released lets the lost kernel go.
	for _, n := range names {
		if _, err := e.unuse(session, n, false); err != nil {
			return NotebookInfo{}, err
		}
	}
	var info NotebookInfo
	for i, n := range names {
		in, err := e.UseNotebook(ctx, UseRequest{Session: session, Name: n, Path: d.path, Mode: modeConnect})
		if err != nil {
			return NotebookInfo{}, fmt.Errorf("the kernel %s of notebook %q no longer exists, and starting a new one failed: %w", d.kernel.id, n, err)
		}
		if i == 0 {
			info = in
		}
	}
	e.mu.Lock()
	delete(e.current, session)
	for s, n := range had {
		if _, ok := e.docs[n]; ok {
			e.current[s] = n
		}
	}
	nd := e.docs[d.name]
	e.mu.Unlock()
	e.log.Info("replaced a lost kernel", "notebook", d.name, "old", d.kernel.id, "new", info.KernelID)
	if nd == nil {
		return info, nil
	}
	return e.info(nd, session), nil
}

// waitKernelReady returns once the kernel answers on the channel. The
// server answers a restart before the new process is reachable, and a
// request sent in that window can be lost without a word (the server
// replaces its connections to the kernel), so empty silent executions are
// sent until one comes back.
func waitKernelReady(ctx context.Context, conn *jupyter.KernelConn) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	wait := 500 * time.Millisecond
	for {
		run, err := conn.Execute(ctx, jupyter.ExecuteRequest{Code: "", Silent: true})
		if err != nil {
			return fmt.Errorf("waiting for kernel %s to come back: %w", conn.KernelID(), err)
		}
		select {
		case <-run.Done():
			if err := run.Err(); err != nil && !errors.Is(err, jupyter.ErrKernelDied) {
				return fmt.Errorf("waiting for kernel %s to come back: %w", conn.KernelID(), err)
			}
			if run.Err() == nil {
				return nil
			}
		case <-time.After(wait):
			wait = min(2*wait, 4*time.Second)
		case <-ctx.Done():
			return fmt.Errorf("kernel %s did not come back after the restart: %w", conn.KernelID(), ctx.Err())
		}
	}
}

// requestRestart asks the server to restart kernel k. Jupyter's restarter
// may be bringing a crashed kernel back at that very moment, and a request
// that crosses it can fail: it is tried again, for a while, as long as the
// kernel exists.
func (e *Engine) requestRestart(ctx context.Context, client *jupyter.Client, k *kernelEntry) (*jupyter.Kernel, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		kern, err := client.RestartKernel(ctx, k.id)
		if err == nil || jupyter.IsNotFound(err) || time.Now().After(deadline) {
			return kern, err
		}
		if _, gerr := client.GetKernel(ctx, k.id); gerr != nil {
			return nil, err
		}
		e.log.Info("restarting a kernel failed while it exists; trying again", "kernel", k.id, "err", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// crashedLoss reports whether the channel's kernel died and Jupyter's
// restarter is bringing it back.
func crashedLoss(conn *jupyter.KernelConn) bool {
	var le *jupyter.LostError
	return errors.As(conn.Lost(), &le) && le.Crashed
}

// awaitRestarter waits for the process Jupyter's restarter started in place
// of a crashed kernel to answer. It reports true when it did (the kernel is
// fresh), false when the kernel should be restarted after all.
func (e *Engine) awaitRestarter(ctx context.Context, d *document) bool {
	if err := waitKernelReady(ctx, d.kernel.conn); err != nil {
		e.log.Info("the restarter's kernel did not answer; restarting it", "kernel", d.kernel.id, "err", err)
		return false
	}
	return true
}
