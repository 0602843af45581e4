package observe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

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
	events []event.Event
	opts   ReplayOptions

	mu       sync.Mutex
	recorded map[string]time.Time // when each call played started, as recorded
	paused   bool
	steps    int           // calls to play while paused
	wake     chan struct{} // closed (and replaced) when paused or steps change
}

// ReplayState is how a replay plays: its speed (negative: as fast as
// possible) and whether it is paused.
type ReplayState struct {
	Speed  float64
	Paused bool
}

// ReplayState reports the replay's speed and whether it is paused.
func (p *ReplaySource) ReplayState() ReplayState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ReplayState{Speed: p.opts.Speed, Paused: p.paused}
}

// SetReplayPaused pauses or resumes the replay. Paused, no event is played
// until it resumes or StepReplay asks for one more call.
func (p *ReplaySource) SetReplayPaused(paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = paused
	if !paused {
		p.steps = 0
	}
	p.notifyLocked()
}

// StepReplay plays, while paused, the events up to the end of the next
// call (its result), then waits again. It does nothing while playing.
func (p *ReplaySource) StepReplay() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		p.steps++
		p.notifyLocked()
	}
}

func (p *ReplaySource) notifyLocked() {
	if p.wake != nil {
		close(p.wake)
	}
	p.wake = make(chan struct{})
}

// control is the pause state and the channel closed when it changes.
func (p *ReplaySource) control() (paused bool, steps int, wake <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wake == nil {
		p.wake = make(chan struct{})
	}
	return p.paused, p.steps, p.wake
}

// played counts a call played by a step.
func (p *ReplaySource) played() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused && p.steps > 0 {
		p.steps--
	}
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
	evs, err := ReadRecording(f)
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

// ReadRecording parses JSON lines of events (a --record file), or of calls
// (a workbench export, E: export_read.go); blank lines are skipped. A line
// that is neither is an error that says what the file should be.
func ReadRecording(r io.Reader) ([]event.Event, error) {
	var evs []event.Event
	exported := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if isExportLine(line) {
			calls, err := exportEvents(line)
			if err != nil {
				return nil, fmt.Errorf("line %d is a call of a workbench export (E) that cannot be read: %w", n, err)
			}
			evs, exported = append(evs, calls...), true
			continue
		}
		var ev event.Event
		if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
			if err == nil {
				err = errors.New("it has no event type")
			}
			return nil, fmt.Errorf("line %d is neither an event of a recording (written with --record) nor a call of a workbench export (written with E): %w", n, err)
		}
		evs = append(evs, ev)
	}
	if exported {
		inTimeOrder(evs)
	}
	return evs, sc.Err()
}

// Subscribe plays the recording into the channel, waiting between events
// as long as they were apart (scaled by Speed, capped by MaxGap) and while
// paused; the channel is closed at the end. Times are moved to the present,
// so elapsed times and cache TTLs count as they did when recorded; an event
// played off its schedule (after a pause, or ahead of it by a step) is
// dated when it is played, and those after it keep their distances to it.
func (p *ReplaySource) Subscribe() (<-chan event.Event, func()) {
	out := make(chan event.Event, 64)
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
		// less skipped (the gaps MaxGap cut out, the time paused).
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
		last := start // when the previous event was played
		for _, ev := range p.events {
			var gap time.Duration
			if p.opts.Speed > 0 && !prev.IsZero() && !ev.Time.IsZero() {
				gap = time.Duration(float64(ev.Time.Sub(prev)) / p.opts.Speed)
				if gap > p.opts.MaxGap {
					skipped += gap - p.opts.MaxGap
					gap = p.opts.MaxGap
				}
			}
			due := last.Add(max(gap, 0))
			var blocked time.Duration
			if !p.wait(ctx, due, &blocked) {
				return
			}
			if !ev.Time.IsZero() {
				prev = ev.Time
			}
			last = time.Now()
			if p.opts.Speed > 0 {
				// Off schedule: date it now.
				skipped += due.Sub(last)
			} else {
				skipped -= blocked
			}
			ev.Time = shift(ev.Time)
			if ev.Call != nil {
				c := *ev.Call
				p.noteRecorded(c.ID, c.Started)
				c.Started = shift(c.Started)
				ev.Call = &c
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
			if ev.Type == event.EvCallFinished {
				p.played()
			}
		}
	}()
	return out, cancel
}

// wait returns when the next event may be played: at due, or at once when
// a step asks for it while paused, never while paused otherwise. It adds
// the time spent paused to blocked, and reports false when ctx ended.
func (p *ReplaySource) wait(ctx context.Context, due time.Time, blocked *time.Duration) bool {
	for {
		paused, steps, wake := p.control()
		if paused && steps == 0 {
			since := time.Now()
			select {
			case <-wake:
				*blocked += time.Since(since)
				continue
			case <-ctx.Done():
				return false
			}
		}
		if paused {
			return true // a step: play now
		}
		d := time.Until(due)
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
			return true
		case <-wake:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

// Recorded reports the events' original times, for a replay that wants
// them (the tests); the workbench sees them moved to the present.

func (p *ReplaySource) Info() HeaderInfo {
	return HeaderInfo{Mode: "replaying " + filepath.Base(p.path)}
}

// ReadOnly tells the workbench to disable the actions.
func (p *ReplaySource) ReadOnly() bool { return true }

func (p *ReplaySource) InterruptKernel(context.Context, string) error { return ErrReadOnly }
func (p *ReplaySource) CancelCall(string) error                       { return ErrReadOnly }
func (p *ReplaySource) SetPaused(bool) error                          { return ErrReadOnly }
func (p *ReplaySource) Decide(string, calls.Verdict) error            { return ErrReadOnly }
func (p *ReplaySource) RevokeAllowed() error                          { return ErrReadOnly }
func (p *ReplaySource) Undo(string) error                             { return ErrReadOnly }
func (p *ReplaySource) CanResend() error                              { return ErrResendReplay }
func (p *ReplaySource) Resend(calls.Resend) error                     { return ErrResendReplay }

// noteRecorded keeps when a call started in the recording, the first time
// it is played.
func (p *ReplaySource) noteRecorded(id string, started time.Time) {
	if started.IsZero() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.recorded == nil {
		p.recorded = map[string]time.Time{}
	}
	if _, ok := p.recorded[id]; !ok {
		p.recorded[id] = started
	}
}

// RecordedStart is when the call with the given id started in the
// recording; the workbench shows that, not the time it was played at.
func (p *ReplaySource) RecordedStart(id string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.recorded[id]
	return t, ok
}

// RecordedAt is when the recording's first event happened.
func (p *ReplaySource) RecordedAt() time.Time {
	for _, ev := range p.events {
		if !ev.Time.IsZero() {
			return ev.Time
		}
	}
	return time.Time{}
}
