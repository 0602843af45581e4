package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/undo"
)

// Undo of a call's change. The records and their revert are engine/undo;
// here is which call a change belongs to (from the call's context), the
// keeping of a saved change's record, and the person's Undo, saved like
// any change.

// The engine's undo records are kept per document.
type (
	undoLog    = undo.Log[*document]
	undoRecord = undo.Record[*document]
)

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

// undoRecordOf is mutate's hook: the record of the change from before to
// after (a notebook's cells), when ctx belongs to a call whose changes are
// kept and the change touched any cell; nil otherwise. It must not modify
// the cells.
func undoRecordOf(ctx context.Context, d *document, before, after []*notebook.Cell) *undoRecord {
	id := undoIdentity(ctx)
	if id == nil {
		return nil
	}
	return undo.NewRecord(undo.Call{ID: id.id, Tool: id.tool, Session: id.session, At: id.at}, d, before, after, id.reverts)
}

// keepUndo keeps a saved change's record (nil: none), and tells an undo
// which record its own change made.
func (e *Engine) keepUndo(ctx context.Context, r *undoRecord) {
	if r == nil {
		return
	}
	e.undo.Add(r)
	if id := undoIdentity(ctx); id != nil && id.reverts != nil {
		id.made = r
	}
}

// Undo reverts the changes a finished tool call (or an earlier undo) made
// to a notebook: cells it inserted go, cells it changed or deleted come
// back (deleted ones next to the cells they were next to), moved cells go
// back. It is saved like any change, and kept as one, so it can be undone
// in turn. When a cell the call touched was changed again since, nothing
// is changed and the error (an *undo.ConflictError) names the cell and
// the later change. The session that made the call is told on its next
// result on the notebook.
func (e *Engine) Undo(ctx context.Context, callID string) (undo.Result, error) {
	if e.calls.Running(callID) {
		return undo.Result{}, Userf("call %s has not finished; undo it once it has", callID)
	}
	d, rs := e.undo.Find(callID)
	if d == nil {
		records, bytes := e.undo.Bounds()
		return undo.Result{}, Userf("call %s has no change kept for undo: it changed no notebook in use, or it is older than the changes kept (the last %d per notebook, %d MiB in all)", callID, records, bytes>>20)
	}
	first := rs[0].Call()
	if by := e.undo.UndoneBy(rs); by != nil {
		return undo.Result{}, Userf("%s of %s was already undone at %s; undo that undo to bring it back", first.Tool, undo.Clock(first.At), undo.Clock(by.Call().At))
	}
	e.mu.RLock()
	inUse := len(e.namesLocked(d)) > 0
	e.mu.RUnlock()
	if !inUse {
		return undo.Result{}, Userf("notebook %q is no longer in use; nothing was undone", d.name)
	}
	id := &callIdentity{
		id:      fmt.Sprintf("undo-%d", e.undoSeq.Add(1)),
		tool:    undo.Tool,
		at:      time.Now(),
		reverts: rs,
	}
	res := undo.Result{ID: id.id, Of: callID, Tool: first.Tool, At: first.At, Notebook: d.name,
		Summary: fmt.Sprintf("undo of %s %s by the person", first.Tool, undo.Clock(first.At))}
	var firstCell string
	snap := func(c *notebook.Cell) event.CellSnapshot { return e.snapshotCell(d.name, c) }
	who := func(session string) string {
		e.mu.RLock()
		defer e.mu.RUnlock()
		return e.refLocked(session).String()
	}
	err := e.mutate(withCallIdentity(ctx, id), d, "", false, func(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
		events, changes, first, err := e.undo.Revert(nb, d, rs, snap, who)
		res.Changes, firstCell = changes, first
		return events, err
	})
	if err != nil {
		// Refused or failed: nothing changed, and the person is told
		// where they asked; the timeline keeps only undos that happened.
		return undo.Result{}, err
	}
	e.undo.MarkUndone(rs, id.made)
	// The timeline shows the undo as an entry of its own, which the
	// person can select and undo in turn.
	started := event.CallEvent{ID: id.id, Tool: undo.Tool, Status: event.CallRunning, Started: id.at, Summary: res.Summary, UndoOf: callID, Notebook: d.name}
	e.publish(event.Event{Type: event.EvCallStarted, Call: &started})
	finished := started
	finished.Status, finished.Duration = event.CallOK, time.Since(id.at)
	finished.Undoable = id.made != nil
	finished.Text = res.Summary + ": " + strings.Join(res.Changes, ", ")
	finished.CellID = firstCell
	e.publish(event.Event{Type: event.EvCallFinished, Call: &finished})
	e.tellUndone(d, rs, res.Changes)
	return res, nil
}

// tellUndone leaves the sessions whose changes an undo reverted (or, for
// an undo of an undo, brought back) a notice on the notebook.
func (e *Engine) tellUndone(d *document, rs []*undoRecord, changes []string) {
	// A notice is one line: an undo of a long delete names the first
	// cells, as an outside edit's does, and counts the rest.
	if len(changes) > event.MaxListedChanges {
		changes = append(changes[:event.MaxListedChanges:event.MaxListedChanges], fmt.Sprintf("and %d more cells", len(changes)-event.MaxListedChanges))
	}
	what := strings.Join(changes, ", ")
	for _, r := range rs {
		if c := r.Call(); c.Session != "" {
			e.Notify(c.Session, d.path, fmt.Sprintf("a person reverted your %s of %s (%s)", c.Tool, undo.Clock(c.At), what))
		}
		for _, earlier := range r.Reverts() {
			if c := earlier.Call(); c.Session != "" {
				e.Notify(c.Session, d.path, fmt.Sprintf("a person undid their revert of your %s of %s (%s)", c.Tool, undo.Clock(c.At), what))
			}
		}
	}
}
