package sandbox

import (
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// outputList collects the outputs of one run. Consecutive text of one
// stream is merged, as a notebook shows it: a loop printing a line per
// iteration is one output, not hundreds.
type outputList struct {
	items []notebook.Output
}

func (l *outputList) add(o notebook.Output) {
	if o.OutputType == notebook.Stream && len(l.items) > 0 {
		last := &l.items[len(l.items)-1]
		if last.OutputType == notebook.Stream && last.Name == o.Name {
			last.Text += o.Text
			return
		}
	}
	l.items = append(l.items, o)
}

// clear drops the outputs so far (clear_output from the code).
func (l *outputList) clear() { l.items = nil }

func (l *outputList) snapshot() []notebook.Output {
	return append([]notebook.Output(nil), l.items...)
}
