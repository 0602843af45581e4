package jupyter

// Noticing that a kernel went away under its channel: shut down from
// outside, died, or restarted by someone else. Jupyter says so in several
// ways, none of them complete: the kernel publishes a shutdown_reply on
// iopub when anyone asks it to stop (restart or not), the server sends a
// "restarting" or "dead" status when its restarter sees the process die, a
// new process speaks with a new session id, the socket may close, and the
// REST API answers 404 once the kernel is gone. jupyter_server 1.x closes
// nothing when a kernel is shut down: without these a request sent to it
// would wait out its whole timeout.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Loss is how a kernel went away under its channel.
type Loss int

// The ways a kernel goes away.
const (
	// LossShutdown: someone asked the kernel to shut down (a DELETE of the
	// kernel, JupyterLab's "Shut Down Kernel", culling).
	LossShutdown Loss = iota + 1
	// LossGone: the Jupyter server no longer knows the kernel (it was shut
	// down, or the server restarted).
	LossGone
	// LossDied: the process died and the server did not bring it back.
	LossDied
	// LossRestarted: a new process runs under the kernel's id, started by
	// someone else: Jupyter's restarter after a crash (Crashed), or a
	// restart request.
	LossRestarted
)

// LostError is why a channel's kernel can no longer run what is sent to it
// as the caller expects: the process that held its state is gone. It
// stays until the caller restarts the kernel (BeginRestart) or accepts the
// loss (Acknowledge). A crash matches ErrKernelDied.
type LostError struct {
	KernelID string
	Loss     Loss
	Crashed  bool // LossRestarted: the old process died
}

func (e *LostError) Error() string {
	switch e.Loss {
	case LossShutdown:
		return fmt.Sprintf("kernel %s was shut down from outside this client", e.KernelID)
	case LossGone:
		return fmt.Sprintf("kernel %s no longer exists on the Jupyter server", e.KernelID)
	case LossDied:
		return fmt.Sprintf("kernel %s died", e.KernelID)
	case LossRestarted:
		if e.Crashed {
			return fmt.Sprintf("kernel %s died and the Jupyter server restarted it", e.KernelID)
		}
		return fmt.Sprintf("kernel %s was restarted from outside this client", e.KernelID)
	}
	return fmt.Sprintf("kernel %s was lost", e.KernelID)
}

// Is lets a kernel that died match ErrKernelDied, as the runs it ended did
// before losses had names.
func (e *LostError) Is(target error) bool {
	return target == ErrKernelDied && (e.Loss == LossDied || e.Crashed)
}

// ErrNoReply ends a run whose kernel went idle after it without ever
// answering it (ipykernel does this for a request it fails to handle, such
// as code with a NUL byte).
var ErrNoReply = errors.New("the kernel went idle without answering the execute request")

// noReplyGrace is how long a run that saw its idle status waits for the
// execute_reply. The kernel sends the reply before the idle, but on
// another socket, so the two may cross on their way here.
const noReplyGrace = 3 * time.Second

// pollInterval is how often the channel asks the REST API whether its
// kernel still exists: a kernel removed without a word on the socket (or
// with the word lost) is noticed within about this long.
const pollInterval = time.Second

// Lost returns why the kernel went away (a *LostError), or nil.
func (k *KernelConn) Lost() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.loss == nil {
		return nil
	}
	return k.loss
}

// LostSignal returns a channel closed when the kernel is next found lost
// (at once when it is lost now).
func (k *KernelConn) LostSignal() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lostCh
}

// OnLost registers f to be called (from the reader or the poller; it must
// not block) each time the kernel is found lost.
func (k *KernelConn) OnLost(f func(*LostError)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.onLost = append(k.onLost, f)
}

// BeginRestart tells the channel that its user is restarting the kernel:
// the signs of a restart that follow are expected, and any loss recorded
// so far is forgotten. Every BeginRestart needs an EndRestart.
func (k *KernelConn) BeginRestart() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ownRestarts++
	k.retireSessionLocked()
	k.clearLostLocked()
}

// EndRestart ends a restart begun with BeginRestart.
func (k *KernelConn) EndRestart() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ownRestarts > 0 {
		k.ownRestarts--
	}
	if k.ownRestarts == 0 {
		k.clearLostLocked()
	}
}

// Acknowledge accepts a loss the caller has told about: a kernel
// restarted outside runs requests again, from a blank state.
func (k *KernelConn) Acknowledge() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.loss != nil && k.loss.Loss == LossRestarted {
		k.clearLostLocked()
	}
}

// retireSessionLocked files the current process's session id among those
// of processes that are gone: what they still say (the idle after a
// shutdown, a reply to an interrupted run) is not news of a new process.
// The next process to speak becomes the kernel.
func (k *KernelConn) retireSessionLocked() {
	if k.kernelSession == "" {
		return
	}
	k.staleSessions = append(k.staleSessions, k.kernelSession)
	if n := len(k.staleSessions); n > 8 {
		k.staleSessions = k.staleSessions[n-8:]
	}
	k.kernelSession = ""
}

func (k *KernelConn) clearLostLocked() {
	if k.loss != nil {
		k.loss = nil
		k.lostCh = make(chan struct{})
	}
}

// markLost records that the kernel went away, fails the runs in flight
// with the loss and tells the listeners. Signs that come while the user
// restarts the kernel are expected and ignored. A kernel found gone stays
// gone; one already lost otherwise is only updated to gone.
func (k *KernelConn) markLost(loss Loss, crashed bool) {
	k.markLostAs(loss, crashed, true)
}

// markLostAs is markLost; retire is false when the new process is known
// already (its session id told of the loss).
func (k *KernelConn) markLostAs(loss Loss, crashed, retire bool) {
	k.mu.Lock()
	if k.closed || k.ownRestarts > 0 {
		k.mu.Unlock()
		return
	}
	final := func(l Loss) bool { return l == LossShutdown || l == LossGone }
	if k.loss != nil && (final(k.loss.Loss) || !final(loss)) {
		k.mu.Unlock()
		return
	}
	first := k.loss == nil
	if retire {
		k.retireSessionLocked()
	}
	le := &LostError{KernelID: k.kernelID, Loss: loss, Crashed: crashed}
	k.loss = le
	if first {
		close(k.lostCh)
	}
	fs := slices.Clone(k.onLost)
	k.mu.Unlock()
	k.failAll(le)
	if final(loss) || loss == LossDied {
		k.setState("dead")
	}
	for _, f := range fs {
		f(le)
	}
}

// watchSession notes the session id of a message the kernel itself sent
// (not the server's own status messages): a new one means a new process,
// and so a restart, which is a loss unless the user is restarting it. It
// reports false for a message from a process known to be gone.
func (k *KernelConn) watchSession(session string) bool {
	if session == "" {
		return true
	}
	k.mu.Lock()
	if slices.Contains(k.staleSessions, session) {
		k.mu.Unlock()
		return false
	}
	prev := k.kernelSession
	if prev == session {
		k.mu.Unlock()
		return true
	}
	if prev != "" {
		k.retireSessionLocked()
	}
	k.kernelSession = session
	changed := prev != "" && k.ownRestarts == 0
	k.mu.Unlock()
	if changed {
		k.markLostAs(LossRestarted, false, false)
	}
	return true
}

// shutdownSeen handles a shutdown_reply on iopub: someone asked the kernel
// to stop (and start again when restart is set).
func (k *KernelConn) shutdownSeen(content []byte) {
	var c struct {
		Restart bool `json:"restart"`
	}
	_ = json.Unmarshal(content, &c)
	if c.Restart {
		k.markLost(LossRestarted, false)
		return
	}
	k.markLost(LossShutdown, false)
}

// poll asks the REST API every pollInterval whether the kernel still
// exists, until the channel is closed or the kernel is found gone.
func (k *KernelConn) poll() {
	defer k.readerWG.Done()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-k.ctx.Done():
			return
		case <-t.C:
		}
		if k.gone(5 * time.Second) {
			k.markLost(LossGone, false)
		}
		k.mu.Lock()
		done := k.loss != nil && (k.loss.Loss == LossGone || k.loss.Loss == LossShutdown)
		k.mu.Unlock()
		if done {
			return
		}
	}
}

// gone reports whether the REST API says the kernel does not exist; an
// unreachable server is not an answer.
func (k *KernelConn) gone(timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(k.ctx, timeout)
	defer cancel()
	_, err := k.client.GetKernel(ctx, k.kernelID)
	return IsNotFound(err)
}

// armNoReply starts the wait for an execute_reply that did not come with
// the idle status.
func (r *Run) armNoReply() {
	time.AfterFunc(noReplyGrace, func() {
		r.mu.Lock()
		missing := r.reply == nil && !r.finished
		r.mu.Unlock()
		if missing {
			r.k.forget(r.msgID)
			r.finish(ErrNoReply)
		}
	})
}
