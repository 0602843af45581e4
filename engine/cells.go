package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/aymanbagabas/go-udiff"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Values returned by the cell methods share their outputs with the engine's
// model (it is copy-on-write, so they never change under the caller): treat
// them as read-only.

// cellInfo copies a cell's fields with its position.
func cellInfo(i int, c *notebook.Cell) CellInfo {
	return CellInfo{
		Index:          i,
		ID:             c.ID,
		Type:           c.Type,
		Source:         c.Source,
		ExecutionCount: c.ExecutionCount,
		Metadata:       c.Metadata,
		Outputs:        c.Outputs,
	}
}

// checkIndex checks a cell index against the notebook.
func checkIndex(nb *notebook.Notebook, name string, i int, role CellRole) error {
	n := len(nb.Cells)
	if i >= 0 && i < n {
		return nil
	}
	return &CellIndexError{Notebook: name, Index: i, Count: n, Role: role}
}

// findCell returns the index of the cell with id, or an error naming it.
func findCell(nb *notebook.Notebook, name, id string, role CellRole) (int, error) {
	if i := nb.IndexOf(id); i >= 0 {
		return i, nil
	}
	return -1, &CellIDError{Notebook: name, ID: id, Role: role}
}

// resolveCell finds the cell a ref names: by id when it has one, else by
// index. role says which of the call's cells the ref is, for the error.
func resolveCell(nb *notebook.Notebook, name string, ref CellRef, role CellRole) (int, error) {
	if ref.ID != "" {
		return findCell(nb, name, ref.ID, role)
	}
	if ref.Index == nil {
		return -1, &NoCellError{Role: role}
	}
	if err := checkIndex(nb, name, *ref.Index, role); err != nil {
		return -1, err
	}
	return *ref.Index, nil
}

// validCellType checks the type of a cell to insert.
func validCellType(t string) error {
	switch t {
	case notebook.Code, notebook.Markdown, notebook.Raw:
		return nil
	}
	return &CellTypeError{Type: t}
}

// ReadNotebook returns cells [start, start+limit) (limit 0 = all) and the
// total count (in NotebookInfo.Cells). A start at or past the end of a
// non-empty notebook is an error that gives the valid range.
func (e *Engine) ReadNotebook(ctx context.Context, session, name string, start, limit int) (NotebookInfo, []CellInfo, error) {
	d, err := e.lookup(session, name)
	if err != nil {
		return NotebookInfo{}, nil, err
	}
	if start < 0 {
		return NotebookInfo{}, nil, &StartIndexError{Notebook: d.name, Start: start, Count: len(d.model().Cells)}
	}
	if limit < 0 {
		return NotebookInfo{}, nil, &LimitError{Limit: limit}
	}
	if err := e.ensureFresh(ctx, d, session); err != nil {
		return NotebookInfo{}, nil, err
	}
	nb := d.model()
	n := len(nb.Cells)
	if start > 0 && start >= n {
		return NotebookInfo{}, nil, &StartIndexError{Notebook: d.name, Start: start, Count: n}
	}
	end := n
	if limit > 0 && start+limit < n {
		end = start + limit
	}
	cells := make([]CellInfo, 0, end-start)
	for i := start; i < end; i++ {
		cells = append(cells, cellInfo(i, nb.Cells[i]))
	}
	info := e.info(d, session)
	info.Cells = n
	return info, cells, nil
}

// ReadCell returns one cell. It is the hot path: one coalesced check of
// the file's last_modified (freshness.go), one read lock.
func (e *Engine) ReadCell(ctx context.Context, session, name string, ref CellRef) (NotebookInfo, CellInfo, error) {
	d, err := e.lookup(session, name)
	if err != nil {
		return NotebookInfo{}, CellInfo{}, err
	}
	if err := e.ensureFresh(ctx, d, session); err != nil {
		return NotebookInfo{}, CellInfo{}, err
	}
	nb := d.model()
	i, err := resolveCell(nb, d.name, ref, RoleCell)
	if err != nil {
		return NotebookInfo{}, CellInfo{}, err
	}
	info := e.info(d, session)
	info.Cells = len(nb.Cells)
	return info, cellInfo(i, nb.Cells[i]), nil
}

// InsertCell inserts a new cell at index (-1 appends) and saves.
func (e *Engine) InsertCell(ctx context.Context, session, name string, index int, cellType, source string) (NotebookInfo, CellInfo, error) {
	d, m, err := commitTo(ctx, e, session, name, func(on onNotebook) *insertCell {
		return &insertCell{onNotebook: on, index: index, cellType: cellType, source: source}
	})
	if err != nil {
		return NotebookInfo{}, CellInfo{}, err
	}
	return e.info(d, session), m.inserted, nil
}

// commit checks a change and makes it, saved. A held call's change is
// checked against what its person was shown as it is applied, under the
// notebook's writeMu (bound.go): one that is no longer it is not made.
func (e *Engine) commit(ctx context.Context, d *document, session string, m cellMutation) error {
	if err := m.check(); err != nil {
		return err
	}
	apply := m.apply
	if calls.ShownOf(ctx) != nil {
		apply = func(nb *notebook.Notebook) ([]event.NotebookEvent, error) {
			events, err := m.apply(nb)
			if err != nil && !errors.Is(err, errUnchanged) {
				return nil, err
			}
			if err := stillShown(ctx, m.bound()); err != nil {
				return nil, err
			}
			return events, err
		}
	}
	return e.mutate(ctx, d, session, m.byIndex(), apply)
}

// cellDiff is the unified diff of a cell's source.
func cellDiff(i int, before, after string) string {
	return udiff.Unified(fmt.Sprintf("a/cell[%d]", i), fmt.Sprintf("b/cell[%d]", i), before, after)
}

// setSource replaces the source of cell i of nb with a copy.
func setSource(nb *notebook.Notebook, i int, src string) *notebook.Cell {
	c := *nb.Cells[i]
	c.Source = src
	nb.Cells[i] = &c
	return &c
}

// OverwriteCellSource replaces a cell's whole source and saves. Outputs are
// kept. The same source again changes nothing and saves nothing.
func (e *Engine) OverwriteCellSource(ctx context.Context, session, name string, ref CellRef, source string) (NotebookInfo, SourceEdit, error) {
	d, m, err := commitTo(ctx, e, session, name, func(on onNotebook) *overwriteSource {
		return &overwriteSource{onNotebook: on, ref: ref, source: source}
	})
	if err != nil {
		return NotebookInfo{}, SourceEdit{}, err
	}
	return e.info(d, session), m.edit, nil
}

// excerpt is the start of s, for error messages.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// EditCellSource replaces old with new in a cell's source (literal match;
// exactly once unless all) and saves. A replacement by the text itself is
// checked as any edit is (found, and once unless all) and changes nothing,
// as in the reference.
func (e *Engine) EditCellSource(ctx context.Context, session, name string, ref CellRef, old, new string, all bool) (NotebookInfo, SourceEdit, error) {
	d, m, err := commitTo(ctx, e, session, name, func(on onNotebook) *editSource {
		return &editSource{onNotebook: on, ref: ref, old: old, new: new, all: all}
	})
	if err != nil {
		return NotebookInfo{}, SourceEdit{}, err
	}
	return e.info(d, session), m.edit, nil
}

// DeleteCells deletes the cells named by ids (when any) or indices, checking
// every one before deleting anything, and saves. It returns the deleted cells
// in the order given, each with the index it had before the delete.
func (e *Engine) DeleteCells(ctx context.Context, session, name string, indices []int, ids []string) (NotebookInfo, []CellInfo, error) {
	d, m, err := commitTo(ctx, e, session, name, func(on onNotebook) *deleteCells {
		return &deleteCells{onNotebook: on, indices: indices, ids: ids}
	})
	if err != nil {
		return NotebookInfo{}, nil, err
	}
	return e.info(d, session), m.deleted, nil
}

// MoveCell moves a cell (src) to where dst is now and saves; it returns the
// cell and its old and new index. With indices, [A B C D] moving 1 to 3
// gives [A C D B]: the target index is where the cell ends up.
func (e *Engine) MoveCell(ctx context.Context, session, name string, src, dst CellRef) (NotebookInfo, CellInfo, int, error) {
	d, m, err := commitTo(ctx, e, session, name, func(on onNotebook) *moveCell {
		return &moveCell{onNotebook: on, src: src, dst: dst}
	})
	if err != nil {
		return NotebookInfo{}, CellInfo{}, 0, err
	}
	return e.info(d, session), m.moved, m.from, nil
}

// ClearCellOutput clears a code cell's outputs and execution count and saves.
func (e *Engine) ClearCellOutput(ctx context.Context, session, name string, ref CellRef) (NotebookInfo, CellInfo, error) {
	d, m, err := commitTo(ctx, e, session, name, func(on onNotebook) *clearOutputs {
		return &clearOutputs{onNotebook: on, ref: ref}
	})
	if err != nil {
		return NotebookInfo{}, CellInfo{}, err
	}
	return e.info(d, session), m.cell, nil
}

// CellOutput returns one output of one cell (for the output resource).
func (e *Engine) CellOutput(ctx context.Context, name, cellID string, index int) (notebook.Output, error) {
	d, err := e.lookup("", name)
	if err != nil {
		return notebook.Output{}, err
	}
	nb := d.model()
	i, err := findCell(nb, d.name, cellID, RoleCell)
	if err != nil {
		return notebook.Output{}, err
	}
	outs := nb.Cells[i].Outputs
	if index < 0 || index >= len(outs) {
		if len(outs) == 0 {
			return notebook.Output{}, Userf("output index %d is out of range: cell %q has no outputs", index, cellID)
		}
		return notebook.Output{}, Userf("output index %d is out of range: cell %q has %d outputs (valid indices 0-%d)", index, cellID, len(outs), len(outs)-1)
	}
	return outs[index], nil
}
