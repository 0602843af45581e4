package sandbox

import (
	"encoding/json"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
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

// outputFromMessage turns an iopub message into an output. ok is false for
// messages that are not outputs (execute_input, clear_output, ...).
func outputFromMessage(m jupyter.Message) (notebook.Output, bool) {
	var c struct {
		Name           string                     `json:"name"`
		Text           string                     `json:"text"`
		Data           map[string]json.RawMessage `json:"data"`
		Metadata       json.RawMessage            `json:"metadata"`
		ExecutionCount *int                       `json:"execution_count"`
		EName          string                     `json:"ename"`
		EValue         string                     `json:"evalue"`
		Traceback      []string                   `json:"traceback"`
	}
	if err := json.Unmarshal(m.Content, &c); err != nil {
		return notebook.Output{}, false
	}
	switch m.Header.MsgType {
	case "stream":
		return notebook.Output{OutputType: notebook.Stream, Name: c.Name, Text: c.Text}, true
	case "execute_result":
		return notebook.Output{OutputType: notebook.ExecuteResult, Data: c.Data, Metadata: metadataOrEmpty(c.Metadata), ExecutionCount: c.ExecutionCount}, true
	case "display_data", "update_display_data":
		return notebook.Output{OutputType: notebook.DisplayData, Data: c.Data, Metadata: metadataOrEmpty(c.Metadata)}, true
	case "error":
		return notebook.Output{OutputType: notebook.Error, EName: c.EName, EValue: c.EValue, Traceback: c.Traceback}, true
	}
	return notebook.Output{}, false
}

func metadataOrEmpty(m json.RawMessage) json.RawMessage {
	if len(m) == 0 || string(m) == "null" {
		return json.RawMessage("{}")
	}
	return m
}

// textData is a mime bundle of plain text.
func textData(s string) map[string]json.RawMessage {
	b, _ := json.Marshal(s)
	return map[string]json.RawMessage{"text/plain": b}
}
