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
