package engine

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Bounds of the cell copies carried by events: observers show cells, they
// do not archive them, and a 5 MB output must not be copied into every event.
const (
	snapshotMaxOutputs = 20
	snapshotMaxText    = 8 << 10
)

// snapshotCells copies cells for an event.
func snapshotCells(cells []*notebook.Cell) []CellSnapshot {
	snaps := make([]CellSnapshot, len(cells))
	for i, c := range cells {
		snaps[i] = snapshotCell(c)
	}
	return snaps
}

// snapshotCell copies one cell for an event, bounding its outputs.
func snapshotCell(c *notebook.Cell) CellSnapshot {
	s := CellSnapshot{ID: c.ID, Type: c.Type, Source: c.Source, ExecutionCount: c.ExecutionCount}
	outs := c.Outputs
	if len(outs) > snapshotMaxOutputs {
		s.OutputsOmitted = len(outs) - snapshotMaxOutputs
		outs = outs[:snapshotMaxOutputs]
	}
	if len(outs) > 0 {
		s.Outputs = make([]OutputSnapshot, len(outs))
		for i := range outs {
			s.Outputs[i] = snapshotOutput(&outs[i])
		}
	}
	return s
}

// snapshotOutput reduces an output to its bounded text or an image's bytes.
func snapshotOutput(o *notebook.Output) OutputSnapshot {
	s := OutputSnapshot{Kind: o.OutputType, Name: o.Name}
	switch o.OutputType {
	case notebook.Stream:
		s.Text = o.Text
	case notebook.Error:
		if len(o.Traceback) > 0 {
			s.Text = strings.Join(o.Traceback, "\n")
		} else {
			s.Text = o.EName + ": " + o.EValue
		}
	default:
		for _, mime := range []string{"image/png", "image/jpeg"} {
			if v, ok := o.Data[mime]; ok {
				if img, err := decodeImage(v); err == nil {
					s.MimeType, s.Image = mime, img
					return s
				}
			}
		}
		if v, ok := o.Data["text/plain"]; ok {
			s.Text = notebook.DataText(v)
		} else if v, ok := o.Data["text/markdown"]; ok {
			s.Text = notebook.DataText(v)
		} else if v, ok := o.Data["text/html"]; ok {
			s.Text = notebook.DataText(v)
		}
	}
	if len(s.Text) > snapshotMaxText {
		cut := snapshotMaxText
		for cut > 0 && !utf8RuneStart(s.Text[cut]) {
			cut--
		}
		s.Cut = len(s.Text) - cut
		s.Text = s.Text[:cut]
	}
	return s
}

// decodeImage decodes a base64 image value of a mime bundle (a string, or a
// list of strings as nbformat allows).
func decodeImage(v json.RawMessage) ([]byte, error) {
	text := notebook.DataText(v)
	text = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' {
			return -1
		}
		return r
	}, text)
	return base64.StdEncoding.DecodeString(text)
}
