package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// This file is the one place that knows what a tool result looks like on the
// wire. Handlers build an *answer with one of the shape constructors below
// (message, rows, outputs, object, records); toResult (validate.go) turns it
// into content, structuredContent and _meta. Nothing else in the package builds a
// CallToolResult for a successful call.

// _meta keys. The cache key is the protocol's (SEP-2549), the others are
// namespaced because _meta is shared with the protocol and every extension.
const (
	metaCache   = "io.modelcontextprotocol/cache"
	metaCellID  = "io.jupyter-mcp/cell_id"
	metaCellIDs = "io.jupyter-mcp/cell_ids"
	metaNotices = "io.jupyter-mcp/notices"
)

// Shapes name the three output schemas plus the two variants of the message
// schema (an object's own keys, a list of records).
type shape string

const (
	shapeMessage shape = "message"
	shapeRows    shape = "rows"
	shapeOutputs shape = "outputs"
	shapeObject  shape = "object"
	shapeList    shape = "list"
)

// answer is what a handler hands back: the text and images for content, the
// structured fields beside kind, and the facts worth putting in _meta.
type answer struct {
	content    []sdk.Content
	structured map[string]any // without kind; toResult adds it
	cellID     string
	cellIDs    []string
	notebook   string
	images     int
	cellError  string // what the code run raised (execute_notes.go)
}

// withCell records the cell a result acted on (it goes into _meta).
func (a *answer) withCell(id string) *answer {
	a.cellID = id
	return a
}

// withNotebook records the notebook a result acted on (for the observer).
func (a *answer) withNotebook(name string) *answer {
	a.notebook = name
	return a
}

// message is the plain answer: one text, carried under result.
func message(text string) *answer {
	return &answer{
		content:    []sdk.Content{&sdk.TextContent{Text: text}},
		structured: map[string]any{"result": text},
	}
}

// table is a listing built from typed rows: the header and one string per
// column per row. The TSV text and the items come from the same rows, so the
// structure is never a parse of the rendering.
type table struct {
	columns []string
	rows    [][]string
}

// tsv renders the table as tab-separated lines, header first. Tabs and
// newlines inside a value would break the layout a reader relies on, so they
// are replaced by spaces in the text (the items keep the value as it is).
func (t table) tsv() string {
	var b strings.Builder
	b.WriteString(strings.Join(t.columns, "\t"))
	for _, r := range t.rows {
		b.WriteByte('\n')
		for i, v := range r {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(tsvCell.Replace(v))
		}
	}
	return b.String()
}

var tsvCell = strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ")

// items returns one object per row keyed by the header.
func (t table) items() []map[string]any {
	items := make([]map[string]any, 0, len(t.rows))
	for _, r := range t.rows {
		item := make(map[string]any, len(t.columns))
		for i, c := range t.columns {
			v := ""
			if i < len(r) {
				v = r[i]
			}
			item[c] = v
		}
		items = append(items, item)
	}
	return items
}

// rows is the listing answer. prefix is text shown above the table (the
// reference prints a pagination line there); result keeps the whole text so
// a client that read it before still reads the same thing. A listing with
// nothing in it is a message, with no columns or items.
func rows(prefix string, t table, empty string) *answer {
	if len(t.rows) == 0 {
		return message(empty)
	}
	text := prefix + t.tsv()
	return &answer{
		content: []sdk.Content{&sdk.TextContent{Text: text}},
		structured: map[string]any{
			"result":  text,
			"columns": t.columns,
			"items":   t.items(),
			"count":   len(t.rows),
		},
	}
}

// object is the answer of a tool whose answer is already a mapping: its keys
// go at the top level beside kind, and there is no result. The text shows the
// same mapping as JSON, because text is what most clients show the model.
func object(fields map[string]any) *answer {
	return &answer{
		content:    []sdk.Content{&sdk.TextContent{Text: jsonText(fields)}},
		structured: fields,
	}
}

// records is the answer of a tool answering with a list of records: result
// is the list itself, never a rendering of it.
func records[T any](list []T) *answer {
	if list == nil {
		list = []T{}
	}
	return &answer{
		content:    []sdk.Content{&sdk.TextContent{Text: jsonText(list)}},
		structured: map[string]any{"result": list},
	}
}

func jsonText(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// outputLoc says where outputs live, so a cut output can name the resource
// that serves it whole. The zero value means "not in a notebook"
// (execute_code).
type outputLoc struct {
	notebook string
	cellID   string
}

func (l outputLoc) uri(index int) string { return output.URI(l.notebook, l.cellID, index) }

// renderOpts are the options that shape outputs: images is the server's
// own (whether an agent is sent images at all), maxBytes the engine's bound
// on an output's text, the same one the workbench shows.
type renderOpts struct {
	images   bool
	maxBytes int
}

// outputs is the execution answer: the outputs in order as the output model
// renders them (engine/output: the same text the workbench shows, escapes
// stripped), text as strings and images as image objects, both in structuredContent and in content (images
// as ImageContent). head are text entries put before the outputs, one
// entry each (read_cell's cell header and source): they lead content and
// result, so that result holds the whole answer as the text does, while
// outputs and count hold the cell's outputs only. Notes (a timeout, a
// restarted kernel) follow the outputs in content and result, where the
// reference puts its "[TIMEOUT ERROR ...]" markers, so a client reading only
// result still learns that an execution is still running; they are not
// outputs, so outputs and count leave them out.
func outputs(outs []notebook.Output, loc outputLoc, o renderOpts, head []string, notes ...string) *answer {
	list := make([]any, 0, len(outs)+len(notes))
	content := make([]sdk.Content, 0, len(head)+len(outs)+len(notes))
	for _, h := range head {
		content = append(content, &sdk.TextContent{Text: h})
	}
	images := 0
	for i := range outs {
		v := output.Render(&outs[i], output.Options{Limit: o.maxBytes, URI: loc.uri(i)})
		if v.Image != nil && o.images {
			images++
			list = append(list, map[string]any{"type": "image", "mimeType": v.MimeType, "data": v.Base64()})
			content = append(content, &sdk.ImageContent{MIMEType: v.MimeType, Data: v.Image})
			continue
		}
		text := v.String()
		if v.Image != nil {
			text = fmt.Sprintf("[Image Output (%s) - Image display disabled]", v.MimeType)
		}
		list = append(list, text)
		content = append(content, &sdk.TextContent{Text: text})
	}
	for _, n := range notes {
		content = append(content, &sdk.TextContent{Text: n})
	}
	if len(list) == 0 && len(head) == 0 && len(notes) == 0 {
		// Text is never dropped: an execution with nothing to show still
		// says so, or a client that reads only content sees nothing at all.
		content = append(content, &sdk.TextContent{Text: "[No output generated]"})
	}
	result := list
	if len(head) > 0 || len(notes) > 0 {
		result = make([]any, 0, len(head)+len(list)+len(notes))
		for _, h := range head {
			result = append(result, h)
		}
		result = append(result, list...)
		for _, n := range notes {
			result = append(result, n)
		}
	}
	return &answer{
		content: content,
		structured: map[string]any{
			"result":  result,
			"outputs": list,
			"count":   len(list),
			"images":  images,
		},
		images: images,
	}
}

// errorResult is the result of a call to tool that failed. A user error
// (engine.IsUserError) is the agent's to fix and agentText says how;
// anything else is a failure of
// this server or of Jupyter, said as such (the agent should not retry with
// different arguments), with any token removed.
func errorResult(tool string, err error) *sdk.CallToolResult {
	var text string
	if jt, ok := wordJupyterErrors(tool, err); ok {
		// Jupyter not answering is no fault of the arguments either, and
		// says so itself; it names the server, never its token.
		text = redact(jt)
	} else if engine.IsUserError(err) {
		// A user error may quote a URL the agent gave (with its token):
		// only URL secrets are removed, since the rest may quote code.
		text = redactURLs(agentText(tool, err))
	} else {
		text = "Server error (Jupyter or this MCP server failed, not your arguments): " + redact(err.Error())
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: toolErrorText(tool, text)}}}
}

// toolErrorPrefix leads the text of every failed call, as the reference's
// server (FastMCP) words them: its clients, its own tests among them, tell a
// failed call by this text rather than by isError.
const toolErrorPrefix = "Error executing tool "

// toolErrorText is a failed call's text: the reference's prefix naming the
// tool, then what happened and what to do.
func toolErrorText(tool, text string) string {
	return toolErrorPrefix + tool + ": " + text
}
