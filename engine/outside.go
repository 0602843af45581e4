package engine

import (
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Edits made elsewhere. A notebook in use may be changed by someone else:
// a person in JupyterLab, an editor, git checkout, another agent's server.
// The engine sees it when the file's last_modified is no longer the one it
// read or wrote (syncFromDisk, freshness.go; polled by watch.go), reloads
// it, and then says what changed, cell by cell: in the workbench's timeline
// (EvNotebookOutsideEdit) and to every agent on its next result on that
// notebook (Notify). Our own saves record the last_modified they produced,
// so they are never taken for someone else's.

// diffNotebooks compares two versions of a notebook, cell by cell, by id
// and by meaning (notebook.DifferentFields: the file may have been written
// by another program, in its own layout). It lists added, edited,
// output-only and moved cells in the order of the new version, then
// removed ones in the order of the old, and says whether the notebook's
// own metadata changed.
func diffNotebooks(old, cur *notebook.Notebook) (changes []event.ChangedCell, metadata bool) {
	diffs, _ := notebook.Diff(old.Cells, cur.Cells, notebook.DifferentFields)
	byID := make(map[string]notebook.CellDiff, len(diffs))
	for _, d := range diffs {
		byID[d.ID] = d
	}
	for i, c := range cur.Cells {
		d, ok := byID[c.ID]
		switch {
		case !ok:
		case d.Before == nil:
			changes = append(changes, event.ChangedCell{ID: c.ID, Index: i, How: event.CellAdded})
		case d.Fields&notebook.ContentFields != 0:
			changes = append(changes, event.ChangedCell{ID: c.ID, Index: i, How: event.CellEdited})
		case d.Fields&notebook.KernelFields != 0:
			changes = append(changes, event.ChangedCell{ID: c.ID, Index: i, How: event.CellOutputs})
		case d.Moved:
			changes = append(changes, event.ChangedCell{ID: c.ID, Index: i, How: event.CellMoved})
		}
	}
	for _, d := range diffs {
		if d.After == nil {
			changes = append(changes, event.ChangedCell{ID: d.ID, Index: d.From, How: event.CellRemoved})
		}
	}
	return changes, !notebook.SameJSON(old.Metadata, cur.Metadata)
}

// noteOutsideEdit tells every agent what an outside edit of d changed, from
// old to cur (the file as it is now, last modified at), and returns the
// event that tells the workbench, to publish after the reload's. An edit
// that changed nothing a reader sees (a save of the same content) is not
// reported (nil). The agents' notices are queued before anything about
// the reload is published: a client that hears of the change (a resource
// subscription) finds the notice on its next result.
func (e *Engine) noteOutsideEdit(d *document, old, cur *notebook.Notebook, at time.Time) *event.Event {
	if old == nil {
		return nil
	}
	changes, metadata := diffNotebooks(old, cur)
	if len(changes) == 0 && !metadata {
		return nil
	}
	text := event.OutsideEditText(d.name, d.path, at, changes, metadata)
	e.log.Info("notebook changed outside this server", "notebook", d.name, "path", d.path, "cells", len(changes))
	e.notifyOutsideEdit(d.path, text)
	return &event.Event{Type: event.EvNotebookOutsideEdit, Notebook: &event.NotebookEvent{
		Name: d.name, Path: d.path, KernelID: d.kernel.id, ChangedCells: changes, MetadataChanged: metadata, At: at,
	}}
}
