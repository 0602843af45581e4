package engine

import (
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// snapshotMaxOutputs bounds the outputs of a cell copied into an event:
// observers show cells, they do not archive them. Each output's text is
// bounded like a tool result's (MaxOutputBytes), so that the workbench shows
// the text the agent got.
const snapshotMaxOutputs = 20

// MaxOutputBytes is the bound on the text of one output (Config).
func (e *Engine) MaxOutputBytes() int { return e.cfg.MaxOutputBytes }

// outputOptions are the options of the view of output index of a cell of
// the notebook used under name ("" for execute_code: no resource).
func (e *Engine) outputOptions(name, cellID string, index int) output.Options {
	return output.Options{Limit: e.cfg.MaxOutputBytes, URI: output.URI(name, cellID, index)}
}

// snapshotCells copies cells for an event about the notebook used under
// name.
func (e *Engine) snapshotCells(name string, cells []*notebook.Cell) []event.CellSnapshot {
	snaps := make([]event.CellSnapshot, len(cells))
	for i, c := range cells {
		snaps[i] = e.snapshotCell(name, c)
	}
	return snaps
}

// snapshotCell copies one cell for an event, bounding its outputs.
func (e *Engine) snapshotCell(name string, c *notebook.Cell) event.CellSnapshot {
	s := event.CellSnapshot{ID: c.ID, Type: c.Type, Source: c.Source, ExecutionCount: c.ExecutionCount}
	outs := c.Outputs
	if len(outs) > snapshotMaxOutputs {
		s.OutputsOmitted = len(outs) - snapshotMaxOutputs
		outs = outs[:snapshotMaxOutputs]
	}
	if len(outs) > 0 {
		s.Outputs = make([]event.OutputSnapshot, len(outs))
		for i := range outs {
			s.Outputs[i] = output.Render(&outs[i], e.outputOptions(name, c.ID, i))
		}
	}
	return s
}
