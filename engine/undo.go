package engine

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Undo records. Before a tool call's change to a notebook is saved, the
// engine keeps what it takes to take it back: the cells the change touched,
// as they were before and after it, and where they were. A person reverts a
// call from the workbench (Undo, undo_revert.go); an agent has no tool for
// it. The records of the last maxUndoRecords changes per notebook are kept,
// within maxUndoBytes for the whole engine, oldest dropped first.

// Bounds on the undo records.
const (
	maxUndoRecords = 200      // per notebook
	maxUndoBytes   = 32 << 20 // per engine: sources and outputs count
)

// undoTool is the name an undo's own record goes by in the timeline and in
// texts: it is the person's action, not a tool an agent can call.
const undoTool = "undo"

// callIdentity is which call a change belongs to: the call registry's
// identity of the call (calls.IdentityOf), or the one Undo gives its own
// change; read by mutate.
type callIdentity struct {
	id      string
	tool    string
	session string // "" for the person at the workbench
	at      time.Time

	reverts []*undoRecord // an undo: the records it reverts
	made    *undoRecord   // set by mutate once the change is saved
}

type callIdentityKey struct{}

// withCallIdentity returns ctx carrying the call a change belongs to.
func withCallIdentity(ctx context.Context, id *callIdentity) context.Context {
	return context.WithValue(ctx, callIdentityKey{}, id)
}

type noUndoKey struct{}

// withoutUndo marks a change as not to be recorded: the clearing of
// outputs before a run, which only the run's own outputs follow.
func withoutUndo(ctx context.Context) context.Context {
	return context.WithValue(ctx, noUndoKey{}, true)
}

// undoIdentity is the call a change in ctx is recorded under, or nil.
func undoIdentity(ctx context.Context) *callIdentity {
	if ctx.Value(noUndoKey{}) != nil {
		return nil
	}
	if id, ok := ctx.Value(callIdentityKey{}).(*callIdentity); ok {
		return id
	}
	if c, ok := calls.IdentityOf(ctx); ok {
		return &callIdentity{id: c.ID, tool: c.Tool, session: c.Session, at: c.Started}
	}
	return nil
}

// undoRecord is one change a call made to one notebook.
type undoRecord struct {
	seq   uint64
	call  callIdentity // reverts and made unset
	doc   *document
	cells []notebook.CellDiff
	// order is the cell ids before the change, in order, kept when the
	// change deleted or moved cells: where they go back to.
	order []string
	size  int

	reverts  []*undoRecord // an undo: the records it reverted
	undoneBy *undoRecord   // the undo in effect that reverted this one
	dropped  bool          // fell out of the log
}

// undoLog holds the records of every notebook in use. Records of one
// notebook are added only under its writeMu; mu guards the lists.
type undoLog struct {
	mu         sync.Mutex
	seq        uint64
	byDoc      map[*document][]*undoRecord // oldest first
	calls      map[string]int              // records kept by call id
	bytes      int
	maxRecords int // per notebook
	maxBytes   int // in all
}

func newUndoLog() *undoLog {
	return &undoLog{byDoc: map[*document][]*undoRecord{}, calls: map[string]int{}, maxRecords: maxUndoRecords, maxBytes: maxUndoBytes}
}

// add keeps r, dropping the oldest records beyond the bounds (r itself
// when it alone is larger than all that may be kept).
func (l *undoLog) add(r *undoRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	r.seq = l.seq
	l.byDoc[r.doc] = append(l.byDoc[r.doc], r)
	l.calls[r.call.id]++
	l.bytes += r.size
	for len(l.byDoc[r.doc]) > l.maxRecords {
		l.dropOldestLocked(r.doc)
	}
	for l.bytes > l.maxBytes {
		var oldest *document
		for d, rs := range l.byDoc {
			if len(rs) > 0 && (oldest == nil || rs[0].seq < l.byDoc[oldest][0].seq) {
				oldest = d
			}
		}
		if oldest == nil {
			break
		}
		l.dropOldestLocked(oldest)
	}
}

func (l *undoLog) dropOldestLocked(d *document) {
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
	if l.calls[r.call.id]--; l.calls[r.call.id] <= 0 {
		delete(l.calls, r.call.id)
	}
	// Other records may point at it (an undo and what it reverted): let
	// go of the cells, keep who made it.
	r.dropped, r.cells, r.order = true, nil, nil
}

// forget drops the records of a notebook no longer in use.
func (l *undoLog) forget(d *document) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.byDoc[d]) > 0 {
		l.dropOldestLocked(d)
	}
}

// records returns a copy of d's list, oldest first.
func (l *undoLog) records(d *document) []*undoRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byDoc[d])
}

// undoView is a record as read under the log's lock: dropping a record
// (another notebook's change pushing the log past its bounds) clears its
// cells, and an undo marks records undone, while an undo reads them.
type undoView struct {
	seq     uint64
	call    callIdentity
	doc     *document
	cells   []notebook.CellDiff // never modified: a drop only lets go of them
	order   []string
	dropped bool
	undone  bool // an undo in effect reverted it
}

// views reads records under the lock.
func (l *undoLog) views(rs []*undoRecord) []*undoView {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*undoView, len(rs))
	for i, r := range rs {
		out[i] = &undoView{seq: r.seq, call: r.call, doc: r.doc, cells: r.cells, order: r.order, dropped: r.dropped, undone: r.undoneBy != nil}
	}
	return out
}

// find returns the records callID made and their notebook, oldest first.
// A call acts on one notebook.
func (l *undoLog) find(callID string) (*document, []*undoRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls[callID] == 0 {
		return nil, nil
	}
	for d, rs := range l.byDoc {
		var found []*undoRecord
		for _, r := range rs {
			if r.call.id == callID {
				found = append(found, r)
			}
		}
		if len(found) > 0 {
			return d, found
		}
	}
	return nil, nil
}

// has reports whether changes of callID are kept.
func (l *undoLog) has(callID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[callID] > 0
}

// recordChange is mutate's hook: the record of the change from before to
// after (a notebook's cells), when ctx belongs to a call whose changes are
// kept and the change touched any cell; nil otherwise. It must not modify
// the cells.
func recordChange(ctx context.Context, d *document, before, after []*notebook.Cell) *undoRecord {
	id := undoIdentity(ctx)
	if id == nil {
		return nil
	}
	cells, order := diffCells(before, after)
	if len(cells) == 0 {
		return nil
	}
	r := &undoRecord{call: *id, doc: d, cells: cells, order: order, reverts: id.reverts}
	r.call.reverts, r.call.made = nil, nil
	r.size = 256 + 16*len(order)
	for _, c := range cells {
		r.size += 64 + cellSize(c.Before) + cellSize(c.After)
	}
	return r
}

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

// keepUndo keeps a saved change's record (nil: none), and tells an undo
// which record its own change made.
func (e *Engine) keepUndo(ctx context.Context, r *undoRecord) {
	if r == nil {
		return
	}
	e.undo.add(r)
	if id := undoIdentity(ctx); id != nil && id.reverts != nil {
		id.made = r
	}
}
