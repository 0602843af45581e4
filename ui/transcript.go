package ui

import (
	"fmt"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// Transcript is what the workbench holds after a sequence of engine events,
// as the text its panes draw before layout (no wrapping, no clipping to the
// pane's size). The output-model test compares it with what the agent got;
// it also reads a recording as text.
type Transcript struct{ st *observe.State }

// NewTranscript reduces events the way the workbench does.
func NewTranscript(events []event.Event) *Transcript {
	st := observe.NewState(nil)
	for _, ev := range events {
		// As the Model takes them: sanitized on the way in.
		st.Apply(sanitizeEvent(ev))
	}
	return &Transcript{st: st}
}

// CellOutputs is the text the notebook pane draws for each output of a cell
// (an image as "[mime image, N bytes]"), colours kept.
func (t *Transcript) CellOutputs(notebook, cellID string) []string {
	nb := t.st.Notebooks[notebook]
	if nb == nil {
		return nil
	}
	i := nb.IndexOf(cellID)
	if i < 0 {
		return nil
	}
	var texts []string
	for _, o := range nb.Cells[i].Outputs {
		if len(o.Image) > 0 {
			texts = append(texts, fmt.Sprintf("[%s image, %d bytes]", o.MimeType, len(o.Image)))
			continue
		}
		texts = append(texts, outputText(&o.OutputSnapshot))
	}
	return texts
}

// CellImages is the image bytes the notebook pane draws for each output of
// a cell, nil for a text output.
func (t *Transcript) CellImages(notebook, cellID string) [][]byte {
	nb := t.st.Notebooks[notebook]
	if nb == nil || nb.IndexOf(cellID) < 0 {
		return nil
	}
	var imgs [][]byte
	for _, o := range nb.Cells[nb.IndexOf(cellID)].Outputs {
		imgs = append(imgs, o.Image)
	}
	return imgs
}

// Execution is the text the executions pane holds for the execution of a
// cell: its output lines, the last one unterminated.
func (t *Transcript) Execution(notebook, cellID string) string {
	for i := len(t.st.Execs) - 1; i >= 0; i-- {
		if x := t.st.Execs[i]; x.Notebook == notebook && x.CellID == cellID {
			return strings.Join(x.Tail(observe.MaxExecTailLines), "\n")
		}
	}
	return ""
}
