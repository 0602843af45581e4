package observe

import (
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// A call's time is the server's and the person's: a call held for approval
// (or while new calls were paused) waits for someone before it runs, and
// that wait measures the person, not the server. The timeline, the stats
// and the took: search measure the run; the time held is shown beside it.

// eventTime is the event's time, or def when it has none.
func eventTime(ev event.Event, def time.Time) time.Time {
	if ev.Time.IsZero() {
		return def
	}
	return ev.Time
}

// endHold records how long the call was held when it is let through or
// refused, unless the engine said (event.CallEvent.Held, on the outcome).
func (c *Call) endHold(ev event.Event) {
	if c.Held > 0 || c.HeldSince.IsZero() {
		return
	}
	if end := eventTime(ev, time.Time{}); end.After(c.HeldSince) {
		c.Held = end.Sub(c.HeldSince)
	}
}

// HeldTime is how long the call waited for a person: so far, at now, while
// it is held.
func (c *Call) HeldTime(now time.Time) time.Duration {
	if c.Status == event.CallHeld && !c.HeldSince.IsZero() {
		return max(now.Sub(c.HeldSince), 0)
	}
	return c.Held
}

// RunTime is how long the server worked on the call, its time held left
// out: so far, at now, while it runs; nothing while it is held.
func (c *Call) RunTime(now time.Time) time.Duration {
	switch c.Status {
	case event.CallHeld:
		if c.HeldSince.IsZero() {
			return max(now.Sub(c.Started), 0)
		}
		return max(c.HeldSince.Sub(c.Started), 0)
	case event.CallRunning:
		return max(now.Sub(c.Started)-c.Held, 0)
	}
	return max(c.Duration-c.Held, 0)
}

// CellFailed reports whether the call answered but the code it ran raised
// (or was interrupted): the call is ok, the cell is not.
func (c *Call) CellFailed() bool {
	return c.CellError != "" && c.Status == event.CallOK
}
