package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// An output that cannot be saved must not cost the cell every other
// output: a display_data nested a thousand levels deep made the whole
// notebook unsavable (Jupyter's Python json stops a few hundred levels
// down: jupyter_server 1.23 on Python 3.11 saved 481 levels of arrays in an
// output and refused 482), while the agent was told its run succeeded. Such
// an output is saved as a stub that says so, the others as they are, and
// the agent is told.

// maxSavedDepth bounds the nesting of an output written into a notebook,
// well under what Jupyter reads, so that the notebook keeps saving on any
// Python.
const maxSavedDepth = 200

// unsavedOutput is an output kept out of the notebook.
type unsavedOutput struct {
	index int
	kind  string // output type, and its mime types
	depth int
}

// saveableOutputs returns outs as they can be saved, each too deep one
// replaced by a stub, and which were replaced.
func saveableOutputs(outs []notebook.Output) ([]notebook.Output, []unsavedOutput) {
	var unsaved []unsavedOutput
	var saved []notebook.Output
	for i := range outs {
		d := outs[i].Depth()
		if d <= maxSavedDepth {
			continue
		}
		if saved == nil {
			saved = append([]notebook.Output(nil), outs...)
		}
		u := unsavedOutput{index: i, kind: outputKind(&outs[i]), depth: d}
		unsaved = append(unsaved, u)
		saved[i] = notebook.Output{OutputType: notebook.DisplayData, Metadata: []byte("{}"), Data: map[string]json.RawMessage{
			"text/plain": notebook.DataString(fmt.Sprintf("[jupyter-mcp-server: this output (%s) was not saved: its JSON nests %d levels deep, more than a notebook can hold (%d). Run the cell again to see it.]", u.kind, d, maxSavedDepth)),
		}}
	}
	if saved == nil {
		return outs, nil
	}
	return saved, unsaved
}

// unsavedNote is the line the agent reads after the outputs of a run whose
// outputs were not all saved (nil when they were).
func unsavedNote(outs []notebook.Output) *notebook.Output {
	_, unsaved := saveableOutputs(outs)
	if len(unsaved) == 0 {
		return nil
	}
	var parts []string
	for _, u := range unsaved {
		parts = append(parts, fmt.Sprintf("output %d (%s, nested %d levels deep)", u.index, u.kind, u.depth))
	}
	text := fmt.Sprintf("[jupyter-mcp-server: %s could not be saved in the notebook, which holds at most %d levels of nesting; a note stands in its place there, and the other outputs were saved.]\n",
		strings.Join(parts, ", "), maxSavedDepth)
	return &notebook.Output{OutputType: notebook.Stream, Name: "stderr", Text: text}
}

// outputKind names an output for the stub: "display_data, application/json".
func outputKind(o *notebook.Output) string {
	mimes := make([]string, 0, len(o.Data))
	for m := range o.Data {
		mimes = append(mimes, m)
	}
	sort.Strings(mimes)
	if len(mimes) == 0 {
		return o.OutputType
	}
	return o.OutputType + ", " + strings.Join(mimes, ", ")
}
