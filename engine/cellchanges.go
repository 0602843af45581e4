package engine

import (
	"slices"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// The changes a call makes to a notebook's cells, each one value. The
// engine's cell methods commit it (mutate: applied to the group's working
// copy and saved); Preview applies the same value to a copy of the
// notebook as it is now and shows what it did, or its refusal in the words
// the call would get. So a held call's preview cannot disagree with what
// the call does once allowed; and what the change records of the cells it
// found (bound) is what the call, allowed, is checked against as it
// commits (bound.go).

// A cellMutation is one change to a notebook's cells.
type cellMutation interface {
	// check refuses what can be refused without the notebook.
	check() error
	// byIndex reports whether it names a cell by index, which a reload
	// of the notebook may make name another cell.
	byIndex() bool
	// apply makes the change on nb, a working copy: it may reorder and
	// replace nb.Cells but never modifies a *notebook.Cell in place. It
	// records what it did in the value and returns the events to publish
	// once saved (errUnchanged: nothing to save).
	apply(nb *notebook.Notebook) ([]event.NotebookEvent, error)
	// bound are the facts of what it did, as apply recorded them, that a
	// held call's person was shown and the call must still do (bound.go).
	bound() []event.BoundFact
}

// onNotebook is what every change knows of its notebook: its name in use
// (for errors), its file and kernel (for what a held call was shown), and
// how its cells are copied into events.
type onNotebook struct {
	name, path, kernel string
	snap               func(*notebook.Cell) event.CellSnapshot
}

// on is the onNotebook of d.
func (e *Engine) on(d *document) onNotebook {
	return onNotebook{name: d.name, path: d.path, kernel: d.kernel.id,
		snap: func(c *notebook.Cell) event.CellSnapshot { return e.snapshotCell(d.name, c) }}
}

func (o onNotebook) event(op event.NotebookOp, i int, c *notebook.Cell) []event.NotebookEvent {
	return []event.NotebookEvent{{Op: op, Index: i, Cells: []event.CellSnapshot{o.snap(c)}}}
}

// insertCell inserts a cell of cellType at index (-1 appends); run marks
// the cell of an insert that is then run, whose code is checked too.
type insertCell struct {
	onNotebook
	index    int
	cellType string
	source   string
	run      bool

	inserted      CellInfo // set by apply
	after, before string   // set by apply: the ids of the cells around it ("" at an end)
}

func (m *insertCell) check() error {
	if m.run {
		return checkCode(m.source)
	}
	return validCellType(m.cellType)
}

func (m *insertCell) byIndex() bool { return m.index != -1 }

func (m *insertCell) apply(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
	n := len(nb.Cells)
	at := m.index
	if at == -1 {
		at = n
	}
	if at < 0 || at > n {
		return nil, &CellIndexError{Notebook: m.name, Index: m.index, Count: n, Insert: true}
	}
	c := nb.NewCell(m.cellType, m.source)
	m.after, m.before = "", ""
	if at > 0 {
		m.after = nb.Cells[at-1].ID
	}
	if at < n {
		m.before = nb.Cells[at].ID
	}
	nb.Cells = slices.Insert(nb.Cells, at, c)
	m.inserted = cellInfo(at, c)
	return m.event(event.OpInsert, at, c), nil
}

// overwriteSource replaces a cell's whole source; outputs are kept.
type overwriteSource struct {
	onNotebook
	ref    CellRef
	source string

	edit SourceEdit // set by apply, also when unchanged
}

func (m *overwriteSource) check() error  { return nil }
func (m *overwriteSource) byIndex() bool { return m.ref.ID == "" }

func (m *overwriteSource) apply(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
	i, err := resolveCell(nb, m.name, m.ref, RoleCell)
	if err != nil {
		return nil, err
	}
	old := nb.Cells[i].Source
	if old == m.source {
		m.edit = SourceEdit{Cell: cellInfo(i, nb.Cells[i]), OldSource: old}
		return nil, errUnchanged
	}
	c := setSource(nb, i, m.source)
	m.edit = SourceEdit{Cell: cellInfo(i, c), OldSource: old, Diff: cellDiff(i, old, m.source), Replacements: 1}
	return m.event(event.OpEdit, i, c), nil
}

// editSource replaces old with new in a cell's source (literal match;
// exactly once unless all).
type editSource struct {
	onNotebook
	ref      CellRef
	old, new string
	all      bool

	edit SourceEdit // set by apply
}

func (m *editSource) check() error {
	if m.old == "" {
		return &EditError{Problem: EditEmptyOld}
	}
	return nil
}

func (m *editSource) byIndex() bool { return m.ref.ID == "" }

func (m *editSource) apply(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
	i, err := resolveCell(nb, m.name, m.ref, RoleCell)
	if err != nil {
		return nil, err
	}
	c := nb.Cells[i]
	n := strings.Count(c.Source, m.old)
	switch {
	case n == 0:
		return nil, &EditError{Problem: EditNotFound, Index: i, CellID: c.ID, Source: excerpt(c.Source, 200)}
	case n > 1 && !m.all:
		return nil, &EditError{Problem: EditAmbiguous, Index: i, CellID: c.ID, Count: n}
	case m.old == m.new:
		// Checked as any edit is (found, and once unless all), and a
		// no-op, as in the reference.
		m.edit = SourceEdit{Cell: cellInfo(i, c), OldSource: c.Source}
		return nil, errUnchanged
	}
	var src string
	if m.all {
		src = strings.ReplaceAll(c.Source, m.old, m.new)
	} else {
		src, n = strings.Replace(c.Source, m.old, m.new, 1), 1
	}
	nc := setSource(nb, i, src)
	m.edit = SourceEdit{Cell: cellInfo(i, nc), OldSource: c.Source, Diff: cellDiff(i, c.Source, src), Replacements: n}
	return m.event(event.OpEdit, i, nc), nil
}

// deleteCells deletes the cells ids name (when any) or indices, checking
// every one before deleting anything.
type deleteCells struct {
	onNotebook
	indices []int
	ids     []string

	deleted []CellInfo // set by apply: in the order given, each at its index before
}

func (m *deleteCells) check() error {
	if len(m.ids) == 0 && len(m.indices) == 0 {
		return &NoCellError{Several: true}
	}
	return nil
}

func (m *deleteCells) byIndex() bool { return len(m.ids) == 0 }

func (m *deleteCells) apply(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
	positions := make([]int, 0, max(len(m.ids), len(m.indices)))
	seen := map[int]bool{}
	if len(m.ids) > 0 {
		for _, id := range m.ids {
			i, err := findCell(nb, m.name, id, RoleCell)
			if err != nil {
				return nil, err
			}
			if seen[i] {
				return nil, Userf("cell id %q is a duplicate (listed twice); nothing was deleted", id)
			}
			seen[i] = true
			positions = append(positions, i)
		}
	} else {
		for _, i := range m.indices {
			if err := checkIndex(nb, m.name, i, RoleCell); err != nil {
				return nil, err
			}
			if seen[i] {
				return nil, Userf("cell index %d is a duplicate (listed twice); nothing was deleted", i)
			}
			seen[i] = true
			positions = append(positions, i)
		}
	}
	m.deleted = make([]CellInfo, len(positions))
	removed := make([]string, len(positions))
	for k, i := range positions {
		m.deleted[k] = cellInfo(i, nb.Cells[i])
		removed[k] = nb.Cells[i].ID
	}
	kept := nb.Cells[:0]
	for i, c := range nb.Cells {
		if !seen[i] {
			kept = append(kept, c)
		}
	}
	clear(nb.Cells[len(kept):])
	nb.Cells = kept
	return []event.NotebookEvent{{Op: event.OpDelete, Index: slices.Min(positions), CellIDs: removed}}, nil
}

// moveCell moves a cell (src) to where dst is now. With indices,
// [A B C D] moving 1 to 3 gives [A C D B]: the target index is where the
// cell ends up.
type moveCell struct {
	onNotebook
	src, dst CellRef

	moved  CellInfo // set by apply, at its new index, also when unchanged
	from   int
	target string // set by apply: the id of the cell at the target before the move
}

func (m *moveCell) check() error  { return nil }
func (m *moveCell) byIndex() bool { return m.src.ID == "" || m.dst.ID == "" }

func (m *moveCell) apply(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
	from, err := resolveCell(nb, m.name, m.src, RoleSource)
	if err != nil {
		return nil, err
	}
	to, err := resolveCell(nb, m.name, m.dst, RoleTarget)
	if err != nil {
		return nil, err
	}
	c := nb.Cells[from]
	m.moved, m.from, m.target = cellInfo(to, c), from, nb.Cells[to].ID
	if from == to {
		return nil, errUnchanged
	}
	nb.Cells = slices.Delete(nb.Cells, from, from+1)
	nb.Cells = slices.Insert(nb.Cells, to, c)
	return []event.NotebookEvent{{Op: event.OpMove, Index: to, From: from, Cells: []event.CellSnapshot{m.snap(c)}}}, nil
}

// clearOutputs clears a code cell's outputs and execution count; forRun
// is the clearing before the cell runs, which refuses what cannot run.
type clearOutputs struct {
	onNotebook
	ref    CellRef
	forRun bool

	cell CellInfo // set by apply once the cell is found (before a refusal of its type)
}

func (m *clearOutputs) check() error  { return nil }
func (m *clearOutputs) byIndex() bool { return m.ref.ID == "" }

func (m *clearOutputs) apply(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
	i, err := resolveCell(nb, m.name, m.ref, RoleCell)
	if err != nil {
		return nil, err
	}
	c := nb.Cells[i]
	m.cell = cellInfo(i, c)
	switch {
	case c.Type != notebook.Code && m.forRun:
		return nil, Userf("cell %d (id %q) is a %s cell; only code cells can be executed", i, c.ID, c.Type)
	case c.Type != notebook.Code:
		return nil, Userf("cell %d (id %q) is a %s cell, not a code cell; only code cells have outputs to clear", i, c.ID, c.Type)
	}
	if m.forRun {
		if err := checkCode(c.Source); err != nil {
			return nil, err
		}
	}
	if len(c.Outputs) == 0 && c.ExecutionCount == nil {
		return nil, errUnchanged
	}
	nc := *c
	nc.Outputs = []notebook.Output{}
	nc.ExecutionCount = nil
	nb.Cells[i] = &nc
	m.cell = cellInfo(i, &nc)
	return m.event(event.OpClearOutput, i, &nc), nil
}

// tryOnCopy applies m to a copy of nb, changing nothing: what the change
// would do is left in m, and the error is the one the call would get
// (errUnchanged when it would change nothing).
func tryOnCopy(nb *notebook.Notebook, m cellMutation) error {
	if err := m.check(); err != nil {
		return err
	}
	work := *nb
	work.Cells = slices.Clone(nb.Cells)
	_, err := m.apply(&work)
	return err
}
