package undo

import (
	"fmt"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Result says what an undo did.
type Result struct {
	ID       string    // the undo's own call id: undoing it brings the call back
	Of       string    // the call reverted
	Tool     string    // the call's tool
	At       time.Time // when the call started
	Notebook string
	Changes  []string // one phrase per cell: "cell 7cb73ed2 removed"
	Summary  string   // "undo of insert_cell 14:31:23 by the person"
}

// ConflictError refuses an undo because a cell the call touched is no
// longer as the call left it: reverting would clobber what came after.
type ConflictError struct {
	CellID string
	Verb   string // changed, deleted, moved, put back
	// The change that did it, when one kept for undo did.
	ByCall    string
	ByTool    string
	BySession string // "" for the person
	ByClient  string // that session as another session's texts name it
	At        time.Time
}

func (e *ConflictError) Error() string {
	if e.ByCall == "" {
		return fmt.Sprintf("cell %s was %s after this call, not by a change kept for undo (an edit outside this server, a run, or a change too old to be kept); nothing was undone", e.CellID, e.Verb)
	}
	who := "the person"
	if e.BySession != "" {
		who = "session " + e.ByClient
	}
	return fmt.Sprintf("cell %s was %s by %s at %s (%s) after this call; undo that first", e.CellID, e.Verb, e.ByTool, Clock(e.At), who)
}

// CallerCanFix: the person can undo the later change first.
func (*ConflictError) CallerCanFix() bool { return true }

// ForgottenError refuses an undo whose change fell out of the log while
// it was under way.
type ForgottenError struct{ Call Call }

func (e *ForgottenError) Error() string {
	return fmt.Sprintf("the change of %s of %s is no longer kept for undo", e.Call.Tool, Clock(e.Call.At))
}

// CallerCanFix: nothing was changed; the person is told.
func (*ForgottenError) CallerCanFix() bool { return true }

// Clock is a time as the timeline shows it.
func Clock(t time.Time) string { return t.Local().Format("15:04:05") }

// Revert takes back, on the working copy nb of notebook d, the changes
// rs made (the records of one call, oldest first), newest first; or
// changes nothing and says which cell stands in the way. snap copies a
// cell for the events it returns; who names a session for another
// session's eyes. It returns the events, one phrase per cell changed, and
// the first cell the call touched.
func (l *Log[N]) Revert(nb *notebook.Notebook, d N, rs []*Record[N], snap func(*notebook.Cell) event.CellSnapshot, who func(session string) string) (events []event.NotebookEvent, changes []string, firstCell string, err error) {
	mine, all := l.views(rs), l.views(l.Records(d))
	if len(mine[0].cells) > 0 {
		firstCell = mine[0].cells[0].ID
	}
	rv := reverter{snap: snap, who: who}
	for i := len(mine) - 1; i >= 0; i-- {
		evs, chs, err := rv.revert(nb, mine[i], all)
		if err != nil {
			return nil, nil, "", err
		}
		events = append(events, evs...)
		changes = append(changes, chs...)
	}
	return events, changes, firstCell, nil
}

// reverter is what a revert needs of the engine.
type reverter struct {
	snap func(*notebook.Cell) event.CellSnapshot
	who  func(session string) string
}

// revert takes record r back on the working copy nb, or changes nothing
// and says which cell stands in the way. all is the notebook's records,
// oldest first, for naming the later change.
func (rv reverter) revert(nb *notebook.Notebook, r *view, all []*view) ([]event.NotebookEvent, []string, error) {
	if r.dropped {
		return nil, nil, &ForgottenError{Call: r.call}
	}
	for _, uc := range r.cells {
		if err := rv.conflict(nb, r, uc, all); err != nil {
			return nil, nil, err
		}
	}
	var events []event.NotebookEvent
	var changes []string
	byID := make(map[string]*notebook.CellDiff, len(r.cells))
	for i := range r.cells {
		byID[r.cells[i].ID] = &r.cells[i]
	}
	// Cells the call inserted go.
	for _, uc := range r.cells {
		if uc.Before != nil {
			continue
		}
		i := nb.IndexOf(uc.ID)
		nb.Cells = append(nb.Cells[:i], nb.Cells[i+1:]...)
		events = append(events, event.NotebookEvent{Op: event.OpDelete, Index: i, CellIDs: []string{uc.ID}})
		changes = append(changes, "cell "+uc.ID+" removed")
	}
	// Cells it changed get back what it set, and keep what came since in
	// what it did not touch (outputs of a later run).
	for _, uc := range r.cells {
		if uc.Before == nil || uc.After == nil || uc.Fields == 0 {
			continue
		}
		i := nb.IndexOf(uc.ID)
		nc := *nb.Cells[i]
		restoreFields(&nc, uc.Before, uc.Fields)
		nb.Cells[i] = &nc
		events = append(events, event.NotebookEvent{Op: event.OpEdit, Index: i, Cells: []event.CellSnapshot{rv.snap(&nc)}})
		changes = append(changes, "cell "+uc.ID+" "+restoredWhat(uc.Fields))
	}
	// Cells it deleted or moved go back next to the cells they were next
	// to, in their old order.
	pending := map[string]bool{}
	for _, uc := range r.cells {
		if uc.After == nil || uc.Moved {
			pending[uc.ID] = true
		}
	}
	for k, id := range r.order {
		uc := byID[id]
		if uc == nil || !pending[id] {
			continue
		}
		delete(pending, id)
		c, from := uc.Before, -1
		if uc.After != nil {
			from = nb.IndexOf(id)
			c = nb.Cells[from]
			nb.Cells = append(nb.Cells[:from], nb.Cells[from+1:]...)
		}
		at := placeFor(nb, r.order, k, pending, uc.From)
		nb.Cells = append(nb.Cells[:at], append([]*notebook.Cell{c}, nb.Cells[at:]...)...)
		snap := []event.CellSnapshot{rv.snap(c)}
		if from < 0 {
			events = append(events, event.NotebookEvent{Op: event.OpInsert, Index: at, Cells: snap})
			changes = append(changes, fmt.Sprintf("cell %s restored at index %d", id, at))
		} else {
			events = append(events, event.NotebookEvent{Op: event.OpMove, Index: at, From: from, Cells: snap})
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
func (rv reverter) conflict(nb *notebook.Notebook, r *view, uc notebook.CellDiff, all []*view) error {
	i := nb.IndexOf(uc.ID)
	switch {
	case uc.After == nil:
		if i >= 0 {
			return rv.conflictError(r, uc.ID, "put back", all, func(l *notebook.CellDiff) bool { return l.Before == nil })
		}
	case i < 0:
		return rv.conflictError(r, uc.ID, "deleted", all, func(l *notebook.CellDiff) bool { return l.After == nil })
	default:
		fields := uc.Fields
		if uc.Before == nil {
			// The kernel writes outputs into a cell it inserted: only
			// what the call wrote must be as it left it.
			fields = notebook.ContentFields
		}
		if fields != 0 && !notebook.SameFields(nb.Cells[i], uc.After, fields) {
			return rv.conflictError(r, uc.ID, "changed", all, func(l *notebook.CellDiff) bool { return l.Fields&fields != 0 })
		}
		if uc.Moved {
			if l := laterChange(r, uc.ID, all, func(l *notebook.CellDiff) bool { return l.Moved }); l != nil {
				return rv.conflictFrom(uc.ID, "moved", l)
			}
		}
	}
	return nil
}

// laterChange is the latest change after r that did what did to cell id,
// preferring one still in effect; nil when none kept did.
func laterChange(r *view, id string, all []*view, did func(*notebook.CellDiff) bool) *view {
	var undone *view
	for k := len(all) - 1; k >= 0 && all[k].seq > r.seq; k-- {
		l := all[k]
		for j := range l.cells {
			if l.cells[j].ID == id && did(&l.cells[j]) {
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

func (rv reverter) conflictError(r *view, id, verb string, all []*view, did func(*notebook.CellDiff) bool) error {
	if l := laterChange(r, id, all, did); l != nil {
		return rv.conflictFrom(id, verb, l)
	}
	return &ConflictError{CellID: id, Verb: verb}
}

func (rv reverter) conflictFrom(id, verb string, l *view) error {
	err := &ConflictError{CellID: id, Verb: verb, ByCall: l.call.ID, ByTool: l.call.Tool, BySession: l.call.Session, At: l.call.At}
	if l.call.Session != "" {
		err.ByClient = rv.who(l.call.Session)
	}
	return err
}

// restoredWhat names what an undo gave a cell back.
func restoredWhat(f notebook.Field) string {
	switch {
	case f == notebook.FieldSource:
		return "source restored"
	case f&notebook.ContentFields == 0:
		return "outputs restored"
	}
	return "restored"
}

// restoreFields sets the fields f of c to those of from.
func restoreFields(c, from *notebook.Cell, f notebook.Field) {
	if f&notebook.FieldType != 0 {
		c.Type = from.Type
	}
	if f&notebook.FieldSource != 0 {
		c.Source = from.Source
	}
	if f&notebook.FieldMetadata != 0 {
		c.Metadata = from.Metadata
	}
	if f&notebook.FieldAttachments != 0 {
		c.Attachments = from.Attachments
	}
	if f&notebook.FieldOutputs != 0 {
		c.Outputs = from.Outputs
	}
	if f&notebook.FieldCount != 0 {
		c.ExecutionCount = from.ExecutionCount
	}
}
