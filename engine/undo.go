package engine

import (
	"bytes"
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

// cellField names the parts of a cell a change may set.
type cellField uint8

const (
	fieldType cellField = 1 << iota
	fieldSource
	fieldMetadata
	fieldAttachments
	fieldOutputs
	fieldCount
)

// contentFields are what a person or an agent writes into a cell; outputs
// and the execution count are the kernel's.
const contentFields = fieldType | fieldSource | fieldMetadata | fieldAttachments

// undoCell is one cell a change touched.
type undoCell struct {
	id     string
	before *notebook.Cell // nil: the change inserted it
	after  *notebook.Cell // nil: the change deleted it
	from   int            // index before the change (-1: inserted)
	to     int            // index after it (-1: deleted)
	fields cellField      // for a cell in both: what the change set
	moved  bool           // its place among the other cells changed
}

// undoRecord is one change a call made to one notebook.
type undoRecord struct {
	seq   uint64
	call  callIdentity // reverts and made unset
	doc   *document
	cells []undoCell
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
	cells   []undoCell // never modified: a drop only lets go of them
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
		r.size += 64 + cellSize(c.before) + cellSize(c.after)
	}
	return r
}

// diffCells lists the cells that differ between two lists, and the ids of
// before in order when cells were deleted or moved. Cells are compared by
// pointer: a change replaces the cells it changes (copy on write).
func diffCells(before, after []*notebook.Cell) ([]undoCell, []string) {
	if len(before) == len(after) {
		var cells []undoCell
		simple := true
		for i := range before {
			b, a := before[i], after[i]
			if b == a {
				continue
			}
			if b.ID != a.ID {
				simple = false
				break
			}
			cells = append(cells, undoCell{id: a.ID, before: b, after: a, from: i, to: i, fields: changedFields(b, a)})
		}
		if simple {
			return cells, nil
		}
	}
	beforeAt := make(map[string]int, len(before))
	for i, c := range before {
		beforeAt[c.ID] = i
	}
	afterAt := make(map[string]int, len(after))
	for i, c := range after {
		afterAt[c.ID] = i
	}
	// Cells in both whose order among the others changed were moved: the
	// longest run of them in the same order stayed.
	var common []int // after-positions, in before order
	for _, c := range before {
		if j, ok := afterAt[c.ID]; ok {
			common = append(common, j)
		}
	}
	stayed := longestIncreasing(common)
	var cells []undoCell
	reordered := false
	for i, b := range before {
		j, ok := afterAt[b.ID]
		if !ok {
			cells = append(cells, undoCell{id: b.ID, before: b, from: i, to: -1})
			reordered = true
			continue
		}
		a := after[j]
		moved := !stayed[j]
		if a == b && !moved {
			continue
		}
		uc := undoCell{id: b.ID, before: b, after: a, from: i, to: j, moved: moved}
		if a != b {
			uc.fields = changedFields(b, a)
		}
		reordered = reordered || moved
		cells = append(cells, uc)
	}
	for j, a := range after {
		if _, ok := beforeAt[a.ID]; !ok {
			cells = append(cells, undoCell{id: a.ID, after: a, from: -1, to: j, fields: contentFields})
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

// longestIncreasing marks the values of a longest strictly increasing
// subsequence of xs (distinct values).
func longestIncreasing(xs []int) map[int]bool {
	tails := []int{} // index into xs of the smallest tail of each length
	prev := make([]int, len(xs))
	for i, x := range xs {
		k, _ := slices.BinarySearchFunc(tails, x, func(t, x int) int { return xs[t] - x })
		if k > 0 {
			prev[i] = tails[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	in := make(map[int]bool, len(tails))
	if len(tails) == 0 {
		return in
	}
	for i := tails[len(tails)-1]; i >= 0; i = prev[i] {
		in[xs[i]] = true
	}
	return in
}

// changedFields says which parts of a cell a change set. Parts it did not
// touch are shared with the cell before it, so this compares cheaply.
func changedFields(b, a *notebook.Cell) cellField {
	var f cellField
	if b.Type != a.Type {
		f |= fieldType
	}
	if b.Source != a.Source {
		f |= fieldSource
	}
	if !bytes.Equal(b.Metadata, a.Metadata) {
		f |= fieldMetadata
	}
	if !bytes.Equal(b.Attachments, a.Attachments) {
		f |= fieldAttachments
	}
	if len(b.Outputs) != len(a.Outputs) || (len(b.Outputs) > 0 && &b.Outputs[0] != &a.Outputs[0]) {
		f |= fieldOutputs
	}
	if !intPtrEqual(b.ExecutionCount, a.ExecutionCount) {
		f |= fieldCount
	}
	return f
}

func intPtrEqual(a, b *int) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
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
