package ui

import (
	"strconv"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// Replayer is a backend that plays a recording (observe.ReplaySource): the
// workbench shows its speed and lets the person pause it and step it one
// call at a time.
type Replayer interface {
	ReplayState() observe.ReplayState
	SetReplayPaused(paused bool)
	StepReplay()
	// RecordedStart is when a call started in the recording (the events
	// are played dated now).
	RecordedStart(callID string) (time.Time, bool)
}

var _ Replayer = (*observe.ReplaySource)(nil)

// initReplay notes whether the backend is a replay. In one, space pauses
// and resumes it, so folding a node of the call's tree is enter's alone.
func (m *Model) initReplay() {
	r, ok := m.backend.(Replayer)
	if !ok {
		return
	}
	st := r.ReplayState()
	m.replay, m.replayPaused, m.replaySpeed = r, st.Paused, st.Speed
	m.keys.Toggle.SetKeys("enter")
	m.keys.Toggle.SetHelp("enter", "fold/unfold")
}

// updateReplayKeys offers the replay's keys in a replay only, and step
// only while paused.
func (m *Model) updateReplayKeys() {
	k := &m.keys
	k.ReplayPause.SetEnabled(m.replay != nil)
	k.ReplayStep.SetEnabled(m.replay != nil && m.replayPaused)
	if m.replayPaused {
		k.ReplayPause.SetHelp("space", "resume replay")
	} else {
		k.ReplayPause.SetHelp("space", "pause replay")
	}
}

// replayPauseCmd pauses or resumes the replay.
func (m Model) replayPauseCmd(paused bool) tea.Cmd {
	r := m.replay
	return func() tea.Msg {
		r.SetReplayPaused(paused)
		return nil
	}
}

// replayStepCmd plays one more call of a paused replay.
func (m Model) replayStepCmd() tea.Cmd {
	r := m.replay
	return func() tea.Msg {
		r.StepReplay()
		return nil
	}
}

// replayHeader is what the header says of a replay: its speed, and when
// it is paused, how to go on.
func (m *Model) replayHeader() []string {
	if m.replay == nil {
		return nil
	}
	s := m.styles
	speed := m.replaySpeed
	pace := "as fast as possible"
	if speed > 0 {
		pace = "speed " + strconv.FormatFloat(speed, 'g', 3, 64) + "×"
	}
	out := []string{s.HeaderValue.Render(pace)}
	if r, ok := m.replay.(interface{ RecordedAt() time.Time }); ok {
		if at := r.RecordedAt(); !at.IsZero() {
			out = append(out, s.HeaderKey.Render("recorded ")+s.HeaderValue.Render(at.Local().Format("2006-01-02 15:04")))
		}
	}
	if m.replayPaused {
		out = append(out, s.Warning.Render("PAUSED: space resumes, . steps one call"))
	}
	return out
}

// callClock is the time of day the timeline shows for a call: when it
// started, as recorded in a replay (the replay plays events dated now).
func (m *Model) callClock(c *observe.Call) time.Time {
	if m.replay != nil {
		if t, ok := m.replay.RecordedStart(c.ID); ok {
			return t.Local()
		}
	}
	return c.Started.Local()
}
