package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// An execution is one run of code on a kernel, in flight: the channel
// hands it the run's messages, it builds the outputs as Jupyter's
// frontends do, writes a notebook cell's into the notebook as they come and
// saves them, and wakes the call waiting for it (execute.go) when the run
// ends.

// flushInterval is how often a running cell's outputs are written into its
// notebook and saved: often enough that a reader sees progress, rarely
// enough that a chatty cell does not turn into a save storm.
const flushInterval = time.Second

// abortGrace is how long a cancelled call waits for the interrupted kernel
// to report the end of the run, so that the KeyboardInterrupt is part of
// what it returns.
const abortGrace = 5 * time.Second

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
	byPerson     bool // the person interrupted the kernel at the workbench (person_interrupt.go)
	// begun: the kernel has started this run (its first message came).
	// dropOnStart: it was cancelled while still queued behind another
	// run, and is interrupted the moment it starts (abort).
	begun       bool
	dropOnStart bool
	ended       bool        // the run finished or was abandoned: later messages are dropped
	flushTimer  *time.Timer // a pending timed flush, or nil

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

// abort interrupts the kernel for a cancelled call and returns what the run
// produced, with an error wrapping the context's.
func (x *execution) abort(ctx context.Context) (execOutcome, error) {
	x.mu.Lock()
	queued := !x.begun && !x.ended
	if queued {
		x.dropOnStart, x.interrupted = true, true
	}
	x.mu.Unlock()
	if queued {
		// Interrupting the kernel now would stop the run ahead of this
		// one, someone else's. The kernel cannot take a queued request
		// back: this one is interrupted as soon as it starts (handle).
		out := x.outcome(false)
		out.Status = "aborted"
		return out, fmt.Errorf("the execution was cancelled while queued behind another run on kernel %s; it is interrupted as soon as the kernel starts it: %w", x.kernel.id, context.Cause(ctx))
	}
	finished := x.interruptAndWait(ctx, "interrupting a kernel for a cancelled call")
	out := x.outcome(!finished)
	out.Status = "aborted"
	return out, fmt.Errorf("the execution was cancelled and kernel %s was interrupted: %w", x.kernel.id, context.Cause(ctx))
}

// interruptQueued interrupts the kernel for a run cancelled while it was
// queued, now that it has started.
//
// The interrupt lands some milliseconds later, through the server: a short
// run may be over by then, and the kernel's SIGINT would stop the run
// queued behind it, perhaps another client's. So it is not sent when the run
// has ended, or when another run waits behind it on the kernel: the
// cancelled run then goes on to its end (the call that made it has its
// answer already), and the log says so.
func (x *execution) interruptQueued() {
	select {
	case <-x.done:
		return
	default:
	}
	if x.runsQueuedBehind() {
		x.e.log.Info("a run cancelled while queued runs to its end: interrupting it could stop the run queued behind it", "kernel", x.kernel.id)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := x.client.InterruptKernel(ctx, x.kernel.id); err != nil {
		x.e.log.Warn("interrupting a kernel for a run cancelled while queued", "kernel", x.kernel.id, "err", err)
	}
}

// runsQueuedBehind says whether another run on x's kernel has not started
// yet: it waits behind x.
func (x *execution) runsQueuedBehind() bool {
	x.e.mu.Lock()
	others := make([]*execution, 0, len(x.kernel.execs))
	for o := range x.kernel.execs {
		if o != x {
			others = append(others, o)
		}
	}
	x.e.mu.Unlock()
	for _, o := range others {
		o.mu.Lock()
		waiting := !o.begun && !o.ended
		o.mu.Unlock()
		if waiting {
			return true
		}
	}
	return false
}

// interruptAndWait interrupts the run's kernel and waits, up to abortGrace,
// for the run to end, so that the KeyboardInterrupt is part of what the
// call returns; it reports whether the run ended. A run that did not is
// flushed, as a timeout leaves one. why is logged if the interrupt fails.
func (x *execution) interruptAndWait(ctx context.Context, why string) bool {
	x.mu.Lock()
	x.interrupted = true
	x.mu.Unlock()
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := x.client.InterruptKernel(ictx, x.kernel.id); err != nil {
		x.e.log.Warn(why, "kernel", x.kernel.id, "err", err)
	}
	select {
	case <-x.done:
		return true
	case <-time.After(abortGrace):
		x.flush()
		return false
	}
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
	if x.doc != nil {
		if note := unsavedNote(outs); note != nil {
			outs = append(outs, *note)
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
		x.autoRestart()
	}
	x.flush()
	if x.doc != nil {
		x.doc.doneRunning(x)
	}
	x.e.publish(event.Event{Type: event.EvExecFinished, Exec: &event.ExecEvent{
		ID: x.id, Notebook: x.doc.notebookName(), CellID: x.cellID, KernelID: x.kernel.id, CallID: x.callID,
		Status: status, Elapsed: time.Since(x.started),
	}})
	close(x.done)
}

// autoRestart replaces a kernel that died during the run
// (kernel.auto-restart). A server with its own autorestart may already be
// restarting it: then our request fails while it is at it, and the kernel
// comes back by itself, which the loop notices.
func (x *execution) autoRestart() {
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
	// One output that cannot be saved must not keep the others out.
	outs, _ := saveableOutputs(x.materializeLocked())
	count := x.count
	v := x.version
	x.mu.Unlock()
	err := x.e.mutate(context.Background(), x.doc, "", false, func(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
		i := nb.IndexOf(x.cellID)
		if i < 0 || !x.doc.owns(x) {
			return nil, errUnchanged
		}
		nc := *nb.Cells[i]
		nc.Outputs = outs
		nc.ExecutionCount = count
		nb.Cells[i] = &nc
		return []event.NotebookEvent{{Op: event.OpOutput, Index: i, Cells: []event.CellSnapshot{x.e.snapshotCell(x.doc.name, &nc)}}}, nil
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
	var snap *event.OutputSnapshot
	x.mu.Lock()
	if x.ended {
		// Abandoned, and the kernel spoke after all: the result is out.
		x.mu.Unlock()
		return
	}
	if x.doc != nil && x.flushTimer == nil {
		x.flushTimer = time.AfterFunc(flushInterval, x.timedFlush)
	}
	if !x.begun {
		x.begun = true
		if x.dropOnStart {
			go x.interruptQueued()
		}
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
		s := x.live.View(&o, x.e.outputOptions(x.doc.notebookName(), x.cellID, n))
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
		x.e.publish(event.Event{Type: event.EvExecOutput, Exec: &event.ExecEvent{
			ID: x.id, Notebook: x.doc.notebookName(), CellID: x.cellID, KernelID: x.kernel.id, CallID: x.callID, Output: snap,
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

// lostGrace is how long a run that ended in a KeyboardInterrupt nobody here
// asked for waits for word that its kernel was shut down or restarted:
// Jupyter interrupts a kernel before it stops it, and the interrupt can
// arrive before the word.
const lostGrace = time.Second
