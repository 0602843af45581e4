package notebook

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// writer produces JSON byte for byte the way Python's json.dumps does with
// indent=1, sort_keys=True, separators=(",", ": ") and ensure_ascii=False,
// which is what nbformat.writes uses. Matching it exactly means a notebook
// we save is the file Jupyter would have saved, so version control shows
// only real changes.
type writer struct {
	b []byte
}

func (w *writer) newline(depth int) {
	w.b = append(w.b, '\n')
	for range depth {
		w.b = append(w.b, ' ')
	}
}

const hexDigits = "0123456789abcdef"

// str writes s as a JSON string. Python escapes only '"', '\\' and control
// characters below 0x20 (with the short forms for \b \f \n \r \t and
// lowercase \u00XX for the rest); everything else, including non-ASCII,
// '<', '>', '&', DEL and U+2028, is written as is.
func (w *writer) str(s string) {
	w.b = append(w.b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.b = append(w.b, s[start:i]...)
		switch c {
		case '"':
			w.b = append(w.b, '\\', '"')
		case '\\':
			w.b = append(w.b, '\\', '\\')
		case '\n':
			w.b = append(w.b, '\\', 'n')
		case '\r':
			w.b = append(w.b, '\\', 'r')
		case '\t':
			w.b = append(w.b, '\\', 't')
		case '\b':
			w.b = append(w.b, '\\', 'b')
		case '\f':
			w.b = append(w.b, '\\', 'f')
		default:
			w.b = append(w.b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	w.b = append(w.b, s[start:]...)
	w.b = append(w.b, '"')
}

// lines writes s as Python's s.splitlines(True) would be written: a list of
// lines each keeping its line break ("[]" for the empty string).
func (w *writer) lines(s string, depth int) {
	if s == "" {
		w.b = append(w.b, '[', ']')
		return
	}
	w.b = append(w.b, '[')
	first := true
	emit := func(line string) {
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
		w.newline(depth + 1)
		w.str(line)
	}
	start := 0
	for i := 0; i < len(s); {
		end := lineBreakEnd(s, i)
		if end < 0 {
			i++
			continue
		}
		emit(s[start:end])
		start, i = end, end
	}
	if start < len(s) {
		emit(s[start:])
	}
	w.newline(depth)
	w.b = append(w.b, ']')
}

// lineBreakEnd reports whether a line break Python's str.splitlines
// recognises starts at s[i], returning the index just past it, or -1.
func lineBreakEnd(s string, i int) int {
	switch c := s[i]; c {
	case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e:
		return i + 1
	case '\r':
		if i+1 < len(s) && s[i+1] == '\n' {
			return i + 2
		}
		return i + 1
	case 0xc2: // U+0085 NEXT LINE
		if i+1 < len(s) && s[i+1] == 0x85 {
			return i + 2
		}
	case 0xe2: // U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR
		if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
			return i + 3
		}
	}
	return -1
}

// field is one key of an object being written, with how to write its value
// at the given depth.
type field struct {
	key   string
	write func(depth int) error
}

// object writes fields sorted by key.
func (w *writer) object(fields []field, depth int) error {
	if len(fields) == 0 {
		w.b = append(w.b, '{', '}')
		return nil
	}
	slices.SortStableFunc(fields, func(a, b field) int { return strings.Compare(a.key, b.key) })
	w.b = append(w.b, '{')
	for i, f := range fields {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.newline(depth + 1)
		w.str(f.key)
		w.b = append(w.b, ':', ' ')
		if err := f.write(depth + 1); err != nil {
			return err
		}
	}
	w.newline(depth)
	w.b = append(w.b, '}')
	return nil
}

// number writes a number token as Python would after reading it: integers
// as they are (Python ints are unbounded), floats in repr form.
func (w *writer) number(tok []byte, float bool) {
	if !float {
		if string(tok) == "-0" {
			w.b = append(w.b, '0')
			return
		}
		w.b = append(w.b, tok...)
		return
	}
	// Python writes the floats JSON has no numbers for as NaN, Infinity
	// and -Infinity (and reads an out-of-range 1e400 as infinity).
	f, err := strconv.ParseFloat(string(tok), 64)
	switch {
	case math.IsNaN(f):
		w.b = append(w.b, "NaN"...)
	case math.IsInf(f, 1):
		w.b = append(w.b, "Infinity"...)
	case math.IsInf(f, -1):
		w.b = append(w.b, "-Infinity"...)
	case err != nil:
		w.b = append(w.b, tok...)
	default:
		w.b = appendPyFloat(w.b, f)
	}
}

// appendPyFloat formats f like Python's repr(float): the shortest digits
// that round-trip, in exponent form when the decimal exponent is below -4 or
// at least 16, otherwise positional with at least one fractional digit.
func appendPyFloat(b []byte, f float64) []byte {
	e := strconv.FormatFloat(f, 'e', -1, 64)
	_, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if x < -4 || x >= 16 {
		return append(b, e...)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	b = append(b, s...)
	if !strings.Contains(s, ".") {
		b = append(b, '.', '0')
	}
	return b
}

// node writes parsed node n in Python's layout.
func (w *writer) node(p *parser, n int32, depth int) error {
	nd := &p.nodes[n]
	switch nd.kind {
	case kString:
		if !nd.esc || canonicalEscapes(p.raw(n)) {
			// The parser refuses raw control characters, so a token whose
			// escapes are all the ones Python writes is what Python would
			// write.
			w.b = append(w.b, p.raw(n)...)
		} else {
			w.str(p.text(n))
		}
	case kNumber:
		w.number(p.raw(n), nd.float)
	case kTrue, kFalse, kNull:
		w.b = append(w.b, p.raw(n)...)
	case kArray:
		if nd.first < 0 {
			w.b = append(w.b, '[', ']')
			return nil
		}
		w.b = append(w.b, '[')
		for c := nd.first; c >= 0; c = p.nodes[c].next {
			if c != nd.first {
				w.b = append(w.b, ',')
			}
			w.newline(depth + 1)
			if err := w.node(p, c, depth+1); err != nil {
				return err
			}
		}
		w.newline(depth)
		w.b = append(w.b, ']')
	case kObject:
		return w.object(p.fields(n, w, nil), depth)
	default:
		return fmt.Errorf("unknown JSON node kind %d", nd.kind)
	}
	return nil
}

// fields returns the members of object n as fields written generically,
// leaving out keys in skip. A repeated key keeps its last value, as Python's
// json.loads does.
func (p *parser) fields(n int32, w *writer, skip []string) []field {
	var fs []field
	seen := map[string]int{}
	_ = p.members(n, func(key string, v int32) error {
		if slices.Contains(skip, key) {
			return nil
		}
		f := field{key: key, write: func(depth int) error { return w.node(p, v, depth) }}
		if i, ok := seen[key]; ok {
			fs[i] = f
			return nil
		}
		seen[key] = len(fs)
		fs = append(fs, f)
		return nil
	})
	return fs
}

// raw writes a raw JSON value in Python's layout.
func (w *writer) raw(b []byte, depth int) error {
	p, err := parseJSON(b)
	if err != nil {
		return err
	}
	return w.node(p, 0, depth)
}

// rawObject writes a raw JSON object without the keys in skip; nil or empty
// input is written as {}.
func (w *writer) rawObject(b []byte, depth int, what string, skip ...string) error {
	if len(b) == 0 {
		w.b = append(w.b, '{', '}')
		return nil
	}
	p, err := parseJSON(b)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if p.nodes[0].kind != kObject {
		return fmt.Errorf("%s must be a JSON object, not %s", what, p.nodes[0].kind)
	}
	return w.object(p.fields(0, w, skip), depth)
}
