package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
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

// diffNotebooks compares two versions of a notebook, cell by cell, by id. It
// lists added, edited, output-only and moved cells in the order of the new
// version, then removed ones in the order of the old, and says whether the
// notebook's own metadata changed.
func diffNotebooks(old, cur *notebook.Notebook) (changes []event.CellChange, metadata bool) {
	oldAt := make(map[string]int, len(old.Cells))
	for i, c := range old.Cells {
		oldAt[c.ID] = i
	}
	curAt := make(map[string]int, len(cur.Cells))
	for i, c := range cur.Cells {
		curAt[c.ID] = i
	}
	moved := movedCells(old.Cells, curAt)
	for i, c := range cur.Cells {
		j, ok := oldAt[c.ID]
		switch {
		case !ok:
			changes = append(changes, event.CellChange{ID: c.ID, Index: i, Change: event.CellAdded})
		case cellEdited(old.Cells[j], c):
			changes = append(changes, event.CellChange{ID: c.ID, Index: i, Change: event.CellEdited})
		case outputsChanged(old.Cells[j], c):
			changes = append(changes, event.CellChange{ID: c.ID, Index: i, Change: event.CellOutputs})
		case moved[c.ID]:
			changes = append(changes, event.CellChange{ID: c.ID, Index: i, Change: event.CellMoved})
		}
	}
	for i, c := range old.Cells {
		if _, ok := curAt[c.ID]; !ok {
			changes = append(changes, event.CellChange{ID: c.ID, Index: i, Change: event.CellRemoved})
		}
	}
	return changes, !jsonEqual(old.Metadata, cur.Metadata)
}

// movedCells names the cells, present in both versions, that are not part
// of the longest run of cells kept in the same relative order: those are
// the ones someone moved (undo.go's longestIncreasing finds the run).
func movedCells(old []*notebook.Cell, curAt map[string]int) map[string]bool {
	var common []int // positions after, in the order before
	for _, c := range old {
		if j, ok := curAt[c.ID]; ok {
			common = append(common, j)
		}
	}
	if slices.IsSorted(common) {
		return nil
	}
	stayed := longestIncreasing(common)
	moved := map[string]bool{}
	for _, c := range old {
		if j, ok := curAt[c.ID]; ok && !stayed[j] {
			moved[c.ID] = true
		}
	}
	return moved
}

// cellEdited: what a person writes in a cell changed.
func cellEdited(a, b *notebook.Cell) bool {
	return a.Type != b.Type || a.Source != b.Source || !cellMetadataEqual(a.Metadata, b.Metadata) || !jsonEqual(a.Attachments, b.Attachments)
}

// cellMetadataEqual compares cell metadata without "trusted": Jupyter's
// contents API sets it on every code cell it reads out (the notebook's
// signature check), so a reload has it where our own model may not.
func cellMetadataEqual(a, b json.RawMessage) bool {
	if jsonEqual(a, b) {
		return true
	}
	var x, y map[string]any
	if json.Unmarshal(orEmpty(a), &x) != nil || json.Unmarshal(orEmpty(b), &y) != nil {
		return false
	}
	delete(x, "trusted")
	delete(y, "trusted")
	return reflect.DeepEqual(x, y)
}

// outputsChanged: what running the cell wrote changed.
func outputsChanged(a, b *notebook.Cell) bool {
	if !intPtrEqual(a.ExecutionCount, b.ExecutionCount) {
		return true
	}
	if len(a.Outputs) != len(b.Outputs) {
		return true
	}
	for i := range a.Outputs {
		x, y := a.Outputs[i], b.Outputs[i]
		if x.OutputType != y.OutputType || x.Name != y.Name || x.Text != y.Text || x.EName != y.EName || x.EValue != y.EValue ||
			!slices.Equal(x.Traceback, y.Traceback) || !jsonEqual(x.Metadata, y.Metadata) || len(x.Data) != len(y.Data) {
			return true
		}
		if !intPtrEqual(x.ExecutionCount, y.ExecutionCount) {
			return true
		}
		for k, v := range x.Data {
			if !jsonEqual(v, y.Data[k]) {
				return true
			}
		}
	}
	return false
}

// jsonEqual compares two JSON values by meaning: another writer's file may
// lay out the same metadata differently. Absent and {} are the same.
func jsonEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if err := json.Unmarshal(orEmpty(a), &x); err != nil {
		return false
	}
	if err := json.Unmarshal(orEmpty(b), &y); err != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func orEmpty(r json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(r)) == 0 || bytes.Equal(bytes.TrimSpace(r), []byte("null")) {
		return json.RawMessage("{}")
	}
	return r
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
		Name: d.name, Path: d.path, KernelID: d.kernel.id, Changes: changes, MetadataChanged: metadata, At: at,
	}}
}
