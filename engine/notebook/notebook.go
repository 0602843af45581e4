// Package notebook is the nbformat 4.x document model: it loads and saves
// notebooks keeping every unknown field and metadata untouched, gives every
// cell an nbformat 4.5 id, and refuses malformed input whole.
package notebook

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

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
	OutputType     string                     // stream, display_data, execute_result, error
	Name           string                     // stream: stdout or stderr
	Text           string                     // stream: joined text
	Data           map[string]json.RawMessage // mime type -> value as in the file (string or list of strings or JSON)
	Metadata       json.RawMessage
	ExecutionCount *int // execute_result
	EName          string
	EValue         string
	Traceback      []string
	Extra          map[string]json.RawMessage
}

// Parse reads an nbformat 4.x notebook. Cells without ids (nbformat < 4.5)
// get fresh ids and the minor version is raised to 5; duplicate or invalid ids
// are replaced. Anything that is not a valid notebook is an error and nothing
// is returned.
func Parse(data []byte) (*Notebook, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not a notebook: the file is not valid UTF-8")
	}
	// Raw values point into this copy, so a caller reusing its buffer
	// cannot change a loaded notebook.
	p, err := parseJSON(bytes.Clone(data))
	if err != nil {
		return nil, fmt.Errorf("not a notebook: %w", err)
	}
	if p.nodes[0].kind != kObject {
		return nil, fmt.Errorf("not a notebook: the document is a JSON %s, not an object", p.nodes[0].kind)
	}
	nb := &Notebook{}
	major, minor, cells, meta := int32(-1), int32(-1), int32(-1), int32(-1)
	_ = p.members(0, func(key string, v int32) error {
		switch key {
		case "nbformat":
			major = v
		case "nbformat_minor":
			minor = v
		case "cells":
			cells = v
		case "metadata":
			meta = v
		default:
			if nb.Extra == nil {
				nb.Extra = map[string]json.RawMessage{}
			}
			nb.Extra[key] = p.raw(v)
		}
		return nil
	})
	if major < 0 {
		return nil, errors.New("not a notebook: it has no nbformat field")
	}
	n, ok := p.intValue(major)
	if !ok {
		return nil, errors.New("not a notebook: nbformat is not an integer")
	}
	switch {
	case n == 3:
		return nil, errors.New("nbformat 3 notebooks are not supported; open and save it in Jupyter to upgrade")
	case n != 4:
		return nil, fmt.Errorf("nbformat %d notebooks are not supported; only nbformat 4 can be opened", n)
	}
	nb.NBFormat = 4
	if minor >= 0 {
		m, ok := p.intValue(minor)
		if !ok || m < 0 {
			return nil, errors.New("invalid notebook: nbformat_minor is not a non-negative integer")
		}
		nb.NBFormatMinor = m
	}
	nb.Metadata = json.RawMessage("{}")
	if meta >= 0 {
		if p.nodes[meta].kind != kObject {
			return nil, fmt.Errorf("invalid notebook: metadata is a %s, not an object", p.nodes[meta].kind)
		}
		nb.Metadata = p.raw(meta)
	}
	if cells < 0 {
		return nil, errors.New("invalid notebook: it has no cells field")
	}
	if p.nodes[cells].kind != kArray {
		return nil, fmt.Errorf("invalid notebook: cells is a %s, not an array", p.nodes[cells].kind)
	}
	nb.Cells = []*Cell{}
	err = p.elems(cells, func(i int, v int32) error {
		c, err := parseCell(p, v)
		if err != nil {
			return fmt.Errorf("invalid notebook: cell %d: %w", i, err)
		}
		nb.Cells = append(nb.Cells, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	nb.fixIDs()
	return nb, nil
}

// fixIDs gives every cell a valid id unique in the notebook, keeping the
// first of duplicates, and raises the format to 4.5, the first minor version
// with ids, as nbformat's upgrade does.
func (nb *Notebook) fixIDs() {
	seen := make(map[string]bool, len(nb.Cells))
	for _, c := range nb.Cells {
		if !ValidCellID(c.ID) || seen[c.ID] {
			c.ID = ""
			continue
		}
		seen[c.ID] = true
	}
	for _, c := range nb.Cells {
		if c.ID == "" {
			c.ID = freshID(seen)
			seen[c.ID] = true
		}
	}
	if nb.NBFormatMinor < 5 {
		nb.NBFormatMinor = 5
	}
}

// ValidCellID reports whether id is a valid nbformat 4.5 cell id: 1 to 64
// characters of letters, digits, '-' and '_'.
func ValidCellID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// freshID returns 8 random hex digits not in taken, the form of
// nbformat's random_cell_id (uuid4().hex[:8]).
func freshID(taken map[string]bool) string {
	var b [4]byte
	for {
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		if !taken[id] {
			return id
		}
	}
}

func parseCell(p *parser, n int32) (*Cell, error) {
	if p.nodes[n].kind != kObject {
		return nil, fmt.Errorf("a cell must be an object, not a %s", p.nodes[n].kind)
	}
	typ := int32(-1)
	_ = p.members(n, func(key string, v int32) error {
		if key == "cell_type" {
			typ = v
		}
		return nil
	})
	if typ < 0 {
		return nil, errors.New("cell_type is missing")
	}
	if p.nodes[typ].kind != kString {
		return nil, errors.New("cell_type is not a string")
	}
	c := &Cell{Type: p.text(typ)}
	switch c.Type {
	case Code:
		c.Outputs = []Output{}
	case Markdown, Raw:
	default:
		return nil, fmt.Errorf("cell_type %q is not code, markdown or raw", c.Type)
	}
	err := p.members(n, func(key string, v int32) error {
		nd := &p.nodes[v]
		switch {
		case key == "cell_type":
		case key == "id":
			// A non-string id is treated like an invalid one: replaced.
			if nd.kind == kString {
				c.ID = p.text(v)
			} else {
				c.ID = ""
			}
		case key == "source":
			s, err := p.multiline(v)
			if err != nil {
				return fmt.Errorf("source is %s", errNotStrings)
			}
			c.Source = s
		case key == "metadata":
			if nd.kind != kObject {
				return fmt.Errorf("metadata is a %s, not an object", nd.kind)
			}
			c.Metadata = p.raw(v)
		case key == "attachments":
			if nd.kind != kObject {
				return fmt.Errorf("attachments is a %s, not an object", nd.kind)
			}
			c.Attachments = p.raw(v)
		case key == "execution_count" && c.Type == Code:
			ec, err := executionCount(p, v)
			if err != nil {
				return err
			}
			c.ExecutionCount = ec
		case key == "outputs" && c.Type == Code:
			if nd.kind != kArray {
				return fmt.Errorf("outputs is a %s, not an array", nd.kind)
			}
			c.Outputs = c.Outputs[:0]
			return p.elems(v, func(i int, o int32) error {
				out, err := parseOutput(p, o)
				if err != nil {
					return fmt.Errorf("output %d: %w", i, err)
				}
				c.Outputs = append(c.Outputs, out)
				return nil
			})
		default:
			if c.Extra == nil {
				c.Extra = map[string]json.RawMessage{}
			}
			c.Extra[key] = p.raw(v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.Metadata == nil {
		c.Metadata = json.RawMessage("{}")
	}
	return c, nil
}

func executionCount(p *parser, v int32) (*int, error) {
	if p.nodes[v].kind == kNull {
		return nil, nil
	}
	n, ok := p.intValue(v)
	if !ok {
		return nil, errors.New("execution_count is not an integer or null")
	}
	return &n, nil
}

func parseOutput(p *parser, n int32) (Output, error) {
	var o Output
	if p.nodes[n].kind != kObject {
		return o, fmt.Errorf("an output must be an object, not a %s", p.nodes[n].kind)
	}
	typ := int32(-1)
	_ = p.members(n, func(key string, v int32) error {
		if key == "output_type" {
			typ = v
		}
		return nil
	})
	if typ < 0 {
		return o, errors.New("output_type is missing")
	}
	if p.nodes[typ].kind != kString {
		return o, errors.New("output_type is not a string")
	}
	o.OutputType = p.text(typ)
	switch o.OutputType {
	case Stream, DisplayData, ExecuteResult, Error:
	default:
		return o, fmt.Errorf("output_type %q is not stream, display_data, execute_result or error", o.OutputType)
	}
	rich := o.OutputType == DisplayData || o.OutputType == ExecuteResult
	str := func(v int32, key string) (string, error) {
		if p.nodes[v].kind != kString {
			return "", fmt.Errorf("%s is a %s, not a string", key, p.nodes[v].kind)
		}
		return p.text(v), nil
	}
	err := p.members(n, func(key string, v int32) error {
		nd := &p.nodes[v]
		var err error
		switch {
		case key == "output_type":
		case o.OutputType == Stream && key == "name":
			o.Name, err = str(v, key)
		case o.OutputType == Stream && key == "text":
			o.Text, err = p.multiline(v)
			if err != nil {
				err = fmt.Errorf("text is %w", err)
			}
		case rich && key == "data":
			if nd.kind != kObject {
				return fmt.Errorf("data is a %s, not an object", nd.kind)
			}
			o.Data = map[string]json.RawMessage{}
			_ = p.members(v, func(mime string, d int32) error {
				o.Data[mime] = p.raw(d)
				return nil
			})
		case rich && key == "metadata":
			if nd.kind != kObject {
				return fmt.Errorf("metadata is a %s, not an object", nd.kind)
			}
			o.Metadata = p.raw(v)
		case o.OutputType == ExecuteResult && key == "execution_count":
			o.ExecutionCount, err = executionCount(p, v)
		case o.OutputType == Error && key == "ename":
			o.EName, err = str(v, key)
		case o.OutputType == Error && key == "evalue":
			o.EValue, err = str(v, key)
		case o.OutputType == Error && key == "traceback":
			if nd.kind != kArray {
				return fmt.Errorf("traceback is a %s, not an array", nd.kind)
			}
			o.Traceback = []string{}
			err = p.elems(v, func(_ int, t int32) error {
				s, err := str(t, "a traceback line")
				o.Traceback = append(o.Traceback, s)
				return err
			})
		default:
			if o.Extra == nil {
				o.Extra = map[string]json.RawMessage{}
			}
			o.Extra[key] = p.raw(v)
		}
		return err
	})
	return o, err
}

// Marshal writes the notebook as nbformat JSON the way Jupyter does (sorted
// keys, one-space indent, multi-line strings split into lists, trailing
// newline).
func (nb *Notebook) Marshal() ([]byte, error) {
	seen := make(map[string]bool, len(nb.Cells))
	for i, c := range nb.Cells {
		if !ValidCellID(c.ID) {
			return nil, fmt.Errorf("cell %d has an invalid id %q", i, c.ID)
		}
		if seen[c.ID] {
			return nil, fmt.Errorf("cell %d repeats the id %q", i, c.ID)
		}
		seen[c.ID] = true
	}
	w := &writer{b: make([]byte, 0, nb.sizeHint())}
	fields := []field{
		{"cells", func(depth int) error {
			if len(nb.Cells) == 0 {
				w.b = append(w.b, '[', ']')
				return nil
			}
			w.b = append(w.b, '[')
			for i, c := range nb.Cells {
				if i > 0 {
					w.b = append(w.b, ',')
				}
				w.newline(depth + 1)
				if err := w.cell(c, depth+1); err != nil {
					return fmt.Errorf("cell %d: %w", i, err)
				}
			}
			w.newline(depth)
			w.b = append(w.b, ']')
			return nil
		}},
		// nbformat strips these transient keys on every read and write.
		{"metadata", func(depth int) error {
			return w.rawObject(nb.Metadata, depth, "notebook metadata", "orig_nbformat", "orig_nbformat_minor", "signature")
		}},
		{"nbformat", w.intField(nb.NBFormat)},
		{"nbformat_minor", w.intField(nb.NBFormatMinor)},
	}
	fields = w.extra(fields, nb.Extra)
	if err := w.object(fields, 0); err != nil {
		return nil, err
	}
	w.b = append(w.b, '\n')
	return w.b, nil
}

// sizeHint guesses the size of the written notebook so that the output
// buffer is allocated once rather than regrown and copied many times.
func (nb *Notebook) sizeHint() int {
	n := 1024 + len(nb.Metadata)
	for _, c := range nb.Cells {
		n += 200 + len(c.Source)*9/8 + len(c.Metadata) + len(c.Attachments)
		for i := range c.Outputs {
			o := &c.Outputs[i]
			n += 150 + len(o.Text)*9/8 + len(o.Metadata) + len(o.EValue)
			for _, v := range o.Data {
				n += 40 + len(v)*9/8
			}
			for _, t := range o.Traceback {
				n += 10 + len(t)
			}
		}
	}
	return n
}

func (w *writer) intField(n int) func(int) error {
	return func(int) error {
		w.b = strconv.AppendInt(w.b, int64(n), 10)
		return nil
	}
}

func (w *writer) intPtrField(n *int) func(int) error {
	return func(int) error {
		if n == nil {
			w.b = append(w.b, "null"...)
		} else {
			w.b = strconv.AppendInt(w.b, int64(*n), 10)
		}
		return nil
	}
}

func (w *writer) strField(s string) func(int) error {
	return func(int) error {
		w.str(s)
		return nil
	}
}

func (w *writer) linesField(s string) func(int) error {
	return func(depth int) error {
		w.lines(s, depth)
		return nil
	}
}

// extra adds the unknown keys of extra that are not already written.
func (w *writer) extra(fields []field, extra map[string]json.RawMessage) []field {
	for k, v := range extra {
		if slices.ContainsFunc(fields, func(f field) bool { return f.key == k }) {
			continue
		}
		fields = append(fields, field{k, func(depth int) error {
			if err := w.raw(v, depth); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			return nil
		}})
	}
	return fields
}

func (w *writer) cell(c *Cell, depth int) error {
	fields := []field{
		{"cell_type", w.strField(c.Type)},
		{"id", w.strField(c.ID)},
		// nbformat strips "trusted" from cell metadata when writing.
		{"metadata", func(depth int) error { return w.rawObject(c.Metadata, depth, "metadata", "trusted") }},
		{"source", w.linesField(c.Source)},
	}
	switch c.Type {
	case Code:
		fields = append(fields,
			field{"execution_count", w.intPtrField(c.ExecutionCount)},
			field{"outputs", func(depth int) error {
				if len(c.Outputs) == 0 {
					w.b = append(w.b, '[', ']')
					return nil
				}
				w.b = append(w.b, '[')
				for i := range c.Outputs {
					if i > 0 {
						w.b = append(w.b, ',')
					}
					w.newline(depth + 1)
					if err := w.output(&c.Outputs[i], depth+1); err != nil {
						return fmt.Errorf("output %d: %w", i, err)
					}
				}
				w.newline(depth)
				w.b = append(w.b, ']')
				return nil
			}})
	case Markdown, Raw:
	default:
		return fmt.Errorf("cell_type %q is not code, markdown or raw", c.Type)
	}
	if c.Attachments != nil {
		fields = append(fields, field{"attachments", func(depth int) error { return w.attachments(c.Attachments, depth) }})
	}
	fields = w.extra(fields, c.Extra)
	return w.object(fields, depth)
}

func (w *writer) output(o *Output, depth int) error {
	fields := []field{{"output_type", w.strField(o.OutputType)}}
	switch o.OutputType {
	case Stream:
		fields = append(fields,
			field{"name", w.strField(o.Name)},
			field{"text", w.linesField(o.Text)})
	case DisplayData, ExecuteResult:
		fields = append(fields,
			field{"data", func(depth int) error { return w.bundle(o.Data, depth) }},
			field{"metadata", func(depth int) error { return w.rawObject(o.Metadata, depth, "output metadata") }})
		if o.OutputType == ExecuteResult {
			fields = append(fields, field{"execution_count", w.intPtrField(o.ExecutionCount)})
		}
	case Error:
		tb := o.Traceback
		fields = append(fields,
			field{"ename", w.strField(o.EName)},
			field{"evalue", w.strField(o.EValue)},
			field{"traceback", func(depth int) error {
				if len(tb) == 0 {
					w.b = append(w.b, '[', ']')
					return nil
				}
				w.b = append(w.b, '[')
				for i, line := range tb {
					if i > 0 {
						w.b = append(w.b, ',')
					}
					w.newline(depth + 1)
					w.str(line)
				}
				w.newline(depth)
				w.b = append(w.b, ']')
				return nil
			}})
		// nbformat rejoins a list "text" on any output that is not rich.
		if t, ok := o.Extra["text"]; ok {
			fields = append(fields, field{"text", func(depth int) error {
				p, err := parseJSON(t)
				if err != nil {
					return fmt.Errorf("text: %w", err)
				}
				if s, err := p.multiline(0); err == nil && p.nodes[0].kind == kArray {
					w.str(s)
					return nil
				}
				return w.node(p, 0, depth)
			}})
		}
	default:
		return fmt.Errorf("output_type %q is not stream, display_data, execute_result or error", o.OutputType)
	}
	fields = w.extra(fields, o.Extra)
	return w.object(fields, depth)
}

// isJSONMime is nbformat's _is_json_mime: such values are never joined.
func isJSONMime(mime string) bool {
	return mime == "application/json" ||
		strings.HasPrefix(mime, "application/") && strings.HasSuffix(mime, "+json")
}

// isSplitMime says which string values nbformat writes as lists of lines.
func isSplitMime(mime string) bool {
	return strings.HasPrefix(mime, "text/") || mime == "application/javascript" || mime == "image/svg+xml"
}

// bundle writes a mime bundle as nbformat does: lists of strings are joined
// (what its reader does), then text types are split into lines.
func (w *writer) bundle(data map[string]json.RawMessage, depth int) error {
	fields := make([]field, 0, len(data))
	for mime, v := range data {
		fields = append(fields, field{mime, func(depth int) error {
			p, err := parseJSON(v)
			if err != nil {
				return fmt.Errorf("data %s: %w", mime, err)
			}
			return w.mimeValue(mime, p, 0, depth)
		}})
	}
	return w.object(fields, depth)
}

func (w *writer) mimeValue(mime string, p *parser, n int32, depth int) error {
	switch p.nodes[n].kind {
	case kArray:
		if !isJSONMime(mime) {
			if s, err := p.multiline(n); err == nil {
				if isSplitMime(mime) {
					w.lines(s, depth)
				} else {
					w.str(s)
				}
				return nil
			}
		}
	case kString:
		if isSplitMime(mime) {
			w.lines(p.text(n), depth)
			return nil
		}
	}
	return w.node(p, n, depth)
}

// attachments writes a cell's attachments: names mapped to mime bundles.
func (w *writer) attachments(raw json.RawMessage, depth int) error {
	p, err := parseJSON(raw)
	if err != nil {
		return fmt.Errorf("attachments: %w", err)
	}
	if p.nodes[0].kind != kObject {
		return w.node(p, 0, depth)
	}
	var fields []field
	seen := map[string]int{}
	_ = p.members(0, func(name string, v int32) error {
		f := field{name, func(depth int) error {
			if p.nodes[v].kind != kObject {
				return w.node(p, v, depth)
			}
			var inner []field
			at := map[string]int{}
			_ = p.members(v, func(mime string, d int32) error {
				f := field{mime, func(depth int) error { return w.mimeValue(mime, p, d, depth) }}
				if i, ok := at[mime]; ok {
					inner[i] = f
				} else {
					at[mime] = len(inner)
					inner = append(inner, f)
				}
				return nil
			})
			return w.object(inner, depth)
		}}
		if i, ok := seen[name]; ok {
			fields[i] = f
		} else {
			seen[name] = len(fields)
			fields = append(fields, f)
		}
		return nil
	})
	return w.object(fields, depth)
}

// pythonKernelMetadata is what Jupyter writes for a new Python notebook.
const pythonKernelMetadata = `{"kernelspec":{"display_name":"Python 3 (ipykernel)","language":"python","name":"python3"},"language_info":{"name":"python"}}`

// New returns an empty nbformat 4.5 notebook with Python kernel metadata.
func New() *Notebook {
	return &Notebook{
		NBFormat:      4,
		NBFormatMinor: 5,
		Metadata:      json.RawMessage(pythonKernelMetadata),
		Cells:         []*Cell{},
	}
}

// NewCell returns a cell of the given type with a fresh id unique in nb. It
// does not add the cell to nb.
func (nb *Notebook) NewCell(cellType, source string) *Cell {
	taken := make(map[string]bool, len(nb.Cells))
	for _, c := range nb.Cells {
		taken[c.ID] = true
	}
	c := &Cell{
		ID:       freshID(taken),
		Type:     cellType,
		Source:   source,
		Metadata: json.RawMessage("{}"),
	}
	if cellType == Code {
		c.Outputs = []Output{}
	}
	return c
}

// IndexOf returns the index of the cell with the given id, or -1.
func (nb *Notebook) IndexOf(id string) int {
	for i, c := range nb.Cells {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// Clone returns a deep copy.
func (nb *Notebook) Clone() *Notebook {
	out := &Notebook{
		NBFormat:      nb.NBFormat,
		NBFormatMinor: nb.NBFormatMinor,
		Metadata:      cloneRaw(nb.Metadata),
		Extra:         cloneExtra(nb.Extra),
	}
	if nb.Cells != nil {
		out.Cells = make([]*Cell, len(nb.Cells))
		for i, c := range nb.Cells {
			out.Cells[i] = c.Clone()
		}
	}
	return out
}

// Clone returns a deep copy of the cell.
func (c *Cell) Clone() *Cell {
	out := *c
	out.Metadata = cloneRaw(c.Metadata)
	out.Attachments = cloneRaw(c.Attachments)
	out.Extra = cloneExtra(c.Extra)
	if c.ExecutionCount != nil {
		n := *c.ExecutionCount
		out.ExecutionCount = &n
	}
	if c.Outputs != nil {
		out.Outputs = make([]Output, len(c.Outputs))
		for i := range c.Outputs {
			out.Outputs[i] = c.Outputs[i].Clone()
		}
	}
	return &out
}

// Clone returns a deep copy of the output.
func (o *Output) Clone() Output {
	out := *o
	out.Metadata = cloneRaw(o.Metadata)
	out.Extra = cloneExtra(o.Extra)
	out.Traceback = slices.Clone(o.Traceback)
	if o.ExecutionCount != nil {
		n := *o.ExecutionCount
		out.ExecutionCount = &n
	}
	out.Data = cloneExtra(o.Data)
	return out
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return bytes.Clone(r)
}

func cloneExtra(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = cloneRaw(v)
	}
	return out
}

// DataText returns the text of a mime bundle value (joined when it is a list
// of strings, the JSON text otherwise).
func DataText(v json.RawMessage) string {
	p, err := parseJSON(v)
	if err != nil {
		return string(v)
	}
	switch p.nodes[0].kind {
	case kString:
		return p.text(0)
	case kArray:
		if s, err := p.multiline(0); err == nil {
			return s
		}
	}
	return string(bytes.TrimSpace(v))
}

// DataString returns s as a mime bundle value (a JSON string).
func DataString(s string) json.RawMessage {
	w := &writer{b: make([]byte, 0, len(s)+2)}
	w.str(s)
	return w.b
}
