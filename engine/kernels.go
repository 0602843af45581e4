package engine

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// kernelEntry is the one websocket channel to one kernel, shared by every
// notebook on that kernel and by execute_code. The counters are guarded by
// Engine.mu.
type kernelEntry struct {
	id     string
	conn   *jupyter.KernelConn
	client *jupyter.Client // the server the kernel runs on

	users int  // notebooks in use on the kernel
	runs  int  // executions still collecting from it
	kept  bool // opened by execute_code(kernel_id): kept until the engine closes

	execs map[*execution]struct{} // runs in flight on the kernel

	// retired is closed when the channel, dropped from the registry, has
	// been retired (kernels.go); nil otherwise.
	retired chan struct{}
}

// attachKernel picks the kernel for a notebook being used and opens (or
// shares) its channel.
func (e *Engine) attachKernel(ctx context.Context, client *jupyter.Client, p, kernelID string, nb *notebook.Notebook) (*kernelEntry, error) {
	var existing *jupyter.Session
	for {
		sessions, err := client.ListSessions(ctx)
		if err != nil {
			return nil, err
		}
		existing = nil
		for i := range sessions {
			if sp, _ := cleanPath(sessions[i].Path); sp == p {
				existing = &sessions[i]
				break
			}
		}
		if existing == nil || kernelID != "" {
			break
		}
		// The path's kernel may be shutting down as its last user let go
		// of it: once that is settled, the sessions say whether it stays.
		if waited, err := e.waitRetired(ctx, existing.Kernel.ID); err != nil {
			return nil, err
		} else if !waited {
			break
		}
	}
	started := false // a kernel this call starts, ours to stop
	switch {
	case kernelID != "":
		if _, err := client.GetKernel(ctx, kernelID); err != nil {
			if jupyter.IsNotFound(err) {
				return nil, e.unknownKernel(ctx, client, kernelID)
			}
			return nil, err
		}
		// Bind the path to the kernel so that JupyterLab opens the notebook
		// on it too, unless the path already has a session of its own.
		if existing == nil {
			if _, err := client.CreateSession(ctx, p, "", kernelID); err != nil {
				e.log.Warn("binding a Jupyter session to the chosen kernel", "path", p, "kernel", kernelID, "err", err)
			}
		}
	case existing != nil:
		kernelID = existing.Kernel.ID
	default:
		started = true
		spec := kernelSpecName(nb)
		if spec != "" {
			if specs, err := client.KernelSpecs(ctx); err != nil || specs.Kernelspecs[spec].Name == "" {
				// The notebook asks for a kernel this server does not have:
				// the server's default kernel is the useful fallback.
				spec = ""
			}
		}
		s, err := client.CreateSession(ctx, p, spec, "")
		if err != nil {
			return nil, err
		}
		kernelID = s.Kernel.ID
		// This process started the kernel: a switch of server (and, at
		// the end, the process itself) may shut it down.
		e.mu.Lock()
		e.started[kernelID] = true
		e.mu.Unlock()
	}
	k, err := e.acquireKernel(ctx, client, kernelID, false)
	if err != nil {
		if started {
			e.mu.Lock()
			delete(e.started, kernelID)
			e.mu.Unlock()
		}
		if started && !e.cfg.KeepKernels {
			// No channel, no notebook: the kernel just started would run
			// for no one.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			defer cancel()
			if serr := client.ShutdownKernel(sctx, kernelID); serr != nil && !jupyter.IsNotFound(serr) {
				e.log.Warn("shutting down the kernel started for a notebook that could not be used", "kernel", kernelID, "err", serr)
			}
		}
		return nil, err
	}
	return k, nil
}

// unknownKernel is the error for a kernel id the server does not know. It
// does not list the ids the server has: on a shared server they are other
// users' kernels too, and an id is all it takes to run code on one.
func (e *Engine) unknownKernel(_ context.Context, _ *jupyter.Client, id string) error {
	return &UnknownKernelError{KernelID: id}
}

// acquireKernel returns the shared channel to kernel id, opening it when no
// one has it open. A notebook user counts toward keeping it open; keep marks
// a channel opened for execute_code, which stays until the engine closes.
func (e *Engine) acquireKernel(ctx context.Context, client *jupyter.Client, id string, keep bool) (*kernelEntry, error) {
	take := func(k *kernelEntry) {
		if keep {
			k.kept = true
		} else {
			k.users++
		}
	}
	for {
		e.mu.Lock()
		if k := e.kernels[id]; k != nil {
			take(k)
			e.mu.Unlock()
			return k, nil
		}
		e.mu.Unlock()
		// A channel being retired may shut its kernel down: wait for it,
		// then look again (the kernel may be gone, or used again).
		if waited, err := e.waitRetired(ctx, id); err != nil {
			return nil, err
		} else if !waited {
			break
		}
	}

	conn, err := client.ConnectKernel(ctx, id)
	if err != nil {
		if jupyter.IsNotFound(err) {
			return nil, e.unknownKernel(ctx, client, id)
		}
		return nil, err
	}
	conn.OnState(func(state string) {
		e.publish(event.Event{Type: event.EvKernelStatus, Kernel: &event.KernelEvent{ID: id, State: state, Lost: lostPhrase(conn)}})
	})
	e.watchLoss(id, conn)

	e.mu.Lock()
	defer e.mu.Unlock()
	if k := e.kernels[id]; k != nil {
		// Someone opened it meanwhile: share theirs.
		take(k)
		go conn.Close()
		return k, nil
	}
	k := &kernelEntry{id: id, conn: conn, client: client}
	take(k)
	e.kernels[id] = k
	return k, nil
}

// releaseKernel drops a notebook's hold on a kernel channel and, when
// nothing uses it any more, retires it: the channel is closed and a kernel
// this process started is shut down (see retireKernel). It reports whether
// the kernel was shut down.
func (e *Engine) releaseKernel(k *kernelEntry) bool {
	e.mu.Lock()
	k.users--
	closeIt := e.unusedLocked(k)
	e.mu.Unlock()
	return closeIt && e.retireKernel(k)
}

// unusedLocked removes k from the registry when nothing holds it and
// reports whether its channel should be closed.
func (e *Engine) unusedLocked(k *kernelEntry) bool {
	if k.users > 0 || k.runs > 0 || k.kept {
		return false
	}
	if e.kernels[k.id] == k {
		delete(e.kernels, k.id)
		// Until it is retired, a new channel to the kernel waits: the
		// kernel may be about to shut down (acquireKernel).
		k.retired = make(chan struct{})
		e.retiring[k.id] = k.retired
	}
	return true
}

// ListKernels lists the server's running kernels, with the display name of
// their kernel spec and the names of the notebooks in use on each.
func (e *Engine) ListKernels(ctx context.Context) ([]KernelInfo, error) {
	client := e.jupyterClient()
	ks, err := client.ListKernels(ctx)
	if err != nil {
		return nil, err
	}
	specs, err := client.KernelSpecs(ctx)
	if err != nil {
		e.log.Warn("listing kernel specs", "err", err)
		specs = &jupyter.KernelSpecs{}
	}
	onKernel := map[string][]string{}
	// The state the kernel last reported on our channel, where we have
	// one: it sees every status the kernel publishes at once, while
	// jupyter-server's own field can lag (it said "starting" for a kernel
	// busy with a run).
	seen := map[string]string{}
	e.mu.RLock()
	for n, d := range e.docs {
		onKernel[d.kernel.id] = append(onKernel[d.kernel.id], n)
	}
	for id, k := range e.kernels {
		if k.conn != nil {
			switch s := k.conn.State(); s {
			case "idle", "busy", "restarting", "dead":
				seen[id] = s
			}
		}
	}
	e.mu.RUnlock()
	infos := make([]KernelInfo, 0, len(ks))
	for _, k := range ks {
		spec := specs.Kernelspecs[k.Name].Spec
		display := spec.DisplayName
		if display == "" {
			display = k.Name
		}
		names := onKernel[k.ID]
		slices.Sort(names)
		state := k.ExecutionState
		if s, ok := seen[k.ID]; ok {
			state = s
		}
		infos = append(infos, KernelInfo{
			ID:           k.ID,
			Name:         k.Name,
			DisplayName:  display,
			Language:     spec.Language,
			State:        state,
			Connections:  k.Connections,
			LastActivity: k.LastActivity,
			Notebooks:    names,
		})
	}
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].ID < infos[j].ID })
	return infos, nil
}

// InterruptKernel interrupts a kernel (a human action from the workbench).
func (e *Engine) InterruptKernel(ctx context.Context, kernelID string) error {
	if kernelID == "" {
		return &RequiredError{Field: FieldKernelID}
	}
	client := e.jupyterClient()
	runs := e.markPersonInterrupt(kernelID)
	if err := client.InterruptKernel(ctx, kernelID); err != nil {
		unmarkPersonInterrupt(runs)
		if jupyter.IsNotFound(err) {
			return e.unknownKernel(ctx, client, kernelID)
		}
		return err
	}
	return nil
}

// lossOf names a channel's loss.
func lossOf(le *jupyter.LostError) event.KernelLoss {
	switch le.Loss {
	case jupyter.LossShutdown:
		return event.KernelShutDown
	case jupyter.LossGone:
		return event.KernelGone
	case jupyter.LossDied:
		return event.KernelDied
	case jupyter.LossRestarted:
		if le.Crashed {
			return event.KernelRestartedAfterCrash
		}
		return event.KernelRestartedOutside
	}
	return event.KernelGone
}

// watchLoss publishes the kernel's losses for the workbench.
func (e *Engine) watchLoss(id string, conn *jupyter.KernelConn) {
	conn.OnLost(func(le *jupyter.LostError) {
		what := lossOf(le)
		e.log.Warn("kernel lost", "kernel", id, "what", what.String())
		e.publish(event.Event{Type: event.EvKernelLost, Kernel: &event.KernelEvent{ID: id, State: conn.State(), Lost: what.String()}})
	})
}

// lostPhrase is the workbench's phrase for a channel's loss, or "".
func lostPhrase(conn *jupyter.KernelConn) string {
	var le *jupyter.LostError
	if errors.As(conn.Lost(), &le) {
		return lossOf(le).String()
	}
	return ""
}

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
