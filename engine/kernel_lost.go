package engine

// A kernel that goes away under a notebook (shut down or restarted from
// outside, died) is named: the channel notices (engine/jupyter/lost.go),
// the engine says which kernel, which notebook and what happened in a
// typed error, the workbench gets an event, and mcp/ words it for an agent.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

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

// KernelLostError: the kernel went away, and its state (variables,
// imports, loaded data) with it. Notebook is set when it was a notebook's
// kernel; During when code was running on it then (Index and CellID name
// the cell, when it was one), otherwise the code was not sent.
type KernelLostError struct {
	KernelID string
	Notebook string
	What     event.KernelLoss
	During   bool
	Index    int
	CellID   string
}

func (e *KernelLostError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel %s", e.KernelID)
	if e.Notebook != "" {
		fmt.Fprintf(&b, " of notebook %q", e.Notebook)
	}
	switch e.What {
	case event.KernelShutDown:
		b.WriteString(" was shut down from outside this server")
	case event.KernelGone:
		b.WriteString(" no longer exists on the Jupyter server (it was shut down, or the server restarted)")
	case event.KernelDied:
		b.WriteString(" died and Jupyter did not restart it")
	case event.KernelRestartedAfterCrash:
		b.WriteString(" died and Jupyter restarted it")
	case event.KernelRestartedOutside:
		b.WriteString(" was restarted from outside this server")
	default:
		b.WriteString(" was lost")
	}
	switch {
	case e.During && e.CellID != "":
		fmt.Fprintf(&b, " while it ran cell %d (id %q)", e.Index, e.CellID)
	case e.During:
		b.WriteString(" while it ran the code")
	default:
		b.WriteString("; the code was not run")
	}
	b.WriteString("; its state (variables, imports, loaded data) is gone")
	return b.String()
}

// CallerCanFix: restarting the kernel is the caller's move.
func (*KernelLostError) CallerCanFix() bool { return true }

// CodeNULError: the code holds a NUL byte, which ipykernel cannot handle
// and answers with silence; it is refused before it is sent.
type CodeNULError struct{ Offset int }

func (e *CodeNULError) Error() string {
	return fmt.Sprintf("the code contains a NUL byte (at byte %d), which the kernel cannot run; it was not sent", e.Offset)
}

func (*CodeNULError) CallerCanFix() bool { return true }

// NoReplyError: the kernel took the code, went idle, and never answered.
type NoReplyError struct{ KernelID, Notebook string }

func (e *NoReplyError) Error() string {
	return fmt.Sprintf("kernel %s went idle without answering the code (it could not handle the request)", e.KernelID)
}

func (*NoReplyError) CallerCanFix() bool { return true }

// checkCode refuses code the kernel would never answer.
func checkCode(code string) error {
	if i := strings.IndexByte(code, 0); i >= 0 {
		return &CodeNULError{Offset: i}
	}
	return nil
}

// lostGrace is how long a run that ended in a KeyboardInterrupt nobody here
// asked for waits for word that its kernel was shut down or restarted:
// Jupyter interrupts a kernel before it stops it, and the interrupt can
// arrive before the word.
const lostGrace = time.Second

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

// restartKernel asks the server to restart kernel k. Jupyter's restarter
// may be bringing a crashed kernel back at that very moment, and a request
// that crosses it can fail: it is tried again, for a while, as long as the
// kernel exists.
func (e *Engine) restartKernel(ctx context.Context, client *jupyter.Client, k *kernelEntry) (*jupyter.Kernel, error) {
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

// notebookName is d's name in use, "" for no notebook (d nil).
func (d *document) notebookName() string {
	if d == nil {
		return ""
	}
	return d.name
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
