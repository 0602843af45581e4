package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

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
	// been retired (kernel_release.go); nil otherwise.
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
		e.publish(Event{Type: EvKernelStatus, Kernel: &KernelEvent{ID: id, State: state, Lost: lostPhrase(conn)}})
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
	e.mu.RLock()
	for _, d := range e.docs {
		onKernel[d.kernel.id] = append(onKernel[d.kernel.id], d.name)
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
		infos = append(infos, KernelInfo{
			ID:           k.ID,
			Name:         k.Name,
			DisplayName:  display,
			Language:     spec.Language,
			State:        k.ExecutionState,
			Connections:  k.Connections,
			LastActivity: k.LastActivity,
			Notebooks:    names,
		})
	}
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].ID < infos[j].ID })
	return infos, nil
}

// RestartNotebook restarts the notebook's kernel. Its state is lost; the
// channel stays open (the kernel keeps its id) and executions running on it
// end with the kernel-died error.
func (e *Engine) RestartNotebook(ctx context.Context, session, name string) (NotebookInfo, error) {
	d, err := e.lookup(session, name)
	if err != nil {
		return NotebookInfo{}, err
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
			return e.info(d, session), nil
		}
	}
	if _, err := e.restartKernel(ctx, d.client, d.kernel); err != nil {
		// jupyter_server 1.x answers a restart of a kernel it does not
		// know (it restarted, or someone shut the kernel down) with a 500,
		// not a 404: ask about the kernel itself to tell the two apart.
		if !jupyter.IsNotFound(err) {
			if _, gerr := d.client.GetKernel(ctx, d.kernel.id); jupyter.IsNotFound(gerr) {
				err = gerr
			}
		}
		if jupyter.IsNotFound(err) {
			return e.replaceLostKernel(ctx, session, d)
		}
		return NotebookInfo{}, err
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
		return NotebookInfo{}, err
	}
	return e.info(d, session), nil
}

// replaceLostKernel gives a notebook whose kernel no longer exists (the
// Jupyter server restarted, or someone shut the kernel down) a fresh one:
// what restart_notebook promises. The notebook is released and used again
// under the same name and path, and every session keeps the current
// notebook it had.
func (e *Engine) replaceLostKernel(ctx context.Context, session string, d *document) (NotebookInfo, error) {
	e.mu.Lock()
	had := map[string]string{}
	for s, n := range e.current {
		had[s] = n
	}
	e.mu.Unlock()
	// Nobody is told: every session keeps its current notebook below.
	if _, err := e.unuse(session, d.name, false); err != nil {
		return NotebookInfo{}, err
	}
	info, err := e.UseNotebook(ctx, session, d.name, d.path, modeConnect, "")
	if err != nil {
		return NotebookInfo{}, fmt.Errorf("the kernel %s of notebook %q no longer exists, and starting a new one failed: %w", d.kernel.id, d.name, err)
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
