package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// Running code: the calls that run a notebook's cell or code on a kernel,
// send it, wait for the run (or its timeout, or the caller's
// cancellation), and turn how it ended into the call's answer.

// Execution statuses beyond the kernel's ok, error and aborted.
const (
	statusRunning     = "running"     // ExecResult: the timeout passed first
	statusDied        = "died"        // the kernel died during the run
	statusInterrupted = "interrupted" // ExecEvent: a cancelled call or the person interrupted it
)

// timeout applies the default and the cap to a requested timeout.
func (e *Engine) timeout(t time.Duration) time.Duration {
	if t <= 0 {
		t = e.cfg.DefaultTimeout
	}
	return min(t, e.cfg.MaxTimeout)
}

// ExecuteCell runs a code cell and writes its outputs into the notebook.
//
// The cell's old outputs are cleared first (and saved). Outputs are written
// into the cell as they arrive and saved about every second and at the end.
// When the timeout passes first, the result holds what arrived so far with
// StillRunning set, and the outputs keep being collected into the notebook
// until the run ends. When ctx is cancelled, the kernel is interrupted and
// the partial result (Status "aborted") comes back with an error wrapping
// ctx.Err(). A kernel that dies or goes away during the run is a
// *KernelLostError, unless it died and kernel.auto-restart is on: then the
// kernel is restarted and the result has KernelRestarted set.
func (e *Engine) ExecuteCell(ctx context.Context, session, name string, ref CellRef, opts ExecOptions) (ExecResult, error) {
	// Clearing the outputs before a run is not kept for undo: the run's
	// outputs follow it at once. The source that runs is the one the
	// clearing found (and, for a held call, checked against the one shown)
	// under the notebook's writeMu, not one read again.
	d, m, err := commitTo(withoutUndo(ctx), e, session, name, func(on onNotebook) *clearOutputs {
		return &clearOutputs{onNotebook: on, ref: ref, forRun: true}
	})
	if err != nil {
		return ExecResult{}, err
	}
	return e.runCell(ctx, d, m.cell.ID, m.cell.Index, m.cell.Source, opts)
}

// InsertExecuteCell inserts a code cell at index (-1 appends) and runs it.
func (e *Engine) InsertExecuteCell(ctx context.Context, session, name string, index int, source string, opts ExecOptions) (ExecResult, error) {
	if err := checkCode(source); err != nil {
		return ExecResult{}, err
	}
	d, m, err := commitTo(ctx, e, session, name, func(on onNotebook) *insertCell {
		return &insertCell{onNotebook: on, index: index, cellType: notebook.Code, source: source, run: true}
	})
	if err != nil {
		return ExecResult{}, err
	}
	return e.runCell(ctx, d, m.inserted.ID, m.inserted.Index, source, opts)
}

// runCell executes code as the cell cellID of d.
func (e *Engine) runCell(ctx context.Context, d *document, cellID string, index int, code string, opts ExecOptions) (ExecResult, error) {
	x, err := e.startExecution(ctx, d.kernel, d, d.file.Client(), cellID, index, code, opts)
	if err != nil {
		return ExecResult{}, err
	}
	res, err := e.await(ctx, x, opts)
	res.Notebook = d.name
	nb := d.model()
	if i := nb.IndexOf(cellID); i >= 0 {
		res.Cell = cellInfo(i, nb.Cells[i])
	} else {
		// Deleted while it ran: describe it as it was.
		res.Cell = CellInfo{Index: index, ID: cellID, Type: notebook.Code, Source: code, ExecutionCount: res.ExecutionCount, Outputs: res.Outputs}
	}
	if err != nil {
		return res.ExecResult, err
	}
	if err := e.runFailure(d.kernel, d, d.file.Client(), index, cellID, res); err != nil {
		return ExecResult{}, err
	}
	return res.ExecResult, nil
}

// ExecuteCode runs code on the session's sandbox (use_sandbox), or on
// opts.KernelID, or on the current notebook's kernel; nothing is saved.
// Timeouts, cancellation and dead kernels behave as in ExecuteCell.
func (e *Engine) ExecuteCode(ctx context.Context, session, code string, opts ExecOptions) (ExecResult, error) {
	if err := checkCode(code); err != nil {
		return ExecResult{}, err
	}
	// Where it runs is chosen once and, for a held call, checked against
	// where its person was shown it would run; it runs there, never on a
	// target looked up again (a sandbox chosen since, bound.go).
	var t codeTarget
	err := e.asShown(ctx, func() error {
		var err error
		if t, err = e.codeTarget(session, opts.KernelID); err != nil {
			return err
		}
		return stillShown(ctx, t.bound())
	})
	if err != nil {
		return ExecResult{}, err
	}
	if t.sandbox != nil {
		return e.executeOnSandbox(ctx, t.sandbox, code, opts)
	}
	var (
		k      *kernelEntry
		d      = t.doc
		client *jupyter.Client
	)
	if d == nil {
		client = e.jupyterClient()
		k, err = e.acquireKernel(ctx, client, t.kernelID, true)
		if err != nil {
			return ExecResult{}, err
		}
	} else {
		k, client = d.kernel, d.file.Client()
	}
	x, err := e.startExecution(ctx, k, nil, client, "", -1, code, opts)
	if err != nil {
		return ExecResult{}, e.named(k, d, err)
	}
	res, err := e.await(ctx, x, opts)
	if err != nil {
		return res.ExecResult, err
	}
	if err := e.runFailure(k, d, client, -1, "", res); err != nil {
		return ExecResult{}, err
	}
	return res.ExecResult, nil
}

// startExecution sends the code to the kernel; the outputs are collected
// as the channel delivers them.
func (e *Engine) startExecution(ctx context.Context, k *kernelEntry, d *document, client *jupyter.Client, cellID string, index int, code string, opts ExecOptions) (*execution, error) {
	if e.closed.Load() {
		return nil, errClosing
	}
	if err := checkCode(code); err != nil {
		return nil, err
	}
	e.mu.Lock()
	k.runs++
	e.mu.Unlock()
	x := &execution{
		e:       e,
		id:      "x" + strconv.FormatUint(e.execSeq.Add(1), 10),
		doc:     d,
		cellID:  cellID,
		index:   index,
		kernel:  k,
		client:  client,
		started: time.Now(),
		callID:  opts.CallID,
		ready:   make(chan struct{}),
		done:    make(chan struct{}),
	}
	// The run outlives the call when the timeout passes, so it must not be
	// tied to the caller's context.
	_, err := k.conn.ExecuteFunc(context.WithoutCancel(ctx), jupyter.ExecuteRequest{
		Code:         code,
		StoreHistory: true,
		AllowStdin:   false, // input() fails at once instead of hanging the kernel
		// Every call is one execution, not a batch: an error in one must not
		// abort the requests other calls (or other notebooks on the same
		// kernel) have queued behind it, as stop_on_error would.
		StopOnError: false,
	}, jupyter.RunHandler{Message: x.handle, End: x.runEnded})
	if err != nil {
		x.startFailed = true
		close(x.ready)
		e.endRun(k)
		// A kernel that is gone (shut down, or the Jupyter server
		// restarted) or lost otherwise is named with what happened.
		if lost := sendError(k, d, err); lost != nil {
			return nil, lost
		}
		return nil, fmt.Errorf("sending the code to kernel %s: %w", k.id, err)
	}
	if d != nil {
		d.setRunning(x)
	}
	e.mu.Lock()
	if k.execs == nil {
		k.execs = map[*execution]struct{}{}
	}
	k.execs[x] = struct{}{}
	e.mu.Unlock()
	e.execs.Add(1)
	e.publish(event.Event{Type: event.EvExecStarted, Exec: &event.ExecEvent{
		ID: x.id, Notebook: x.doc.notebookName(), CellID: cellID, KernelID: k.id, CallID: x.callID, Code: code,
	}})
	close(x.ready)
	return x, nil
}

// endRun drops a run's hold on its kernel channel.
func (e *Engine) endRun(k *kernelEntry) {
	e.mu.Lock()
	k.runs--
	closeIt := e.unusedLocked(k)
	e.mu.Unlock()
	if closeIt {
		e.retireKernel(k)
	}
}

// endRunAsync is endRun for a finished run: it may run on the kernel
// channel's reader goroutine, which cannot close its own channel (Close
// waits for the reader), so an unused channel is closed on the side. The
// engine's Close still waits for it.
func (e *Engine) endRunAsync(k *kernelEntry) {
	e.mu.Lock()
	k.runs--
	closeIt := e.unusedLocked(k)
	e.mu.Unlock()
	if closeIt {
		e.execs.Add(1)
		go func() {
			defer e.execs.Done()
			e.retireKernel(k)
		}()
	}
}

// execOutcome is an ExecResult plus the run's failure, if any.
type execOutcome struct {
	ExecResult
	err error
}

// await waits for the run, its timeout or the caller's cancellation, and
// reports progress meanwhile (only from here, so never after it returns).
func (e *Engine) await(ctx context.Context, x *execution, opts ExecOptions) (execOutcome, error) {
	timeout := e.timeout(opts.Timeout)
	start := time.Now()
	deadline := start.Add(timeout)
	// One timer serves both the timeout and the progress reports: most runs
	// end before either is due.
	var nextTick time.Time
	progress := opts.Progress != nil && opts.ProgressInterval > 0
	due := deadline
	if progress {
		nextTick = start.Add(opts.ProgressInterval)
		if nextTick.Before(due) {
			due = nextTick
		}
	}
	timer := time.NewTimer(time.Until(due))
	defer timer.Stop()
	for {
		select {
		case <-x.done:
			return x.outcome(false), nil
		case <-ctx.Done():
			return x.abort(ctx)
		case <-timer.C:
			now := time.Now()
			if !now.Before(deadline) {
				if e.capabilityEnabled(CapInterruptOnTimeout) {
					finished := x.interruptAndWait(ctx, "interrupting a kernel whose run outlasted its call's timeout")
					out := x.outcome(!finished)
					out.Timeout, out.Interrupted = timeout, true
					return out, nil
				}
				// Save what arrived so far, so that the notebook shows what
				// this call returns.
				x.flush()
				out := x.outcome(true)
				out.Timeout = timeout
				return out, nil
			}
			if progress && !now.Before(nextTick) {
				x.mu.Lock()
				outs := x.materializeLocked()
				x.mu.Unlock()
				opts.Progress(ExecProgress{Elapsed: time.Since(x.started), Timeout: timeout, Outputs: len(outs),
					Latest: output.Tail(outs, ProgressLines, ProgressLineWidth)})
				for !nextTick.After(now) {
					nextTick = nextTick.Add(opts.ProgressInterval)
				}
			}
			due = deadline
			if progress && nextTick.Before(due) {
				due = nextTick
			}
			timer.Reset(time.Until(due))
		}
	}
}

// checkCode refuses code the kernel would never answer.
func checkCode(code string) error {
	if i := strings.IndexByte(code, 0); i >= 0 {
		return &CodeNULError{Offset: i}
	}
	return nil
}

// runFailure is the one way a run that ended (the call was not cancelled)
// becomes the error its call returns: nil for a run that ended normally, or
// whose kernel auto-restart replaced; a kernel that died or went away
// during it named (*KernelLostError); a missing reply named; any other
// failure (the channel lost) wrapped with what was running. d is the
// notebook whose kernel k is, nil for a kernel named by id; index and
// cellID name the cell that ran, when one did.
func (e *Engine) runFailure(k *kernelEntry, d *document, client *jupyter.Client, index int, cellID string, res execOutcome) error {
	if res.err == nil || res.KernelRestarted {
		return nil
	}
	var le *jupyter.LostError
	switch {
	case errors.As(res.err, &le):
		return e.named(k, d, &KernelLostError{KernelID: k.id, What: lossOf(le), During: true, Index: index, CellID: cellID})
	case errors.Is(res.err, jupyter.ErrKernelDied):
		// The server said the process died, or a restart here ended the
		// run. The channel still names the loss to the next call.
		return &KernelLostError{KernelID: k.id, Notebook: d.notebookName(), What: event.KernelDied, During: true, Index: index, CellID: cellID}
	case errors.Is(res.err, jupyter.ErrNoReply):
		return &NoReplyError{KernelID: k.id, Notebook: d.notebookName()}
	case cellID != "":
		return fmt.Errorf("running cell %d of notebook %q: %w", index, d.notebookName(), whyDisconnected(client, res.err))
	}
	return fmt.Errorf("running code on kernel %s: %w", k.id, whyDisconnected(client, res.err))
}

// named gives err, when it is a lost kernel's, the notebook d (nil: none)
// and, for a kernel run on without a notebook, settles the loss.
func (e *Engine) named(k *kernelEntry, d *document, err error) error {
	var lost *KernelLostError
	if errors.As(err, &lost) {
		lost.Notebook = d.notebookName()
		if d == nil {
			e.settleLoss(k, lost)
		}
	}
	return err
}

// sendError names why code could not be sent to kernel k, when the kernel
// is the reason.
func sendError(k *kernelEntry, d *document, err error) error {
	lost := &KernelLostError{KernelID: k.id, Notebook: d.notebookName()}
	var le *jupyter.LostError
	switch {
	case errors.As(err, &le):
		lost.What = lossOf(le)
	case jupyter.IsNotFound(err):
		lost.What = event.KernelGone
	default:
		return nil
	}
	return lost
}

// settleLoss runs after a call on a kernel with no notebook (execute_code
// with a kernel id) was told of its loss: that caller has been told, so a
// kernel restarted outside takes code again, and one that is gone is
// forgotten, so that naming it again finds it unknown.
func (e *Engine) settleLoss(k *kernelEntry, lost *KernelLostError) {
	if lost.What.Exists() {
		k.conn.Acknowledge()
		return
	}
	e.mu.Lock()
	drop := e.kernels[k.id] == k && k.kept && k.users == 0 && k.runs == 0
	if drop {
		delete(e.kernels, k.id)
	}
	e.mu.Unlock()
	if drop {
		k.conn.Close()
	}
}
