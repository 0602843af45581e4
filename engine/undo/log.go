// Package undo keeps what it takes to take back a call's change to a
// notebook, and takes it back. Before a change is saved, the engine makes
// a Record of it: the cells the change touched, as they were before and
// after it, and where they were. A person reverts a call from the
// workbench (the engine's Undo, which saves the revert like any change); an
// agent has no tool for it. The records of the last MaxRecords changes per
// notebook are kept, within MaxBytes for the whole engine, oldest dropped
// first.
//
// Records are kept per notebook handle N (the engine's document): a
// notebook released and used again starts with none.
package undo

import (
	"slices"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Bounds on the records.
const (
	MaxRecords = 200      // per notebook
	MaxBytes   = 32 << 20 // in all: sources and outputs count
)

// Tool is the name an undo's own record goes by in the timeline and in
// texts: it is the person's action, not a tool an agent can call.
const Tool = "undo"

// Call is which call a change belongs to.
type Call struct {
	ID      string
	Tool    string
	Session string // "" for the person at the workbench
	At      time.Time
}

// Record is one change a call made to one notebook.
type Record[N comparable] struct {
	seq   uint64
	call  Call
	doc   N
	cells []notebook.CellDiff
	// order is the cell ids before the change, in order, kept when the
	// change deleted or moved cells: where they go back to.
	order []string
	size  int

	reverts  []*Record[N] // an undo: the records it reverted
	undoneBy *Record[N]   // the undo in effect that reverted this one
	dropped  bool         // fell out of the log
}

// NewRecord is the record of the change call made from before to after (a
// notebook's cells), nil when it touched no cell. reverts are the records
// the change reverts, when it is an undo. It does not modify the cells.
func NewRecord[N comparable](call Call, doc N, before, after []*notebook.Cell, reverts []*Record[N]) *Record[N] {
	cells, order := diffCells(before, after)
	if len(cells) == 0 {
		return nil
	}
	r := &Record[N]{call: call, doc: doc, cells: cells, order: order, reverts: reverts}
	r.size = 256 + 16*len(order)
	for _, c := range cells {
		r.size += 64 + cellSize(c.Before) + cellSize(c.After)
	}
	return r
}

// Call is the call that made the change.
func (r *Record[N]) Call() Call { return r.call }

// Reverts are the records the change reverted, when it was an undo.
func (r *Record[N]) Reverts() []*Record[N] { return r.reverts }

// diffCells lists the cells a change touched (compared as the change made
// them: notebook.ChangedFields) and, when it deleted or moved cells, the
// ids of before in order: where they go back to. A cell it inserted
// counts as written whole.
func diffCells(before, after []*notebook.Cell) ([]notebook.CellDiff, []string) {
	cells, reordered := notebook.Diff(before, after, notebook.ChangedFields)
	for i := range cells {
		if cells[i].Before == nil {
			cells[i].Fields = notebook.ContentFields
		}
	}
	var order []string
	if reordered {
		order = make([]string, len(before))
		for i, c := range before {
			order[i] = c.ID
		}
	}
	return cells, order
}

// cellSize is about how much memory a cell holds.
func cellSize(c *notebook.Cell) int {
	if c == nil {
		return 0
	}
	n := 96 + len(c.ID) + len(c.Type) + len(c.Source) + len(c.Metadata) + len(c.Attachments)
	for k, v := range c.Extra {
		n += len(k) + len(v)
	}
	for _, o := range c.Outputs {
		n += 128 + len(o.OutputType) + len(o.Name) + len(o.Text) + len(o.Metadata) + len(o.EName) + len(o.EValue)
		for k, v := range o.Data {
			n += len(k) + len(v)
		}
		for _, l := range o.Traceback {
			n += len(l)
		}
		for k, v := range o.Extra {
			n += len(k) + len(v)
		}
	}
	return n
}

// Log holds the records of every notebook in use. Records of one notebook
// are added only under its writer's lock; mu guards the lists.
type Log[N comparable] struct {
	mu         sync.Mutex
	seq        uint64
	byDoc      map[N][]*Record[N] // oldest first
	calls      map[string]int     // records kept by call id
	bytes      int
	maxRecords int // per notebook
	maxBytes   int // in all
}

// NewLog returns an empty log with the bounds MaxRecords and MaxBytes.
func NewLog[N comparable]() *Log[N] {
	return &Log[N]{byDoc: map[N][]*Record[N]{}, calls: map[string]int{}, maxRecords: MaxRecords, maxBytes: MaxBytes}
}

// Bounds are the log's bounds: records per notebook, bytes in all.
func (l *Log[N]) Bounds() (records, bytes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.maxRecords, l.maxBytes
}

// SetBounds changes the bounds (tests shorten them); the records beyond
// them go with the next Add.
func (l *Log[N]) SetBounds(records, bytes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.maxRecords, l.maxBytes = records, bytes
}

// Add keeps r (nil: none), dropping the oldest records beyond the bounds
// (r itself when it alone is larger than all that may be kept).
func (l *Log[N]) Add(r *Record[N]) {
	if r == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	r.seq = l.seq
	l.byDoc[r.doc] = append(l.byDoc[r.doc], r)
	l.calls[r.call.ID]++
	l.bytes += r.size
	for len(l.byDoc[r.doc]) > l.maxRecords {
		l.dropOldestLocked(r.doc)
	}
	for l.bytes > l.maxBytes {
		var oldest N
		found := false
		for d, rs := range l.byDoc {
			if len(rs) > 0 && (!found || rs[0].seq < l.byDoc[oldest][0].seq) {
				oldest, found = d, true
			}
		}
		if !found {
			break
		}
		l.dropOldestLocked(oldest)
	}
}

func (l *Log[N]) dropOldestLocked(d N) {
	rs := l.byDoc[d]
	r := rs[0]
	rs[0] = nil
	rs = rs[1:]
	if len(rs) == 0 {
		delete(l.byDoc, d)
	} else {
		l.byDoc[d] = rs
	}
	l.bytes -= r.size
	if l.calls[r.call.ID]--; l.calls[r.call.ID] <= 0 {
		delete(l.calls, r.call.ID)
	}
	// Other records may point at it (an undo and what it reverted): let
	// go of the cells, keep who made it.
	r.dropped, r.cells, r.order = true, nil, nil
}

// Forget drops the records of a notebook no longer in use.
func (l *Log[N]) Forget(d N) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.byDoc[d]) > 0 {
		l.dropOldestLocked(d)
	}
}

// Records returns a copy of d's list, oldest first.
func (l *Log[N]) Records(d N) []*Record[N] {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byDoc[d])
}

// Find returns the records callID made and their notebook, oldest first
// (the zero N when none is kept). A call acts on one notebook.
func (l *Log[N]) Find(callID string) (N, []*Record[N]) {
	var none N
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls[callID] == 0 {
		return none, nil
	}
	for d, rs := range l.byDoc {
		var found []*Record[N]
		for _, r := range rs {
			if r.call.ID == callID {
				found = append(found, r)
			}
		}
		if len(found) > 0 {
			return d, found
		}
	}
	return none, nil
}

// Has reports whether changes of callID are kept.
func (l *Log[N]) Has(callID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[callID] > 0
}

// UndoneBy is the undo in effect that reverted one of rs, or nil.
func (l *Log[N]) UndoneBy(rs []*Record[N]) *Record[N] {
	l.mu.Lock()
	defer l.mu.Unlock()
	var by *Record[N]
	for _, r := range rs {
		if r.undoneBy != nil {
			by = r.undoneBy
		}
	}
	return by
}

// MarkUndone records that made (the saved record of an undo; nil: it
// changed nothing) reverted rs: they count as undone, and what an earlier
// undo among them had reverted is in effect again.
func (l *Log[N]) MarkUndone(rs []*Record[N], made *Record[N]) {
	if made == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range rs {
		r.undoneBy = made
		for _, earlier := range r.reverts {
			if earlier.undoneBy == r {
				earlier.undoneBy = nil // in effect again
			}
		}
	}
}

// view is a record as read under the log's lock: dropping a record
// (another notebook's change pushing the log past its bounds) clears its
// cells, and an undo marks records undone, while an undo reads them.
type view struct {
	seq     uint64
	call    Call
	cells   []notebook.CellDiff // never modified: a drop only lets go of them
	order   []string
	dropped bool
	undone  bool // an undo in effect reverted it
}

// views reads records under the lock.
func (l *Log[N]) views(rs []*Record[N]) []*view {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*view, len(rs))
	for i, r := range rs {
		out[i] = &view{seq: r.seq, call: r.call, cells: r.cells, order: r.order, dropped: r.dropped, undone: r.undoneBy != nil}
	}
	return out
}
