package observe

import (
	"sort"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// StatsRow is what one tool (or one session) did over the calls the
// timeline holds.
type StatsRow struct {
	Name   string // the tool, or the session id
	Client string // for a session row: its client's name, when known

	Calls          int
	OK             int // answered, and the code they ran (if any) raised nothing
	CellErrors     int // answered, but the code they ran raised or was interrupted
	ToolErrors     int // results with isError: the agent was told what failed
	ProtocolErrors int // JSON-RPC errors: no result at all
	Denied         int
	Cancelled      int
	Active         int // running or held now

	// Durations of the calls that ran to an end (ok, error, cancelled):
	// nearest-rank percentiles of their run, the time they were held for
	// a person left out (times.go). Denied calls waited for a person and
	// did not run, so they are left out, as are calls still active.
	Timed              int
	P50, P95, P99, Max time.Duration
	// Held is the time the calls waited for a person, in all.
	Held time.Duration

	// What the results cost the agent's context, on the wire (see
	// event.CallEvent.TextBytes).
	TextBytes, StructuredBytes, ImageBytes int64
}

// ResultBytes is the total of the result's parts.
func (r StatsRow) ResultBytes() int64 { return r.TextBytes + r.StructuredBytes + r.ImageBytes }

// Stats is the per-tool and per-session summary of the timeline, and its
// slowest calls.
type Stats struct {
	Tools    []StatsRow
	Sessions []StatsRow
	Slowest  []*Call // finished calls, slowest first
	Calls    int     // calls counted (those the timeline holds)
	Dropped  int     // older calls the timeline no longer holds
}

// ComputeStats summarises every call of s; slowest bounds the list of
// slowest calls. Rows come sorted by name; see SortStats.
func ComputeStats(s *State, slowest int) Stats {
	st := Stats{Calls: len(s.Calls), Dropped: s.CallsDropped}
	tools := map[string]*StatsRow{}
	sessions := map[string]*StatsRow{}
	durs := map[*StatsRow][]time.Duration{}
	var timed []*Call
	for _, c := range s.Calls {
		t := rowFor(tools, c.Tool)
		se := rowFor(sessions, c.Session)
		se.Client = s.Sessions[c.Session]
		ran := false
		for _, r := range []*StatsRow{t, se} {
			r.Calls++
			switch c.Status {
			case event.CallOK:
				if c.CellFailed() {
					r.CellErrors++
				} else {
					r.OK++
				}
				ran = true
			case event.CallError:
				if c.ErrorKind() == "protocol" {
					r.ProtocolErrors++
				} else {
					r.ToolErrors++
				}
				ran = true
			case event.CallDenied:
				r.Denied++
			case event.CallCancelled:
				r.Cancelled++
				ran = true
			case event.CallRunning, event.CallHeld:
				r.Active++
			}
			tb, sb, ib := c.resultBytes()
			r.TextBytes += tb
			r.StructuredBytes += sb
			r.ImageBytes += ib
			r.Held += c.Held
			if ran {
				durs[r] = append(durs[r], c.RunTime(time.Time{}))
			}
		}
		if ran {
			timed = append(timed, c)
		}
	}
	for _, r := range tools {
		r.setDurations(durs[r])
		st.Tools = append(st.Tools, *r)
	}
	for _, r := range sessions {
		r.setDurations(durs[r])
		st.Sessions = append(st.Sessions, *r)
	}
	SortStats(st.Tools, SortName)
	SortStats(st.Sessions, SortName)
	sort.SliceStable(timed, func(i, j int) bool { return timed[i].RunTime(time.Time{}) > timed[j].RunTime(time.Time{}) })
	if len(timed) > slowest {
		timed = timed[:slowest]
	}
	st.Slowest = timed
	return st
}

func rowFor(m map[string]*StatsRow, name string) *StatsRow {
	r := m[name]
	if r == nil {
		r = &StatsRow{Name: name}
		m[name] = r
	}
	return r
}

// setDurations fills the percentiles from the durations of the calls
// that ran.
func (r *StatsRow) setDurations(d []time.Duration) {
	r.Timed = len(d)
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	r.P50, r.P95, r.P99 = Percentile(d, 50), Percentile(d, 95), Percentile(d, 99)
	r.Max = d[len(d)-1]
}

// Percentile is the nearest-rank p-th percentile of sorted: the smallest
// value that at least p percent of the values do not exceed.
func Percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[clampInt(rank, 1, len(sorted))-1]
}

func clampInt(v, lo, hi int) int {
	return min(max(v, lo), hi)
}

// resultBytes is what the call's result weighs on the wire. Recordings
// made before the sizes were measured have none: their text and
// structuredContent are counted as kept (and as they were before any cut).
func (c *Call) resultBytes() (text, structured, images int64) {
	if c.TextBytes > 0 || c.StructuredBytes > 0 || c.ImageBytes > 0 {
		return int64(c.TextBytes), int64(c.StructuredBytes), int64(c.ImageBytes)
	}
	return int64(len(c.Text) + c.TextCut), int64(len(c.Structured) + c.StructuredCut), 0
}

// SortColumn names a column the stats tables sort by.
type SortColumn int

// The sortable columns, in the order a key cycles through them.
const (
	SortName SortColumn = iota
	SortCalls
	SortErrors
	SortP50
	SortP95
	SortP99
	SortMax
	SortBytes
	sortColumns
)

// Next is the column after c, wrapping round.
func (c SortColumn) Next() SortColumn { return (c + 1) % sortColumns }

func (c SortColumn) String() string {
	return [...]string{"name", "calls", "errors", "p50", "p95", "p99", "max", "result bytes"}[c]
}

// SortStats orders rows by col: names A to Z, every other column largest
// first; ties by name.
func SortStats(rows []StatsRow, col SortColumn) {
	key := func(r StatsRow) int64 {
		switch col {
		case SortCalls:
			return int64(r.Calls)
		case SortErrors:
			return int64(r.CellErrors + r.ToolErrors + r.ProtocolErrors)
		case SortP50:
			return int64(r.P50)
		case SortP95:
			return int64(r.P95)
		case SortP99:
			return int64(r.P99)
		case SortMax:
			return int64(r.Max)
		case SortBytes:
			return r.ResultBytes()
		}
		return 0
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if col != SortName {
			if a, b := key(rows[i]), key(rows[j]); a != b {
				return a > b
			}
		}
		return strings.ToLower(rows[i].Name) < strings.ToLower(rows[j].Name)
	})
}
