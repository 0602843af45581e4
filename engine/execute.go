package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// flushInterval is how often a running cell's outputs are written into its
// notebook and saved: often enough that a reader sees progress, rarely
// enough that a chatty cell does not turn into a save storm.
const flushInterval = time.Second

// abortGrace is how long a cancelled call waits for the interrupted kernel
// to report the end of the run, so that the KeyboardInterrupt is part of
// what it returns.
const abortGrace = 5 * time.Second

// Execution statuses beyond the kernel's ok, error and aborted.
const (
	statusRunning     = "running"     // ExecResult: the timeout passed first
	statusDied        = "died"        // the kernel died during the run
	statusInterrupted = "interrupted" // ExecEvent: a cancelled call or the person interrupted it
)

// stdinHint explains the StdinNotImplementedError that input() raises: cells
// run without stdin so that no execution ever waits for a person to type.
const stdinHint = "Note: input() and getpass() cannot be answered here: code runs without stdin, so the kernel raised StdinNotImplementedError at once. Put the value in the code instead.\n"

// execution is one execute_request in flight and what it produced. The
// kernel channel hands the run's messages to handle and its end to runEnded,
// on the channel's reader goroutine, so that an output reaches the waiting
// call without passing through goroutines of its own. The calling method
// waits on done, on its timeout or on its context, and may return before
// the run ends, in which case outputs keep being written into the notebook
// (by a timer every flushInterval, and once at the end).
type execution struct {
	e       *Engine
	id      string
	doc     *document // nil for execute_code
	cellID  string
	index   int // the cell's index when the run started
	kernel  *kernelEntry
	client  *jupyter.Client
	started time.Time
	callID  string

	// ready is closed once the execution is registered (or failed to
	// start: then startFailed is set). The channel may deliver messages
	// before the request's write returns; they wait for it, so that
	// EvExecStarted comes first and finishing finds the run registered.
	ready       chan struct{}
	startFailed bool

	done       chan struct{} // closed once the run ended and its outputs are saved
	finishOnce sync.Once

	mu           sync.Mutex // guards the fields below
	outs         []*outputState
	live         output.Live // the outputs as observers see them arrive
	pendingClear bool        // clear_output(wait=True): clear before the next output
	count        *int
	version      int // bumped by every change of outputs or count
	status       string
	err          error // ErrKernelDied, ErrDisconnected, ...
	restarted    bool
	interrupted  bool
	byPerson     bool        // the person interrupted the kernel at the workbench (person_interrupt.go)
	ended        bool        // the run finished or was abandoned: later messages are dropped
	flushTimer   *time.Timer // a pending timed flush, or nil

	flushMu sync.Mutex // serializes notebook writes of this run
	flushed int        // the version last saved
}

// outputState is one output being built. Stream text accumulates in a
// builder, so a cell printing megabytes in small chunks costs linear time.
type outputState struct {
	out       notebook.Output
	text      *strings.Builder // stream outputs
	displayID string
}

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
// ctx.Err(). A dead kernel is a *KernelDiedError, unless kernel.auto-restart
// is on: then the kernel is restarted and the result has KernelRestarted set.
func (e *Engine) ExecuteCell(ctx context.Context, session, name string, ref CellRef, opts ExecOptions) (ExecResult, error) {
	d, err := e.lookup(session, name)
	if err != nil {
		return ExecResult{}, err
	}
	var (
		cellID, code string
		index        int
	)
	// Clearing the outputs before a run is not kept for undo: the run's
	// outputs follow it at once.
	err = e.mutate(withoutUndo(ctx), d, session, ref.ID == "", func(nb *notebook.Notebook) ([]NotebookEvent, error) {
		i, err := resolveCell(nb, d.name, ref, RoleCell)
		if err != nil {
			return nil, err
		}
		c := nb.Cells[i]
		if c.Type != notebook.Code {
			return nil, Userf("cell %d (id %q) is a %s cell; only code cells can be executed", i, c.ID, c.Type)
		}
		if err := checkCode(c.Source); err != nil {
			return nil, err
		}
		cellID, code, index = c.ID, c.Source, i
		if len(c.Outputs) == 0 && c.ExecutionCount == nil {
			return nil, errNoChange
		}
		nc := *c
		nc.Outputs = []notebook.Output{}
		nc.ExecutionCount = nil
		nb.Cells[i] = &nc
		return []NotebookEvent{{Op: OpClearOutput, Index: i, Cells: []CellSnapshot{e.snapshotCell(d.name, &nc)}}}, nil
	})
	if err != nil {
		return ExecResult{}, err
	}
	return e.runCell(ctx, d, cellID, index, code, opts)
}

// InsertExecuteCell inserts a code cell at index (-1 appends) and runs it.
func (e *Engine) InsertExecuteCell(ctx context.Context, session, name string, index int, source string, opts ExecOptions) (ExecResult, error) {
	if err := checkCode(source); err != nil {
		return ExecResult{}, err
	}
	_, cell, err := e.InsertCell(ctx, session, name, index, notebook.Code, source)
	if err != nil {
		return ExecResult{}, err
	}
	d, err := e.lookup(session, name)
	if err != nil {
		return ExecResult{}, err
	}
	return e.runCell(ctx, d, cell.ID, cell.Index, source, opts)
}

// runCell executes code as the cell cellID of d.
func (e *Engine) runCell(ctx context.Context, d *document, cellID string, index int, code string, opts ExecOptions) (ExecResult, error) {
	x, err := e.startExecution(ctx, d.kernel, d, d.client, cellID, index, code, opts)
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
	if err := runError(d.kernel, d, index, cellID, res); err != nil {
		return ExecResult{}, err
	}
	if errors.Is(res.err, jupyter.ErrKernelDied) && !res.KernelRestarted {
		return ExecResult{}, &KernelDiedError{KernelID: d.kernel.id, Notebook: d.name, Index: index, CellID: cellID}
	}
	if res.err != nil && !errors.Is(res.err, jupyter.ErrKernelDied) {
		return ExecResult{}, fmt.Errorf("running cell %d of notebook %q: %w", index, d.name, whyDisconnected(d.client, res.err))
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
	if e.sandboxes != nil {
		res, ok, err := e.executeOnSandbox(ctx, session, code, opts)
		if ok {
			return res, err
		}
	}
	var (
		k      *kernelEntry
		d      *document
		client *jupyter.Client
		err    error
	)
	if opts.KernelID != "" {
		client = e.jupyterClient()
		k, err = e.acquireKernel(ctx, client, opts.KernelID, true)
		if err != nil {
			return ExecResult{}, err
		}
	} else {
		// Without a notebook the error says there is no current notebook;
		// the caller knows what else could name a kernel.
		d, err = e.lookup(session, "")
		if err != nil {
			return ExecResult{}, err
		}
		k, client = d.kernel, d.client
	}
	x, err := e.startExecution(ctx, k, nil, client, "", -1, code, opts)
	if err != nil {
		var lost *KernelLostError
		if errors.As(err, &lost) {
			lost.Notebook = docName(d)
			if d == nil {
				e.settleLoss(k, lost)
			}
		}
		return ExecResult{}, err
	}
	res, err := e.await(ctx, x, opts)
	if err != nil {
		return res.ExecResult, err
	}
	if err := runError(k, d, -1, "", res); err != nil {
		var lost *KernelLostError
		if errors.As(err, &lost) && d == nil {
			e.settleLoss(k, lost)
		}
		return ExecResult{}, err
	}
	if errors.Is(res.err, jupyter.ErrKernelDied) && !res.KernelRestarted {
		return ExecResult{}, &KernelDiedError{KernelID: k.id}
	}
	if res.err != nil && !errors.Is(res.err, jupyter.ErrKernelDied) {
		return ExecResult{}, fmt.Errorf("running code on kernel %s: %w", k.id, whyDisconnected(client, res.err))
	}
	return res.ExecResult, nil
}

// startExecution sends the code to the kernel; the outputs are collected
// as the channel delivers them.
func (e *Engine) startExecution(ctx context.Context, k *kernelEntry, d *document, client *jupyter.Client, cellID string, index int, code string, opts ExecOptions) (*execution, error) {
	if e.closed.Load() {
		return nil, errors.New("the server is shutting down")
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
	e.publish(Event{Type: EvExecStarted, Exec: &ExecEvent{
		ID: x.id, Notebook: x.docName(), CellID: cellID, KernelID: k.id, CallID: x.callID, Code: code,
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

func (x *execution) docName() string {
	if x.doc == nil {
		return ""
	}
	return x.doc.name
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
				// Save what arrived so far, so that the notebook shows what
				// this call returns.
				x.flush()
				return x.outcome(true), nil
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

// abort interrupts the kernel for a cancelled call and returns what the run
// produced, with an error wrapping the context's.
func (x *execution) abort(ctx context.Context) (execOutcome, error) {
	x.mu.Lock()
	x.interrupted = true
	x.mu.Unlock()
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := x.client.InterruptKernel(ictx, x.kernel.id); err != nil {
		x.e.log.Warn("interrupting a kernel for a cancelled call", "kernel", x.kernel.id, "err", err)
	}
	finished := true
	select {
	case <-x.done:
	case <-time.After(abortGrace):
		finished = false
		x.flush()
	}
	out := x.outcome(!finished)
	out.Status = "aborted"
	return out, fmt.Errorf("the execution was cancelled and kernel %s was interrupted: %w", x.kernel.id, context.Cause(ctx))
}

// outcome builds the result from what the run has produced so far.
func (x *execution) outcome(stillRunning bool) execOutcome {
	x.mu.Lock()
	defer x.mu.Unlock()
	outs := x.materializeLocked()
	status := x.status
	if stillRunning {
		status = statusRunning
	}
	for _, o := range outs {
		if o.OutputType == notebook.Error && o.EName == "StdinNotImplementedError" {
			outs = append(outs, notebook.Output{OutputType: notebook.Stream, Name: "stderr", Text: stdinHint})
			break
		}
	}
	return execOutcome{
		ExecResult: ExecResult{
			ExecID:              x.id,
			KernelID:            x.kernel.id,
			Outputs:             outs,
			ExecutionCount:      x.count,
			Status:              status,
			StillRunning:        stillRunning,
			Elapsed:             time.Since(x.started),
			KernelRestarted:     x.restarted,
			InterruptedByPerson: x.byPerson && status != statusRunning,
		},
		err: x.err,
	}
}

// materializeLocked returns the outputs as nbformat outputs. The slice is
// new; stream texts share the builders' memory, which only ever grows.
func (x *execution) materializeLocked() []notebook.Output {
	outs := make([]notebook.Output, len(x.outs))
	for i, st := range x.outs {
		outs[i] = st.out
		if st.text != nil {
			outs[i].Text = st.text.String()
		}
	}
	return outs
}

// runEnded is the channel telling that the run is over. A run of
// execute_code that ended normally is finished right here: there is nothing
// to save, and the waiting call wakes without another goroutine in
// between. Anything else (saving a notebook, restarting a dead kernel) may
// block, so it is done on a goroutine of its own rather than on the
// channel's reader.
func (x *execution) runEnded(reply *jupyter.ExecuteReply, err error) {
	<-x.ready
	if x.startFailed {
		return
	}
	if err == nil && x.unaskedInterrupt(reply) {
		// Jupyter interrupts a kernel before it shuts it down or restarts
		// it: wait a moment for word of that, so the result names it.
		lost := x.kernel.conn.LostSignal()
		go func() {
			select {
			case <-lost:
				err = x.kernel.conn.Lost()
			case <-time.After(lostGrace):
			}
			x.finish(reply, err)
		}()
		return
	}
	if x.doc == nil && err == nil {
		x.finish(reply, nil)
		return
	}
	go x.finish(reply, err)
}

// unaskedInterrupt reports whether the run ended in a KeyboardInterrupt
// that no call here asked for.
func (x *execution) unaskedInterrupt(reply *jupyter.ExecuteReply) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return reply != nil && reply.EName == "KeyboardInterrupt" && !x.interrupted && !x.byPerson
}

// abandon ends a run that can never end on its own: its kernel was
// restarted under it, and a server without autorestart sends no word of
// that on the channel. err says why.
func (x *execution) abandon(err error) {
	<-x.ready
	if x.startFailed {
		return
	}
	go x.finish(nil, err)
}

// finish records how the run ended, saves the outputs, and wakes the
// waiting call. Only the first call does anything: the run may be both
// abandoned and ended by the channel.
func (x *execution) finish(reply *jupyter.ExecuteReply, err error) {
	x.finishOnce.Do(func() { x.finishRun(reply, err) })
}

func (x *execution) finishRun(reply *jupyter.ExecuteReply, err error) {
	defer x.e.execs.Done()
	defer x.e.endRunAsync(x.kernel)
	defer func() {
		x.e.mu.Lock()
		delete(x.kernel.execs, x)
		x.e.mu.Unlock()
	}()
	status := ""
	x.mu.Lock()
	x.ended = true
	if x.flushTimer != nil {
		x.flushTimer.Stop()
		x.flushTimer = nil
	}
	switch {
	case err != nil:
		x.err = err
		x.status = "aborted"
		var lost *jupyter.LostError
		if errors.Is(err, jupyter.ErrKernelDied) || errors.As(err, &lost) {
			x.status = statusDied
		}
	default:
		x.status = reply.Status
		if x.count == nil && reply.ExecutionCount > 0 {
			n := reply.ExecutionCount
			x.count = &n
			x.version++
		}
	}
	status = x.status
	if x.interrupted || (x.byPerson && status == "error") {
		status = statusInterrupted
	}
	x.mu.Unlock()
	if errors.Is(err, jupyter.ErrKernelDied) && x.e.capabilityEnabled(CapKernelAutoRestart) {
		x.restartKernel()
	}
	x.flush()
	if x.doc != nil {
		x.doc.doneRunning(x)
	}
	x.e.publish(Event{Type: EvExecFinished, Exec: &ExecEvent{
		ID: x.id, Notebook: x.docName(), CellID: x.cellID, KernelID: x.kernel.id, CallID: x.callID,
		Status: status, Elapsed: time.Since(x.started),
	}})
	close(x.done)
}

// restartKernel replaces a kernel that died during the run
// (kernel.auto-restart). A server with its own autorestart may already be
// restarting it: then our request fails while it is at it, and the kernel
// comes back by itself, which the loop notices.
func (x *execution) restartKernel() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	crashed := crashedLoss(x.kernel.conn)
	x.kernel.conn.BeginRestart()
	defer x.kernel.conn.EndRestart()
	if crashed && waitKernelReady(ctx, x.kernel.conn) == nil {
		// Jupyter's restarter already put a fresh process in its place; a
		// restart request crossing it could leave the kernel dead.
		x.mu.Lock()
		x.restarted = true
		x.mu.Unlock()
		return
	}
	for {
		_, err := x.client.RestartKernel(ctx, x.kernel.id)
		if err == nil {
			break
		}
		if k, gerr := x.client.GetKernel(ctx, x.kernel.id); gerr == nil && (k.ExecutionState == "idle" || k.ExecutionState == "busy") {
			break
		}
		select {
		case <-ctx.Done():
			x.e.log.Warn("restarting a dead kernel (kernel.auto-restart)", "kernel", x.kernel.id, "err", err)
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
	if err := waitKernelReady(ctx, x.kernel.conn); err != nil {
		x.e.log.Warn("waiting for a restarted kernel (kernel.auto-restart)", "kernel", x.kernel.id, "err", err)
	}
	x.mu.Lock()
	x.restarted = true
	x.mu.Unlock()
}

// flush writes the outputs into the cell and saves the notebook, unless
// nothing changed since the last flush. A cell deleted meanwhile gets
// nothing; a failed save is retried by the next flush.
func (x *execution) flush() {
	if x.doc == nil {
		return
	}
	x.flushMu.Lock()
	defer x.flushMu.Unlock()
	x.mu.Lock()
	if x.version == x.flushed {
		x.mu.Unlock()
		return
	}
	outs := x.materializeLocked()
	count := x.count
	v := x.version
	x.mu.Unlock()
	err := x.e.mutate(context.Background(), x.doc, "", false, func(nb *notebook.Notebook) ([]NotebookEvent, error) {
		i := nb.IndexOf(x.cellID)
		if i < 0 || !x.doc.owns(x) {
			return nil, errNoChange
		}
		nc := *nb.Cells[i]
		nc.Outputs = outs
		nc.ExecutionCount = count
		nb.Cells[i] = &nc
		return []NotebookEvent{{Op: OpOutput, Index: i, Cells: []CellSnapshot{x.e.snapshotCell(x.doc.name, &nc)}}}, nil
	})
	if err != nil {
		x.e.log.Warn("saving the outputs of a running cell", "notebook", x.doc.name, "cell", x.cellID, "err", err)
		return
	}
	x.flushed = v
}

// Contents of the iopub messages that act on outputs without making one.
type (
	clearContent struct {
		Wait bool `json:"wait"`
	}
	inputContent struct {
		ExecutionCount *int `json:"execution_count"`
	}
)

// handle turns one message of the run into outputs the way Jupyter's
// frontends do: consecutive stream messages of one name merge, an
// update_display_data rewrites the outputs with its display_id in place,
// clear_output(wait=True) clears just before the next output arrives.
// transient is never stored.
func (x *execution) handle(m jupyter.Message) {
	<-x.ready
	if x.startFailed {
		return
	}
	var snap *OutputSnapshot
	x.mu.Lock()
	if x.ended {
		// Abandoned, and the kernel spoke after all: the result is out.
		x.mu.Unlock()
		return
	}
	if x.doc != nil && x.flushTimer == nil {
		x.flushTimer = time.AfterFunc(flushInterval, x.timedFlush)
	}
	switch m.Header.MsgType {
	case "execute_input":
		var c inputContent
		if json.Unmarshal(m.Content, &c) == nil && c.ExecutionCount != nil {
			x.count = c.ExecutionCount
			x.version++
		}
	case "stream", "display_data", "execute_result", "error":
		o, displayID, ok := output.FromMessage(m)
		if !ok {
			break
		}
		x.takePendingClearLocked()
		n := len(x.outs)
		if o.OutputType == notebook.Stream && n > 0 && x.outs[n-1].text != nil && x.outs[n-1].out.Name == o.Name {
			x.outs[n-1].text.WriteString(o.Text)
			n--
		} else if o.OutputType == notebook.Stream {
			b := &strings.Builder{}
			b.WriteString(o.Text)
			x.outs = append(x.outs, &outputState{out: notebook.Output{OutputType: notebook.Stream, Name: o.Name}, text: b})
		} else {
			if o.OutputType == notebook.ExecuteResult && x.count == nil {
				x.count = o.ExecutionCount
			}
			x.outs = append(x.outs, &outputState{out: o, displayID: displayID})
		}
		x.version++
		// A stream goes out piece by piece, "\r"s applied across pieces.
		s := x.live.View(&o, x.e.outputOptions(x.docName(), x.cellID, n))
		snap = &s
	case "update_display_data":
		o, displayID, ok := output.FromMessage(m)
		if !ok || displayID == "" {
			break
		}
		for _, st := range x.outs {
			if st.displayID == displayID {
				// A new map, not an edit: earlier snapshots share the old one.
				st.out.Data = o.Data
				st.out.Metadata = o.Metadata
				x.version++
			}
		}
	case "clear_output":
		var c clearContent
		_ = json.Unmarshal(m.Content, &c)
		if c.Wait {
			x.pendingClear = true
		} else {
			x.pendingClear = false
			if len(x.outs) > 0 {
				x.outs = nil
				x.version++
			}
			x.live.Reset()
		}
	case "input_request":
		// Not expected with allow_stdin false; answering keeps a kernel
		// that asks anyway from waiting forever. The write goes on the
		// side: this runs on the channel's reader, which must not wait
		// for the socket.
		x.mu.Unlock()
		go func() {
			if err := x.kernel.conn.SendInputReply(m.Header, ""); err != nil {
				x.e.log.Warn("answering an input request", "kernel", x.kernel.id, "err", err)
			}
		}()
		return
	}
	x.mu.Unlock()
	if snap != nil {
		x.e.publish(Event{Type: EvExecOutput, Exec: &ExecEvent{
			ID: x.id, Notebook: x.docName(), CellID: x.cellID, KernelID: x.kernel.id, CallID: x.callID, Output: snap,
		}})
	}
}

// timedFlush saves the outputs of a running cell that is still producing
// them; the next message arms the timer again.
func (x *execution) timedFlush() {
	x.mu.Lock()
	x.flushTimer = nil
	x.mu.Unlock()
	x.flush()
}

// takePendingClearLocked performs a clear_output(wait=True) when the next
// output arrives.
func (x *execution) takePendingClearLocked() {
	if x.pendingClear {
		x.pendingClear = false
		x.outs = nil
		x.live.Reset()
	}
}
