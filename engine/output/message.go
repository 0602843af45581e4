package output

import (
	"encoding/json"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Content is the content of a kernel message that makes an output (stream,
// execute_result, display_data, update_display_data, error). The eval
// sandbox's driver writes its events with the same fields.
type Content struct {
	Name           string                     `json:"name"`
	Text           string                     `json:"text"`
	Data           map[string]json.RawMessage `json:"data"`
	Metadata       json.RawMessage            `json:"metadata"`
	ExecutionCount *int                       `json:"execution_count"`
	EName          string                     `json:"ename"`
	EValue         string                     `json:"evalue"`
	Traceback      []string                   `json:"traceback"`
	Transient      struct {
		DisplayID string `json:"display_id"`
	} `json:"transient"`
}

// FromMessage turns an iopub message into the notebook output it makes.
// displayID is the message's transient display id (never stored: a reader
// that honours update_display_data matches on it). ok is false for a message
// that makes no output (execute_input, clear_output, status, ...) or that
// cannot be read.
func FromMessage(m jupyter.Message) (o notebook.Output, displayID string, ok bool) {
	switch m.Header.MsgType {
	case "stream", "execute_result", "display_data", "update_display_data", "error":
	default:
		return notebook.Output{}, "", false
	}
	var c Content
	if json.Unmarshal(m.Content, &c) != nil {
		return notebook.Output{}, "", false
	}
	return FromContent(m.Header.MsgType, c)
}

// FromContent is FromMessage for content already decoded. The output is
// what nbformat stores: metadata is an object, a traceback a list, and an
// update_display_data is a display_data.
func FromContent(msgType string, c Content) (o notebook.Output, displayID string, ok bool) {
	switch msgType {
	case "stream":
		return notebook.Output{OutputType: notebook.Stream, Name: c.Name, Text: c.Text}, "", true
	case "execute_result":
		return notebook.Output{OutputType: notebook.ExecuteResult, Data: c.Data, Metadata: objectOrEmpty(c.Metadata), ExecutionCount: c.ExecutionCount}, c.Transient.DisplayID, true
	case "display_data", "update_display_data":
		return notebook.Output{OutputType: notebook.DisplayData, Data: c.Data, Metadata: objectOrEmpty(c.Metadata)}, c.Transient.DisplayID, true
	case "error":
		tb := c.Traceback
		if tb == nil {
			tb = []string{}
		}
		return notebook.Output{OutputType: notebook.Error, EName: c.EName, EValue: c.EValue, Traceback: tb}, "", true
	}
	return notebook.Output{}, "", false
}

// objectOrEmpty returns v, or {} when v is absent or null: nbformat
// requires output metadata to be an object.
func objectOrEmpty(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return json.RawMessage("{}")
	}
	return v
}
