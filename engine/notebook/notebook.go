// Package notebook is the nbformat 4.x document model: it loads and saves
// notebooks keeping every unknown field and metadata untouched, gives every
// cell an nbformat 4.5 id, and refuses malformed input whole.
package notebook

import "encoding/json"

// Cell types.
const (
	Code     = "code"
	Markdown = "markdown"
	Raw      = "raw"
)

// Output types.
const (
	Stream        = "stream"
	DisplayData   = "display_data"
	ExecuteResult = "execute_result"
	Error         = "error"
)

// Notebook is an nbformat 4.x notebook.
type Notebook struct {
	NBFormat      int
	NBFormatMinor int
	Metadata      json.RawMessage // kept as given ("{}" when absent)
	Cells         []*Cell
	Extra         map[string]json.RawMessage // unknown top-level keys, kept
}

// Cell is one cell. Source is always the joined string.
type Cell struct {
	ID             string
	Type           string // code, markdown, raw
	Source         string
	Metadata       json.RawMessage
	ExecutionCount *int     // code cells only
	Outputs        []Output // code cells only
	Attachments    json.RawMessage
	Extra          map[string]json.RawMessage
}

// Output is one output of a code cell.
type Output struct {
	OutputType     string // stream, display_data, execute_result, error
	Name           string // stream: stdout or stderr
	Text           string // stream: joined text
	Data           map[string]json.RawMessage // mime type -> value as in the file (string or list of strings or JSON)
	Metadata       json.RawMessage
	ExecutionCount *int // execute_result
	EName          string
	EValue         string
	Traceback      []string
	Extra          map[string]json.RawMessage
}

