package notebook

// The writer: a notebook back to nbformat JSON exactly as Jupyter writes it.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

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
