package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// This file is the one place that knows what a tool result looks like on the
// wire. Handlers build an *answer with one of the shape constructors below
// (message, rows, outputs, object, records); toResult turns it into content,
// structuredContent and _meta. Nothing else in the package builds a
// CallToolResult for a successful call.

// _meta keys. The cache key is the protocol's (SEP-2549), the others are
// namespaced because _meta is shared with the protocol and every extension.
const (
	metaCache   = "io.modelcontextprotocol/cache"
	metaCellID  = "io.jupyter-mcp/cell_id"
	metaCellIDs = "io.jupyter-mcp/cell_ids"
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

func (l outputLoc) uri(index int) string {
	if l.notebook == "" || l.cellID == "" {
		return ""
	}
	return fmt.Sprintf("notebook://%s/cells/%s/outputs/%d", url.PathEscape(l.notebook), url.PathEscape(l.cellID), index)
}

// renderOpts are the server options that shape outputs.
type renderOpts struct {
	images   bool
	maxBytes int
}

// outputs is the execution answer: the outputs in order, text as strings and
// images as image objects, both in structuredContent and in content (images
// as ImageContent). head is text put before the outputs (read_cell's cell
// header and source): it leads content and result, so that result holds the
// whole answer as the text does, while outputs and count hold the cell's
// outputs only. Notes are appended to both lists, the way the reference
// appends its "[TIMEOUT ...]" markers, so a client reading only result still
// learns that an execution is still running.
func outputs(outs []notebook.Output, loc outputLoc, o renderOpts, head string, notes ...string) *answer {
	list := make([]any, 0, len(outs)+len(notes))
	var content []sdk.Content
	if head != "" {
		content = append(content, &sdk.TextContent{Text: head})
	}
	images := 0
	for i, out := range outs {
		r := renderOutput(out, o, loc.uri(i))
		if r.image != nil {
			images++
			list = append(list, map[string]any{"type": "image", "mimeType": r.image.mime, "data": r.image.b64})
			content = append(content, &sdk.ImageContent{MIMEType: r.image.mime, Data: r.image.raw})
			continue
		}
		list = append(list, r.text)
		content = append(content, &sdk.TextContent{Text: r.text})
	}
	for _, n := range notes {
		list = append(list, n)
		content = append(content, &sdk.TextContent{Text: n})
	}
	if len(list) == 0 && head == "" {
		// Text is never dropped: an execution with nothing to show still
		// says so, or a client that reads only content sees nothing at all.
		content = append(content, &sdk.TextContent{Text: "[No output generated]"})
	}
	result := list
	if head != "" {
		result = append([]any{head}, list...)
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

// rendered is one output reduced to what an agent reads.
type rendered struct {
	text  string
	image *image
}

type image struct {
	mime string
	b64  string // as sent in structuredContent
	raw  []byte // decoded, for ImageContent (the SDK encodes it again)
}

// imageMIMEs are the image types shown as images, in order of preference.
var imageMIMEs = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// renderOutput turns one nbformat output into text or an image. Text has ANSI
// escapes stripped (tracebacks are coloured) and is cut when it is longer than
// o.maxBytes, saying how much was cut and where the whole output is.
func renderOutput(out notebook.Output, o renderOpts, uri string) rendered {
	switch out.OutputType {
	case notebook.Stream:
		return rendered{text: cutText(ansi.Strip(out.Text), o.maxBytes, uri)}
	case notebook.Error:
		text := strings.Join(out.Traceback, "\n")
		if strings.TrimSpace(text) == "" {
			text = out.EName + ": " + out.EValue
		}
		return rendered{text: cutText(ansi.Strip(text), o.maxBytes, uri)}
	case notebook.ExecuteResult, notebook.DisplayData:
		for _, m := range imageMIMEs {
			v, ok := out.Data[m]
			if !ok {
				continue
			}
			if !o.images {
				return rendered{text: fmt.Sprintf("[Image Output (%s) - Image display disabled]", m)}
			}
			b64 := strings.Join(strings.Fields(dataText(v)), "")
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return rendered{text: fmt.Sprintf("[Image Output (%s) - Error processing image]", m)}
			}
			return rendered{image: &image{mime: m, b64: b64, raw: raw}}
		}
		return rendered{text: cutText(ansi.Strip(richestText(out)), o.maxBytes, uri)}
	default:
		return rendered{text: fmt.Sprintf("[Unknown output type: %s]", out.OutputType)}
	}
}

// objectRepr matches the bare repr IPython puts in text/plain for display
// objects ("<IPython.core.display.Markdown object>"), which says nothing.
var objectRepr = regexp.MustCompile(`^<[\w.]+ object( at 0x[0-9a-fA-F]+)?>$`)

// richestText picks the text an agent should read from a mime bundle:
// text/plain when it says something (it is what the kernel meant as text, and
// markdown or HTML renderings of the same value are longer), else markdown,
// LaTeX or JSON, else whatever text/plain there is, else a placeholder naming
// what was there.
func richestText(out notebook.Output) string {
	plain, hasPlain := out.Data["text/plain"]
	if hasPlain {
		if t := dataText(plain); !objectRepr.MatchString(strings.TrimSpace(t)) {
			return t
		}
	}
	for _, m := range []string{"text/markdown", "text/latex"} {
		if v, ok := out.Data[m]; ok {
			return dataText(v)
		}
	}
	if v, ok := out.Data["application/json"]; ok {
		var x any
		if json.Unmarshal(v, &x) == nil {
			return jsonText(x)
		}
	}
	if hasPlain {
		return dataText(plain)
	}
	if _, ok := out.Data["text/html"]; ok {
		return "[HTML Output]"
	}
	keys := make([]string, 0, len(out.Data))
	for k := range out.Data {
		keys = append(keys, k)
	}
	return fmt.Sprintf("[%s Data: keys=%v]", out.OutputType, keys)
}

// dataText is the text of a mime-bundle value: a string, a list of strings
// joined (how nbformat stores multi-line text), or the JSON itself.
func dataText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var parts []string
	if json.Unmarshal(v, &parts) == nil {
		return strings.Join(parts, "")
	}
	return string(v)
}

// cutText keeps the first max bytes of text (on a line boundary when one is
// near, never inside a UTF-8 sequence) and says what was cut: how many bytes
// and lines, and the resource that serves the whole output when there is one.
func cutText(text string, max int, uri string) string {
	if max <= 0 || len(text) <= max {
		return text
	}
	keep := max
	for keep > 0 && !utf8Start(text[keep]) {
		keep--
	}
	if nl := strings.LastIndexByte(text[:keep], '\n'); nl >= keep/2 {
		keep = nl + 1
	}
	rest := text[keep:]
	lines := strings.Count(rest, "\n")
	if !strings.HasSuffix(rest, "\n") {
		lines++
	}
	where := "the output was not saved anywhere, so rerun the code printing less to see the rest"
	if uri != "" {
		where = "read the resource " + uri + " for the whole output"
	}
	return fmt.Sprintf("%s\n[... output cut: %d more bytes (%d lines) not shown; %s]", text[:keep], len(rest), lines, where)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// toResult turns an answer into the wire result: content as built,
// structuredContent with kind, _meta with the cache hint (listings only) and
// the acted-on cell. The structured answer is validated against the tool's
// declared output schema on every call; a mismatch is a server bug, logged
// and recorded in the call's outcome, and the result still goes out (losing
// the answer would be worse than a wrong shape).
func (s *Server) toResult(d *toolDef, c *call, a *answer) *sdk.CallToolResult {
	structured := map[string]any{"kind": d.kind}
	for k, v := range a.structured {
		structured[k] = v
	}
	res := &sdk.CallToolResult{Content: a.content}
	if len(res.Content) == 0 {
		res.Content = []sdk.Content{&sdk.TextContent{Text: ""}}
	}

	raw, err := json.Marshal(structured)
	ok := err == nil
	problem := ""
	if err != nil {
		problem = "marshal: " + err.Error()
	} else {
		// The validator wants the value as JSON decodes it. Decoding raw
		// again cost more than the validation itself, so the answer is
		// viewed as JSON in place when its types allow.
		v, exact := jsonView(structured)
		if !exact {
			v = nil
			err = json.Unmarshal(raw, &v)
		}
		if err != nil {
			ok, problem = false, "unmarshal: "+err.Error()
		} else if r := s.resolved[d.name]; r != nil {
			if err := r.Validate(v); err != nil {
				ok, problem = false, err.Error()
			}
		}
		res.StructuredContent = json.RawMessage(raw)
	}
	if !ok {
		s.noteSchemaProblem(d.name, problem)
	}

	meta := sdk.Meta{}
	if d.cacheTTL > 0 {
		meta[metaCache] = map[string]any{"ttlMs": d.cacheTTL, "cacheScope": "private"}
	}
	if a.cellID != "" {
		meta[metaCellID] = a.cellID
	}
	if len(a.cellIDs) > 0 {
		meta[metaCellIDs] = a.cellIDs
	}
	if len(meta) > 0 {
		res.Meta = meta
	}

	c.schemaOK, c.schemaProblem = &ok, problem
	c.cellID, c.images = a.cellID, a.images
	if a.notebook != "" {
		c.notebook = a.notebook
	}
	return res
}

// secretPattern matches what must never reach an agent: a token in a URL
// query or an Authorization header value.
var secretPattern = regexp.MustCompile(`(?i)(token=|token\s+|bearer\s+|authorization:\s*\S+\s+)[^\s&"',;)]+`)

// redact removes tokens from an error text.
func redact(text string) string {
	return secretPattern.ReplaceAllString(redactURLs(text), "${1}[redacted]")
}

// errorResult is the result of a call to tool that failed. A user error
// (engine.IsUserError) is the agent's to fix and agentText says how;
// anything else is a failure of
// this server or of Jupyter, said as such (the agent should not retry with
// different arguments), with any token removed.
func errorResult(tool string, err error) *sdk.CallToolResult {
	var text string
	if engine.IsUserError(err) {
		// A user error may quote a URL the agent gave (with its token):
		// only URL secrets are removed, since the rest may quote code.
		text = redactURLs(agentText(tool, err))
	} else {
		text = "Server error (Jupyter or this MCP server failed, not your arguments): " + redact(err.Error())
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// jsonView is jsonValue without reflection for the types answers are
// made of.
func jsonView(v any) (any, bool) {
	switch v := v.(type) {
	case nil:
		return nil, true
	case string:
		return v, utf8.ValidString(v)
	case int:
		return float64(v), true
	case bool:
		return v, true
	case map[string]any:
		if v == nil {
			return nil, true
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			j, ok := jsonView(e)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = j
		}
		return out, true
	case []any:
		if v == nil {
			return nil, true
		}
		out := make([]any, len(v))
		for i, e := range v {
			j, ok := jsonView(e)
			if !ok {
				return nil, false
			}
			out[i] = j
		}
		return out, true
	case []string:
		if v == nil {
			return nil, true
		}
		out := make([]any, len(v))
		for i, e := range v {
			if !utf8.ValidString(e) {
				return nil, false
			}
			out[i] = e
		}
		return out, true
	}
	return jsonValue(reflect.ValueOf(v))
}

// jsonValue returns what json.Unmarshal into an any would make of
// json.Marshal(v) (maps as map[string]any, lists as []any, numbers as
// float64), sharing v's strings instead of copying them. It reports false
// when v holds something whose encoding it does not mirror exactly (a
// struct, a json.Marshaler, []byte, float32, a string that is not valid
// UTF-8, ...); the caller then does the round trip.
func jsonValue(v reflect.Value) (any, bool) {
	if !v.IsValid() {
		return nil, true
	}
	t := v.Type()
	if t.Kind() != reflect.Interface && t.Kind() != reflect.Pointer &&
		(t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
			reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil, true
		}
		return jsonValue(v.Elem())
	case reflect.String:
		s := v.String()
		return s, utf8.ValidString(s)
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), true
	case reflect.Float64:
		return v.Float(), true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // base64 on the wire
		}
		if v.IsNil() {
			return nil, true
		}
		out := make([]any, v.Len())
		for i := range out {
			e, ok := jsonValue(v.Index(i))
			if !ok {
				return nil, false
			}
			out[i] = e
		}
		return out, true
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key() != reflect.TypeFor[string]() {
			return nil, false
		}
		if v.IsNil() {
			return nil, true
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				return nil, false
			}
			e, ok := jsonValue(it.Value())
			if !ok {
				return nil, false
			}
			out[k] = e
		}
		return out, true
	}
	return nil, false
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
)
