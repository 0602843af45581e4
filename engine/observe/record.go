package observe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sync"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Redacted replaces secrets in recordings.
const Redacted = "[redacted]"

// Recorder writes engine events as JSON lines, one event a line, with
// secrets replaced by "[redacted]" wherever they appear (arguments, results,
// URLs), so a recording can be shared.
type Recorder struct {
	mu      sync.Mutex
	out     io.Writer // what w writes to; synced on Close when a file
	w       *bufio.Writer
	secrets [][]byte // each as it appears inside a JSON string
	err     error

	stop func()        // ends the subscription, when following a bus
	done chan struct{} // closed when following has ended
}

// NewRecorder records every event of e's bus to w until Close.
func NewRecorder(w io.Writer, e interface{ Bus() *event.Bus }, secrets []string) *Recorder {
	return NewBusRecorder(w, e.Bus(), secrets)
}

// NewBusRecorder records every event of bus to w until Close.
func NewBusRecorder(w io.Writer, bus *event.Bus, secrets []string) *Recorder {
	r := NewRecordWriter(w, secrets)
	sub := bus.SubscribeBatched(subscriptionBuffer, observerBatchWindow)
	// Drain, not Close: the events of the last batch window (the last
	// call's result, when the host closes stdin right after reading it)
	// belong in the recording too.
	r.stop, r.done = sub.Drain, make(chan struct{})
	go func() {
		defer close(r.done)
		r.follow(sub.C())
	}()
	return r
}

// NewRecordWriter returns a recorder that writes only the events given to
// its Write (it follows no bus). Secrets shorter than four bytes are ignored: redacting them would garble
// the recording.
func NewRecordWriter(w io.Writer, secrets []string) *Recorder {
	r := &Recorder{out: w, w: bufio.NewWriter(w)}
	for _, s := range secrets {
		if len(s) < 4 {
			continue
		}
		b, _ := json.Marshal(s)
		r.secrets = append(r.secrets, b[1:len(b)-1])
	}
	return r
}

// Write records one event.
func (r *Recorder) Write(ev event.Event) error {
	line, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	for _, s := range r.secrets {
		line = bytes.ReplaceAll(line, s, []byte(Redacted))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if _, err := r.w.Write(append(line, '\n')); err != nil {
		r.err = err
		return err
	}
	// Flush every line: a recording is most wanted after a crash.
	r.err = r.w.Flush()
	return r.err
}

// follow records every event until the channel is closed. After a write
// error it keeps draining, so the bus does not count the events as missed
// forever, but writes nothing more.
func (r *Recorder) follow(events <-chan event.Event) {
	for ev := range events {
		_ = r.Write(ev)
	}
}

// Close stops recording after writing every event published before it was
// called, syncs the file to disk when w is a file, and
// returns the first error, if any. It does not close w.
func (r *Recorder) Close() error {
	if r.stop != nil {
		r.stop()
		<-r.done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = r.w.Flush()
	}
	if f, ok := r.out.(*os.File); ok && r.err == nil {
		// Only a file on disk is synced: fsync of a pipe or a device
		// (--record /dev/stderr) fails without anything being lost.
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			r.err = f.Sync()
		}
	}
	return r.err
}
