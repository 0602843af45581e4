package observe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// redacted replaces secrets in recordings.
const redacted = "[redacted]"

// Recorder writes engine events as JSON lines, one event a line, with
// secrets replaced by "[redacted]" wherever they appear (arguments, results,
// URLs), so a recording can be shared.
type Recorder struct {
	mu      sync.Mutex
	out     io.Writer // what w writes to; synced on Close when it can be
	w       *bufio.Writer
	secrets [][]byte // each as it appears inside a JSON string
	err     error

	stop func()        // ends the subscription, when following a bus
	done chan struct{} // closed when following has ended
}

// NewRecorder records every event of e's bus to w until Close.
func NewRecorder(w io.Writer, e *engine.Engine, secrets []string) *Recorder {
	return NewBusRecorder(w, e.Bus(), secrets)
}

// NewBusRecorder records every event of bus to w until Close.
func NewBusRecorder(w io.Writer, bus *engine.Bus, secrets []string) *Recorder {
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
func (r *Recorder) Write(ev engine.Event) error {
	line, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	for _, s := range r.secrets {
		line = bytes.ReplaceAll(line, s, []byte(redacted))
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
func (r *Recorder) follow(events <-chan engine.Event) {
	for ev := range events {
		_ = r.Write(ev)
	}
}

// Close stops recording after writing every event published before it was
// called, syncs the file to disk when w is one (anything with Sync), and
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
	if s, ok := r.out.(interface{ Sync() error }); ok && r.err == nil {
		r.err = s.Sync()
	}
	return r.err
}

// ReplayOptions tune a replay.
type ReplayOptions struct {
	// Speed multiplies the original pace: 2 plays twice as fast. 0 means 1;
	// a negative speed plays without waiting.
	Speed float64
	// MaxGap caps the wait between two events (a recording with an idle
	// hour should not make you wait an hour). 0 means 5 s.
	MaxGap time.Duration
}

// ReplaySource plays a recording. Actions are refused: there is no engine
// behind it.
type ReplaySource struct {
	path   string
	events []engine.Event
	opts   ReplayOptions
}

// Replay reads a recording made by Recorder and returns a source that
// plays it with its original timing.
func Replay(path string, options ...ReplayOptions) (*ReplaySource, error) {
	var opts ReplayOptions
	if len(options) > 0 {
		opts = options[0]
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	evs, err := readRecording(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if opts.Speed == 0 {
		opts.Speed = 1
	}
	if opts.MaxGap == 0 {
		opts.MaxGap = 5 * time.Second
	}
	return &ReplaySource{path: path, events: evs, opts: opts}, nil
}

// readRecording parses JSON lines of events; blank lines are skipped.
func readRecording(r io.Reader) ([]engine.Event, error) {
	var evs []engine.Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev engine.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		evs = append(evs, ev)
	}
	return evs, sc.Err()
}

// Subscribe plays the recording into the channel, waiting between events
// as long as they were apart (scaled by Speed, capped by MaxGap); the
// channel is closed at the end. Times are moved to the present, so elapsed
// times and cache TTLs count as they did when recorded.
func (p *ReplaySource) Subscribe() (<-chan engine.Event, func()) {
	out := make(chan engine.Event, 64)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(out)
		var first time.Time
		for _, ev := range p.events {
			if !ev.Time.IsZero() {
				first = ev.Time
				break
			}
		}
		// shift moves a recorded time onto the wall clock: the first event
		// happens now, the others as far after it as they were (at Speed),
		// less the gaps MaxGap cut out.
		start, skipped := time.Now(), time.Duration(0)
		shift := func(t time.Time) time.Time {
			if t.IsZero() || first.IsZero() {
				return t
			}
			d := t.Sub(first)
			if p.opts.Speed > 0 {
				d = time.Duration(float64(d) / p.opts.Speed)
			}
			return start.Add(d - skipped)
		}
		var prev time.Time
		for _, ev := range p.events {
			if p.opts.Speed > 0 && !prev.IsZero() && !ev.Time.IsZero() {
				gap := time.Duration(float64(ev.Time.Sub(prev)) / p.opts.Speed)
				if gap > p.opts.MaxGap {
					skipped += gap - p.opts.MaxGap
					gap = p.opts.MaxGap
				}
				if gap > 0 {
					t := time.NewTimer(gap)
					select {
					case <-t.C:
					case <-ctx.Done():
						t.Stop()
						return
					}
				}
			}
			if !ev.Time.IsZero() {
				prev = ev.Time
			}
			ev.Time = shift(ev.Time)
			if ev.Call != nil {
				c := *ev.Call
				c.Started = shift(c.Started)
				ev.Call = &c
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, cancel
}

// Recorded reports the events' original times, for a replay that wants
// them (the tests); the workbench sees them moved to the present.

func (p *ReplaySource) Info() HeaderInfo {
	return HeaderInfo{Mode: "replay of " + filepath.Base(p.path)}
}

// ReadOnly tells the workbench to disable the actions.
func (p *ReplaySource) ReadOnly() bool { return true }

func (p *ReplaySource) InterruptKernel(context.Context, string) error { return ErrReadOnly }
func (p *ReplaySource) CancelCall(string) error                       { return ErrReadOnly }
func (p *ReplaySource) SetPaused(bool) error                          { return ErrReadOnly }
func (p *ReplaySource) Decide(string, bool) error                     { return ErrReadOnly }
func (p *ReplaySource) Settle(string, engine.Verdict) error           { return ErrReadOnly }
func (p *ReplaySource) RevokeAllowed() error                          { return ErrReadOnly }
