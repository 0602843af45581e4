package jupyter

// A run: one execute_request, the messages routed to it by parent msg_id,
// and its end once both the execute_reply and the idle status arrived.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrKernelDied is returned by a Run whose kernel died or restarted while it
// ran: its state is gone.
var ErrKernelDied = errors.New("the kernel died while executing")

// ErrDisconnected is returned by a Run whose websocket dropped and could not
// be re-established while it ran.
var ErrDisconnected = errors.New("lost the connection to the kernel")

// ExecuteRequest is the content of an execute_request.
type ExecuteRequest struct {
	Code         string `json:"code"`
	Silent       bool   `json:"silent"`
	StoreHistory bool   `json:"store_history"`
	AllowStdin   bool   `json:"allow_stdin"`
	StopOnError  bool   `json:"stop_on_error"`
}

// Execute sends an execute_request and returns its Run at once. The run's
// messages arrive on Run.Messages until both the execute_reply and the iopub
// idle status for it have arrived (in either order), or the kernel dies.
func (k *KernelConn) Execute(ctx context.Context, req ExecuteRequest) (*Run, error) {
	return k.ExecuteFunc(ctx, req, RunHandler{})
}

// RunHandler receives a run's messages as they arrive instead of
// Run.Messages, which saves a goroutine and two thread wake-ups per message
// between the socket and whoever consumes them.
type RunHandler struct {
	// Message is called with each message Run.Messages would deliver, in
	// order, on the channel's reader goroutine: it must be quick and must
	// not block, since every run on the kernel waits behind it, and it must
	// not call KernelConn.Close.
	Message func(Message)
	// End is called once when the run is finished, after the last call of
	// Message, with the execute_reply or the reason the run failed (as Wait
	// returns them), before Done is closed. It runs on the reader goroutine
	// or on the goroutine that closed the channel, under the same rules as
	// Message.
	End func(*ExecuteReply, error)
}

// ExecuteFunc is Execute with h receiving the run's messages and its end.
// With h.Message set, Run.Messages delivers nothing and is closed when the
// run is done.
func (k *KernelConn) ExecuteFunc(ctx context.Context, req ExecuteRequest, h RunHandler) (*Run, error) {
	content, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	hdr := k.newHeader("execute_request")
	r := newRun(k, hdr.MsgID)
	r.h = h

	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, ErrDisconnected
	}
	if k.loss != nil {
		// Sending would run the code on a blank kernel, or on none.
		lost := k.loss
		k.mu.Unlock()
		return nil, lost
	}
	conn := k.conn
	if conn == nil && k.reconnecting {
		k.mu.Unlock()
		// Say why the socket is down when the REST API can tell: the
		// server unreachable (naming it) or the kernel gone (a 404 the
		// caller can turn into "restart it"); only a kernel that exists
		// on a server that answers is worth retrying shortly.
		if _, err := k.client.GetKernel(ctx, k.kernelID); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrDisconnected, err)
		}
		return nil, fmt.Errorf("%w: reconnecting to kernel %s, try again shortly", ErrDisconnected, k.kernelID)
	}
	// The run is registered before the request leaves so that a reply
	// racing the write still finds it.
	k.runs[hdr.MsgID] = r
	k.mu.Unlock()

	if conn == nil {
		// The reader gave up reconnecting earlier; try once more now that
		// someone needs the kernel.
		if conn, err = k.reconnectNow(ctx); err != nil {
			k.forget(hdr.MsgID)
			return nil, fmt.Errorf("%w: %w", ErrDisconnected, err)
		}
	}
	if err := k.send(conn, "shell", hdr, Header{}, content); err != nil {
		k.forget(hdr.MsgID)
		return nil, fmt.Errorf("%w: sending execute_request: %v", ErrDisconnected, err)
	}
	return r, nil
}

// dispatch routes one message: status updates the kernel state and may end
// a run; execute_reply ends the shell half of a run; everything else with a
// known parent goes to that run's queue.
func (k *KernelConn) dispatch(msg Message) {
	parent := msg.ParentHeader.MsgID
	k.mu.Lock()
	r := k.runs[parent]
	k.mu.Unlock()

	switch {
	case msg.Channel == "iopub" && msg.Header.MsgType == "status":
		var st struct {
			ExecutionState string `json:"execution_state"`
		}
		if json.Unmarshal(msg.Content, &st) != nil || st.ExecutionState == "" {
			return
		}
		switch st.ExecutionState {
		case "restarting", "dead":
			// The server saw the kernel process die (and restarts it):
			// no reply will ever come for what was running or queued.
			// These statuses are the server's own, not the kernel's.
			k.setState(st.ExecutionState)
			if st.ExecutionState == "dead" {
				k.markLost(LossDied, false)
			} else {
				k.markLost(LossRestarted, true)
			}
			k.failAll(ErrKernelDied)
			return
		}
		if !k.watchSession(msg.Header.Session) {
			// The last words of a process that is gone.
			return
		}
		k.setState(st.ExecutionState)
		switch st.ExecutionState {
		case "idle":
			if r != nil {
				r.markIdle()
			}
		}
	case msg.Channel == "iopub" && msg.Header.MsgType == "shutdown_reply":
		// Someone asked the kernel to stop: its state goes with it.
		k.shutdownSeen(msg.Content)
	case msg.Channel == "shell" && msg.Header.MsgType == "execute_reply":
		k.watchSession(msg.Header.Session)
		if r == nil {
			return
		}
		var rep ExecuteReply
		if err := json.Unmarshal(msg.Content, &rep); err != nil {
			rep.Status = "error"
			rep.EValue = "undecodable execute_reply: " + err.Error()
		}
		r.markReply(&rep)
	case msg.Channel == "iopub" || (msg.Channel == "stdin" && msg.Header.MsgType == "input_request"):
		if r != nil {
			r.push(msg)
		}
	}
}

// Run is one execute_request in flight.
type Run struct {
	k     *KernelConn
	msgID string

	mu       sync.Mutex
	queue    []Message
	wake     chan struct{} // cap 1: tells the pump the queue changed
	finished bool
	reply    *ExecuteReply
	gotIdle  bool
	err      error

	// h, when set, takes the messages instead of the queue. hmu is held
	// while it runs, so that End (from Close's goroutine) never overlaps a
	// Message (from the reader's) and always comes after the last one.
	h   RunHandler
	hmu sync.Mutex

	done     chan struct{}
	out      chan Message
	pumpOnce sync.Once
}

func newRun(k *KernelConn, msgID string) *Run {
	return &Run{
		k:     k,
		msgID: msgID,
		wake:  make(chan struct{}, 1),
		done:  make(chan struct{}),
		out:   make(chan Message),
	}
}

// MsgID is the execute_request's msg_id.
func (r *Run) MsgID() string { return r.msgID }

// Messages delivers, in order, every iopub message of this run except status
// messages (stream, display_data, update_display_data, execute_input,
// execute_result, error, clear_output) and stdin input_request messages. It
// never drops messages (the queue behind it is unbounded) and is closed when
// the run is done.
func (r *Run) Messages() <-chan Message {
	// The pump starts on first use so that a caller who only Waits leaves
	// no goroutine behind.
	r.pumpOnce.Do(func() { go r.pump() })
	return r.out
}

// Done is closed when the run is finished.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait waits for the run to finish and returns the execute_reply.
func (r *Run) Wait(ctx context.Context) (*ExecuteReply, error) {
	select {
	case <-r.done:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.reply, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Err is the reason the run failed (ErrKernelDied, ErrDisconnected), or nil
// when it finished normally or is still running.
func (r *Run) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Reply is the execute_reply once it arrived (possibly before the run is
// done), or nil.
func (r *Run) Reply() *ExecuteReply {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reply
}

func (r *Run) push(m Message) {
	if r.h.Message != nil {
		r.hmu.Lock()
		r.mu.Lock()
		finished := r.finished
		r.mu.Unlock()
		if !finished {
			r.h.Message(m)
		}
		r.hmu.Unlock()
		return
	}
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return
	}
	r.queue = append(r.queue, m)
	r.mu.Unlock()
	r.signal()
}

func (r *Run) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Run) markIdle() {
	r.mu.Lock()
	first := !r.gotIdle
	r.gotIdle = true
	complete := r.reply != nil
	r.mu.Unlock()
	if complete {
		r.complete()
	} else if first {
		r.armNoReply()
	}
}

func (r *Run) markReply(rep *ExecuteReply) {
	r.mu.Lock()
	r.reply = rep
	complete := r.gotIdle
	r.mu.Unlock()
	if complete {
		r.complete()
	}
}

// lossGrace is how long a run that ended in a KeyboardInterrupt waits to
// learn whether the kernel is being shut down.
const lossGrace = 500 * time.Millisecond

// complete ends a run whose reply and idle status both arrived. A shutdown
// from outside (a DELETE of the kernel) interrupts the kernel first, then
// asks it to stop, so the run can end in a KeyboardInterrupt a moment
// before the shutdown is seen: such a run waits up to lossGrace for the
// loss and then ends with it, so that the fault is named as it is (the
// kernel was shut down) and not as an interrupt nobody asked for.
func (r *Run) complete() {
	r.k.forget(r.msgID)
	rep := r.Reply()
	if rep == nil || rep.Status != "error" || rep.EName != "KeyboardInterrupt" || r.k.Lost() != nil {
		r.finish(nil)
		return
	}
	lost := r.k.LostSignal()
	go func() {
		select {
		case <-lost:
			r.finish(r.k.Lost())
		case <-time.After(lossGrace):
			r.finish(nil)
		}
	}()
}

// finish ends the run once; later calls are ignored.
func (r *Run) finish(err error) {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return
	}
	r.finished = true
	r.err = err
	reply := r.reply
	r.mu.Unlock()
	if r.h.End != nil {
		r.hmu.Lock()
		r.h.End(reply, err)
		r.hmu.Unlock()
	}
	close(r.done)
	r.signal()
}

// pump moves queued messages to the out channel and closes it once the run
// is finished and the queue is drained. The reader never blocks on it.
func (r *Run) pump() {
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			fin := r.finished
			r.mu.Unlock()
			if fin {
				close(r.out)
				return
			}
			<-r.wake
			continue
		}
		m := r.queue[0]
		r.queue[0] = Message{}
		r.queue = r.queue[1:]
		r.mu.Unlock()
		select {
		case r.out <- m:
		case <-r.k.ctx.Done():
			// The channel is closed and nobody drained this run: stop
			// rather than leak the goroutine.
			close(r.out)
			return
		}
	}
}

// ExecuteReply is the content of an execute_reply.
type ExecuteReply struct {
	Status         string   `json:"status"` // ok, error, aborted
	ExecutionCount int      `json:"execution_count"`
	EName          string   `json:"ename"`
	EValue         string   `json:"evalue"`
	Traceback      []string `json:"traceback"`
}

// encodeV1 frames parts for the v1 kernel websocket protocol: a uint64
// little-endian count of offsets, the offsets (the channel name's start,
