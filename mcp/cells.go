package mcp

import (
	"context"
	"fmt"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Cell tools: read, insert, overwrite, edit, delete, move, clear.

// ref builds the engine's cell address from the optional index and id.
func ref(index *int, id *string) engine.CellRef {
	return engine.CellRef{Index: index, ID: deref(id)}
}

// patchCellRef patches the usual (cell_index, notebook_name, cell_id) trio.
func patchCellRef(p patcher, hasNotebook bool) {
	minimum(nullable(p.get("cell_index")), 0)
	nullable(p.get("cell_id"))
	if hasNotebook {
		nullable(p.get("notebook_name"))
	}
}

type readCellIn struct {
	CellIndex      *int    `json:"cell_index,omitempty" jsonschema:"Index of the cell to read (0-based). Omit when passing cell_id."`
	IncludeOutputs bool    `json:"include_outputs,omitempty" jsonschema:"Include outputs in the response (only for code cells)"`
	NotebookName   *string `json:"notebook_name,omitempty"`
	CellID         *string `json:"cell_id,omitempty"`
}

func patchReadCell(p patcher) {
	patchCellRef(p, true)
	def(p.get("include_outputs"), true)
}

// readCell answers in the outputs shape, as the reference's "readable text
// entries": the cell header, then the source, then each output, one entry
// each in result and in content (its clients read the source as the
// second entry). outputs and count are the cell's outputs only (empty
// unless include_outputs and a code cell), and the cell itself (index, id,
// type, source, execution count) is carried under "cell" beside them.
func (s *Server) readCell(ctx context.Context, c *call, in readCellIn) (*answer, error) {
	nb, cell, err := s.e.ReadCell(ctx, c.session, deref(in.NotebookName), ref(in.CellIndex, in.CellID))
	if err != nil {
		return nil, err
	}
	var outs []notebook.Output
	if in.IncludeOutputs && cell.Type == notebook.Code {
		outs = cell.Outputs
	}
	a := outputs(outs, outputLoc{notebook: nb.Name, cellID: cell.ID}, s.render(), []string{cellHeader(cell), cell.Source})
	a.structured["cell"] = map[string]any{
		"index":           cell.Index,
		"id":              cell.ID,
		"type":            cell.Type,
		"source":          cell.Source,
		"execution_count": cell.ExecutionCount,
	}
	return a.withCell(cell.ID).withNotebook(nb.Name), nil
}

type insertCellIn struct {
	CellIndex    int     `json:"cell_index" jsonschema:"Target index for insertion (0-based), use -1 to append at end"`
	CellType     string  `json:"cell_type" jsonschema:"Type of cell to insert"`
	CellSource   string  `json:"cell_source" jsonschema:"Source content for the cell"`
	NotebookName *string `json:"notebook_name,omitempty"`
}

func patchInsertCell(p patcher) {
	minimum(p.get("cell_index"), -1)
	enum(p.get("cell_type"), notebook.Code, notebook.Markdown, notebook.Raw)
	nullable(p.get("notebook_name"))
}

func (s *Server) insertCell(ctx context.Context, c *call, in insertCellIn) (*answer, error) {
	nb, cell, err := s.e.InsertCell(ctx, c.session, deref(in.NotebookName), in.CellIndex, in.CellType, in.CellSource)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("Cell inserted successfully at index %d (%s)! Its id is '%s'; address it by cell_id from now on.\nNotebook %s now has %d cells.",
		cell.Index, cell.Type, cell.ID, nb.Name, nb.Cells)
	return message(text).withCell(cell.ID).withNotebook(nb.Name), nil
}

type overwriteCellIn struct {
	CellIndex    *int    `json:"cell_index,omitempty" jsonschema:"Index of the cell to overwrite (0-based). Omit when passing cell_id."`
	CellSource   string  `json:"cell_source" jsonschema:"New complete cell source"`
	NotebookName *string `json:"notebook_name,omitempty"`
	CellID       *string `json:"cell_id,omitempty"`
}

func patchOverwriteCell(p patcher) { patchCellRef(p, true) }

func (s *Server) overwriteCellSource(ctx context.Context, c *call, in overwriteCellIn) (*answer, error) {
	nb, ch, err := s.e.OverwriteCellSource(ctx, c.session, deref(in.NotebookName), ref(in.CellIndex, in.CellID), in.CellSource)
	if err != nil {
		return nil, err
	}
	return message(textDiff("overwritten", ch.Cell.Index, ch.Diff)).withCell(ch.Cell.ID).withNotebook(nb.Name), nil
}

type editCellIn struct {
	CellIndex    *int    `json:"cell_index,omitempty" jsonschema:"Index of the cell to edit (0-based). Omit when passing cell_id."`
	OldString    string  `json:"old_string" jsonschema:"Exact string to find in cell source"`
	NewString    string  `json:"new_string" jsonschema:"Replacement string"`
	ReplaceAll   bool    `json:"replace_all,omitempty" jsonschema:"Replace all occurrences (default: first only)"`
	NotebookName *string `json:"notebook_name,omitempty"`
	CellID       *string `json:"cell_id,omitempty"`
}

func patchEditCell(p patcher) {
	patchCellRef(p, true)
	def(p.get("replace_all"), false)
}

func (s *Server) editCellSource(ctx context.Context, c *call, in editCellIn) (*answer, error) {
	nb, ch, err := s.e.EditCellSource(ctx, c.session, deref(in.NotebookName), ref(in.CellIndex, in.CellID), in.OldString, in.NewString, in.ReplaceAll)
	if err != nil {
		return nil, err
	}
	return message(textDiff("edited", ch.Cell.Index, ch.Diff)).withCell(ch.Cell.ID).withNotebook(nb.Name), nil
}

type deleteCellIn struct {
	CellIndices     []int    `json:"cell_indices,omitempty" jsonschema:"List of cell indices to delete (0-based). Omit when passing cell_ids_to_delete."`
	IncludeSource   bool     `json:"include_source,omitempty" jsonschema:"Whether to include the source of deleted cells"`
	NotebookName    *string  `json:"notebook_name,omitempty"`
	CellIDsToDelete []string `json:"cell_ids_to_delete,omitempty" jsonschema:"Address the cells by their notebook cell ids instead of their indices. Safer for a multi-cell delete than indices, which shift as earlier cells go. Given both, the ids win; every id is checked before any cell is deleted, so a bad one fails the whole call rather than half-deleting the notebook."`
}

func patchDeleteCell(p patcher) {
	idx := nullable(p.get("cell_indices"))
	one := 1
	idx.MinItems = &one
	nullable(p.get("cell_ids_to_delete"))
	def(p.get("include_source"), true)
	nullable(p.get("notebook_name"))
}

// deleteCell names every deleted cell id in _meta ("cell_ids", as the
// reference does for a multi-cell tool) and, when one cell went, its id
// under "cell_id" too.
func (s *Server) deleteCell(ctx context.Context, c *call, in deleteCellIn) (*answer, error) {
	nb, cells, err := s.e.DeleteCells(ctx, c.session, deref(in.NotebookName), in.CellIndices, in.CellIDsToDelete)
	if err != nil {
		return nil, err
	}
	a := message(textDeleted(cells, in.IncludeSource)).withNotebook(nb.Name)
	for _, cell := range cells {
		a.cellIDs = append(a.cellIDs, cell.ID)
	}
	if len(cells) == 1 {
		a.withCell(cells[0].ID)
	}
	return a, nil
}

type moveCellIn struct {
	SourceIndex  *int    `json:"source_index,omitempty" jsonschema:"Index of the cell to move (0-based). Omit when passing source_cell_id."`
	TargetIndex  *int    `json:"target_index,omitempty" jsonschema:"Destination index where the cell will end up (0-based). Omit when passing target_cell_id."`
	NotebookName *string `json:"notebook_name,omitempty"`
	SourceCellID *string `json:"source_cell_id,omitempty" jsonschema:"Address the cell to move by its id rather than its index."`
	TargetCellID *string `json:"target_cell_id,omitempty" jsonschema:"Put the moved cell where this cell is now, addressed by id rather than by an index that the move itself will shift."`
}

func patchMoveCell(p patcher) {
	minimum(nullable(p.get("source_index")), 0)
	minimum(nullable(p.get("target_index")), 0)
	nullable(p.get("notebook_name"))
	nullable(p.get("source_cell_id"))
	nullable(p.get("target_cell_id"))
}

func (s *Server) moveCell(ctx context.Context, c *call, in moveCellIn) (*answer, error) {
	nb, cell, from, err := s.e.MoveCell(ctx, c.session, deref(in.NotebookName),
		ref(in.SourceIndex, in.SourceCellID), ref(in.TargetIndex, in.TargetCellID))
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("Cell moved successfully from index %d to %d (%s). Its id is '%s'.\nNotebook %s has %d cells.",
		from, cell.Index, cell.Type, cell.ID, nb.Name, nb.Cells)
	return message(text).withCell(cell.ID).withNotebook(nb.Name), nil
}

type clearCellIn struct {
	CellIndex    *int    `json:"cell_index,omitempty" jsonschema:"Index of the code cell to clear (0-based). Omit when passing cell_id."`
	NotebookName *string `json:"notebook_name,omitempty"`
	CellID       *string `json:"cell_id,omitempty"`
}

func patchClearCell(p patcher) { patchCellRef(p, true) }

func (s *Server) clearCellOutput(ctx context.Context, c *call, in clearCellIn) (*answer, error) {
	nb, cell, err := s.e.ClearCellOutput(ctx, c.session, deref(in.NotebookName), ref(in.CellIndex, in.CellID))
	if err != nil {
		return nil, err
	}
	return message(fmt.Sprintf("Cell %d output cleared successfully.", cell.Index)).withCell(cell.ID).withNotebook(nb.Name), nil
}
