package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// UndoResult says what an undo did.
type UndoResult struct {
	ID       string    // the undo's own call id: undoing it brings the call back
	Of       string    // the call reverted
	Tool     string    // the call's tool
	At       time.Time // when the call started
	Notebook string
	Changes  []string // one phrase per cell: "cell 7cb73ed2 removed"
	Summary  string   // "undo of insert_cell 14:31:23 by the person"
}

// UndoConflictError refuses an undo because a cell the call touched is no
// longer as the call left it: reverting would clobber what came after.
type UndoConflictError struct {
	CellID string
	Verb   string // changed, deleted, moved, put back
	// The change that did it, when one kept for undo did.
	ByCall    string
	ByTool    string
	BySession string // "" for the person
	ByClient  SessionRef
	At        time.Time
}

func (e *UndoConflictError) Error() string {
	if e.ByCall == "" {
		return fmt.Sprintf("cell %s was %s after this call, not by a change kept for undo (an edit outside this server, a run, or a change too old to be kept); nothing was undone", e.CellID, e.Verb)
	}
	who := "the person"
	if e.BySession != "" {
		who = "session " + e.ByClient.String()
	}
	return fmt.Sprintf("cell %s was %s by %s at %s (%s) after this call; undo that first", e.CellID, e.Verb, e.ByTool, clock(e.At), who)
}

// CallerCanFix: the person can undo the later change first.
func (*UndoConflictError) CallerCanFix() bool { return true }

// clock is a time as the timeline shows it.
func clock(t time.Time) string { return t.Local().Format("15:04:05") }

// Undo reverts the changes a finished tool call (or an earlier undo) made
// to a notebook: cells it inserted go, cells it changed or deleted come
// back (deleted ones next to the cells they were next to), moved cells go
// back. It is saved like any change, and kept as one, so it can be undone
// in turn. When a cell the call touched was changed again since, nothing
// is changed and the error (an *UndoConflictError) names the cell and the
// later change. The session that made the call is told on its next result
// on the notebook.
func (e *Engine) Undo(ctx context.Context, callID string) (UndoResult, error) {
	e.calls.mu.Lock()
	_, running := e.calls.calls[callID]
	e.calls.mu.Unlock()
	if running {
		return UndoResult{}, Userf("call %s has not finished; undo it once it has", callID)
	}
	d, rs := e.undo.find(callID)
	if d == nil {
		return UndoResult{}, Userf("call %s has no change kept for undo: it changed no notebook in use, or it is older than the changes kept (the last %d per notebook, %d MiB in all)", callID, e.undo.maxRecords, e.undo.maxBytes>>20)
	}
	first := rs[0].call
	e.undo.mu.Lock()
	var undoneBy *undoRecord
	for _, r := range rs {
		if r.undoneBy != nil {
			undoneBy = r.undoneBy
		}
	}
	e.undo.mu.Unlock()
	if undoneBy != nil {
		return UndoResult{}, Userf("%s of %s was already undone at %s; undo that undo to bring it back", first.tool, clock(first.at), clock(undoneBy.call.at))
	}
	e.mu.RLock()
	inUse := len(e.namesLocked(d)) > 0
	e.mu.RUnlock()
	if !inUse {
		return UndoResult{}, Userf("notebook %q is no longer in use; nothing was undone", d.name)
	}
	id := &callIdentity{
		id:      fmt.Sprintf("undo-%d", e.undoSeq.Add(1)),
		tool:    undoTool,
		at:      time.Now(),
		reverts: rs,
	}
	res := UndoResult{ID: id.id, Of: callID, Tool: first.tool, At: first.at, Notebook: d.name,
		Summary: fmt.Sprintf("undo of %s %s by the person", first.tool, clock(first.at))}
	var firstCell string
	err := e.mutate(withCallIdentity(ctx, id), d, "", false, func(nb *notebook.Notebook) ([]NotebookEvent, error) {
		res.Changes = nil
		mine, all := e.undo.views(rs), e.undo.views(e.undo.records(d))
		if len(mine[0].cells) > 0 {
			firstCell = mine[0].cells[0].id
		}
		var events []NotebookEvent
		for i := len(mine) - 1; i >= 0; i-- {
			evs, changes, err := e.revert(nb, mine[i], all)
			if err != nil {
				return nil, err
			}
			events = append(events, evs...)
			res.Changes = append(res.Changes, changes...)
		}
		return events, nil
	})
	if err != nil {
		// Refused or failed: nothing changed, and the person is told
		// where they asked; the timeline keeps only undos that happened.
		return UndoResult{}, err
	}
	e.undo.mu.Lock()
	if id.made != nil {
		for _, r := range rs {
			r.undoneBy = id.made
			for _, earlier := range r.reverts {
				if earlier.undoneBy == r {
					earlier.undoneBy = nil // in effect again
				}
			}
		}
	}
	e.undo.mu.Unlock()
	// The timeline shows the undo as an entry of its own, which the
	// person can select and undo in turn.
	entry := CallEvent{ID: id.id, Tool: undoTool, Status: CallRunning, Started: id.at, Summary: res.Summary, UndoOf: callID, Notebook: d.name}
	e.calls.publishCall(EvCallStarted, entry)
	entry.Status, entry.Duration = CallOK, time.Since(id.at)
	entry.Undoable = id.made != nil
	entry.Text = res.Summary + ": " + strings.Join(res.Changes, ", ")
	entry.CellID = firstCell
	e.calls.publishCall(EvCallFinished, entry)
	e.tellUndone(d, rs, res.Changes)
	return res, nil
}

// tellUndone leaves the sessions whose changes an undo reverted (or, for
// an undo of an undo, brought back) a notice on the notebook.
func (e *Engine) tellUndone(d *document, rs []*undoRecord, changes []string) {
	// A notice is one line: an undo of a long delete names the first
	// cells, as an outside edit's does, and counts the rest.
	if len(changes) > maxListedChanges {
		changes = append(changes[:maxListedChanges:maxListedChanges], fmt.Sprintf("and %d more cells", len(changes)-maxListedChanges))
	}
	what := strings.Join(changes, ", ")
	for _, r := range rs {
		if r.call.session != "" {
			e.Notify(r.call.session, d.path, fmt.Sprintf("a person reverted your %s of %s (%s)", r.call.tool, clock(r.call.at), what))
		}
		for _, earlier := range r.reverts {
			if earlier.call.session != "" {
				e.Notify(earlier.call.session, d.path, fmt.Sprintf("a person undid their revert of your %s of %s (%s)", earlier.call.tool, clock(earlier.call.at), what))
			}
		}
	}
}

// revert takes record r back on the working copy nb, or changes nothing
// and says which cell stands in the way. all is the notebook's records,
// oldest first, for naming the later change.
func (e *Engine) revert(nb *notebook.Notebook, r *undoView, all []*undoView) ([]NotebookEvent, []string, error) {
	if r.dropped {
		return nil, nil, Userf("the change of %s of %s is no longer kept for undo", r.call.tool, clock(r.call.at))
	}
	for _, uc := range r.cells {
		if err := e.undoConflict(nb, r, uc, all); err != nil {
			return nil, nil, err
		}
	}
	var events []NotebookEvent
	var changes []string
	byID := make(map[string]*undoCell, len(r.cells))
	for i := range r.cells {
		byID[r.cells[i].id] = &r.cells[i]
	}
	// Cells the call inserted go.
	for _, uc := range r.cells {
		if uc.before != nil {
			continue
		}
		i := nb.IndexOf(uc.id)
		nb.Cells = append(nb.Cells[:i], nb.Cells[i+1:]...)
		events = append(events, NotebookEvent{Op: OpDelete, Index: i, CellIDs: []string{uc.id}})
		changes = append(changes, "cell "+uc.id+" removed")
	}
	// Cells it changed get back what it set, and keep what came since in
	// what it did not touch (outputs of a later run).
	for _, uc := range r.cells {
		if uc.before == nil || uc.after == nil || uc.fields == 0 {
			continue
		}
		i := nb.IndexOf(uc.id)
		nc := *nb.Cells[i]
		restoreFields(&nc, uc.before, uc.fields)
		nb.Cells[i] = &nc
		events = append(events, NotebookEvent{Op: OpEdit, Index: i, Cells: []CellSnapshot{e.snapshotCell(r.doc.name, &nc)}})
		changes = append(changes, "cell "+uc.id+" "+restoredWhat(uc.fields))
	}
	// Cells it deleted or moved go back next to the cells they were next
	// to, in their old order.
	pending := map[string]bool{}
	for _, uc := range r.cells {
		if uc.after == nil || uc.moved {
			pending[uc.id] = true
		}
	}
	for k, id := range r.order {
		uc := byID[id]
		if uc == nil || !pending[id] {
			continue
		}
		delete(pending, id)
		c, from := uc.before, -1
		if uc.after != nil {
			from = nb.IndexOf(id)
			c = nb.Cells[from]
			nb.Cells = append(nb.Cells[:from], nb.Cells[from+1:]...)
		}
		at := placeFor(nb, r.order, k, pending, uc.from)
		nb.Cells = append(nb.Cells[:at], append([]*notebook.Cell{c}, nb.Cells[at:]...)...)
		snap := []CellSnapshot{e.snapshotCell(r.doc.name, c)}
		if from < 0 {
			events = append(events, NotebookEvent{Op: OpInsert, Index: at, Cells: snap})
			changes = append(changes, fmt.Sprintf("cell %s restored at index %d", id, at))
		} else {
			events = append(events, NotebookEvent{Op: OpMove, Index: at, From: from, Cells: snap})
			changes = append(changes, fmt.Sprintf("cell %s moved back to index %d", id, at))
		}
	}
	return events, changes, nil
}

// placeFor is where the k-th cell of order goes back to: after the nearest
// cell before it in order that is in nb, else before the nearest one after
// it, else at its old index as far as nb allows. Cells still to be placed
// do not count.
func placeFor(nb *notebook.Notebook, order []string, k int, pending map[string]bool, old int) int {
	for j := k - 1; j >= 0; j-- {
		if pending[order[j]] {
			continue
		}
		if i := nb.IndexOf(order[j]); i >= 0 {
			return i + 1
		}
	}
	for j := k + 1; j < len(order); j++ {
		if pending[order[j]] {
			continue
		}
		if i := nb.IndexOf(order[j]); i >= 0 {
			return i
		}
	}
	return min(max(old, 0), len(nb.Cells))
}

// undoConflict checks one cell of r against the notebook now.
func (e *Engine) undoConflict(nb *notebook.Notebook, r *undoView, uc undoCell, all []*undoView) error {
	i := nb.IndexOf(uc.id)
	switch {
	case uc.after == nil:
		if i >= 0 {
			return e.conflictError(r, uc.id, "put back", all, func(l *undoCell) bool { return l.before == nil })
		}
	case i < 0:
		return e.conflictError(r, uc.id, "deleted", all, func(l *undoCell) bool { return l.after == nil })
	default:
		fields := uc.fields
		if uc.before == nil {
			// The kernel writes outputs into a cell it inserted: only
			// what the call wrote must be as it left it.
			fields = contentFields
		}
		if fields != 0 && !sameFields(nb.Cells[i], uc.after, fields) {
			return e.conflictError(r, uc.id, "changed", all, func(l *undoCell) bool { return l.fields&fields != 0 })
		}
		if uc.moved {
			if l := laterChange(r, uc.id, all, func(l *undoCell) bool { return l.moved }); l != nil {
				return e.conflictFrom(uc.id, "moved", l)
			}
		}
	}
	return nil
}

// laterChange is the latest change after r that did what did to cell id,
// preferring one still in effect; nil when none kept did.
func laterChange(r *undoView, id string, all []*undoView, did func(*undoCell) bool) *undoView {
	var undone *undoView
	for k := len(all) - 1; k >= 0 && all[k].seq > r.seq; k-- {
		l := all[k]
		for j := range l.cells {
			if l.cells[j].id == id && did(&l.cells[j]) {
				if !l.undone {
					return l
				}
				if undone == nil {
					undone = l
				}
			}
		}
	}
	return undone
}

func (e *Engine) conflictError(r *undoView, id, verb string, all []*undoView, did func(*undoCell) bool) error {
	if l := laterChange(r, id, all, did); l != nil {
		return e.conflictFrom(id, verb, l)
	}
	return &UndoConflictError{CellID: id, Verb: verb}
}

func (e *Engine) conflictFrom(id, verb string, l *undoView) error {
	err := &UndoConflictError{CellID: id, Verb: verb, ByCall: l.call.id, ByTool: l.call.tool, BySession: l.call.session, At: l.call.at}
	if l.call.session != "" {
		e.mu.RLock()
		err.ByClient = e.refLocked(l.call.session)
		e.mu.RUnlock()
	}
	return err
}

// restoredWhat names what an undo gave a cell back.
func restoredWhat(f cellField) string {
	switch {
	case f == fieldSource:
		return "source restored"
	case f&contentFields == 0:
		return "outputs restored"
	}
	return "restored"
}

// restoreFields sets the fields f of c to those of from.
func restoreFields(c, from *notebook.Cell, f cellField) {
	if f&fieldType != 0 {
		c.Type = from.Type
	}
	if f&fieldSource != 0 {
		c.Source = from.Source
	}
	if f&fieldMetadata != 0 {
		c.Metadata = from.Metadata
	}
	if f&fieldAttachments != 0 {
		c.Attachments = from.Attachments
	}
	if f&fieldOutputs != 0 {
		c.Outputs = from.Outputs
	}
	if f&fieldCount != 0 {
		c.ExecutionCount = from.ExecutionCount
	}
}

// sameFields compares the fields f of two cells by content: a notebook
// reloaded from disk has new values (and the file's JSON layout) for what
// did not change.
func sameFields(a, b *notebook.Cell, f cellField) bool {
	if a == b {
		return true
	}
	switch {
	case f&fieldType != 0 && a.Type != b.Type,
		f&fieldSource != 0 && a.Source != b.Source,
		f&fieldMetadata != 0 && !sameJSON(a.Metadata, b.Metadata),
		f&fieldAttachments != 0 && !sameJSON(a.Attachments, b.Attachments),
		f&fieldCount != 0 && !intPtrEqual(a.ExecutionCount, b.ExecutionCount),
		f&fieldOutputs != 0 && !sameOutputs(a.Outputs, b.Outputs):
		return false
	}
	return true
}

func sameOutputs(a, b []notebook.Output) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.OutputType != y.OutputType || x.Name != y.Name || x.Text != y.Text || x.EName != y.EName || x.EValue != y.EValue ||
			!intPtrEqual(x.ExecutionCount, y.ExecutionCount) || !reflect.DeepEqual(x.Traceback, y.Traceback) ||
			!sameJSON(x.Metadata, y.Metadata) || len(x.Data) != len(y.Data) {
			return false
		}
		for k, v := range x.Data {
			if !sameJSON(v, y.Data[k]) {
				return false
			}
		}
	}
	return true
}

// sameJSON compares two JSON values by what they mean. Empty is null; a
// list of strings (nbformat's multi-line text) is its joined string.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	return reflect.DeepEqual(jsonValue(a), jsonValue(b))
}

func jsonValue(raw json.RawMessage) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return joinLines(v)
}

// joinLines turns lists of strings into one string, anywhere in v.
func joinLines(v any) any {
	switch x := v.(type) {
	case []any:
		var sb strings.Builder
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				for i := range x {
					x[i] = joinLines(x[i])
				}
				return x
			}
			sb.WriteString(s)
		}
		return sb.String()
	case map[string]any:
		for k, e := range x {
			x[k] = joinLines(e)
		}
	}
	return v
}
