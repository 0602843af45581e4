package notebook

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The notebook is parsed with a small hand-written JSON parser rather than
// encoding/json because a notebook is nested four levels deep (notebook,
// cell, output, mime bundle) and unmarshalling level by level into
// json.RawMessage would rescan the bytes once per level; multi-megabyte
// notebooks full of images made that the slowest part of every load. The
// parser makes one pass and records spans into the input, so raw values
// (metadata, mime data) are kept exactly as given without copying.

type kind uint8

const (
	kObject kind = iota + 1
	kArray
	kString
	kNumber
	kTrue
	kFalse
	kNull
)

func (k kind) String() string {
	switch k {
	case kObject:
		return "object"
	case kArray:
		return "array"
	case kString:
		return "string"
	case kNumber:
		return "number"
	case kTrue, kFalse:
		return "boolean"
	case kNull:
		return "null"
	}
	return "nothing"
}

// node is one JSON value: its kind and span in the input. Children of arrays
// and objects are linked through first/next; object children alternate key
// and value.
type node struct {
	kind       kind
	esc        bool // a string that contains escapes
	float      bool // a number with a fraction or exponent
	start, end int
	first      int32
	next       int32
}

// maxDepth bounds nesting like Python's recursion limit does for json.loads,
// so hostile input cannot exhaust the stack.
const maxDepth = 1000

type parser struct {
	b     []byte
	i     int
	nodes []node
	depth int
}

// parseJSON parses one JSON document and returns the parser holding its
// nodes; node 0 is the root.
func parseJSON(b []byte) (*parser, error) {
	p := &parser{b: b, nodes: make([]node, 0, 16+len(b)/32)}
	if _, err := p.value(); err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, p.errorf("unexpected %q after the end of the JSON value", p.b[p.i])
	}
	return p, nil
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) add(n node) int32 {
	n.first, n.next = -1, -1
	p.nodes = append(p.nodes, n)
	return int32(len(p.nodes) - 1)
}

func (p *parser) value() (int32, error) {
	p.ws()
	if p.i >= len(p.b) {
		return -1, p.errorf("unexpected end of input")
	}
	switch c := p.b[p.i]; {
	case c == 'N' || c == 'I' || c == '-' && p.i+1 < len(p.b) && p.b[p.i+1] == 'I':
		return p.nonFinite()
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", kTrue)
	case c == 'f':
		return p.literal("false", kFalse)
	case c == 'n':
		return p.literal("null", kNull)
	default:
		return -1, p.errorf("unexpected %q", c)
	}
}

func (p *parser) literal(word string, k kind) (int32, error) {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return -1, p.errorf("invalid literal")
	}
	n := p.add(node{kind: k, start: p.i, end: p.i + len(word)})
	p.i += len(word)
	return n, nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errorf("nested too deeply")
	}
	return nil
}

func (p *parser) object() (int32, error) {
	if err := p.enter(); err != nil {
		return -1, err
	}
	idx := p.add(node{kind: kObject, start: p.i})
	p.i++ // '{'
	last := int32(-1)
	link := func(c int32) {
		if last < 0 {
			p.nodes[idx].first = c
		} else {
			p.nodes[last].next = c
		}
		last = c
	}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		p.nodes[idx].end = p.i
		p.depth--
		return idx, nil
	}
	for {
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return -1, p.errorf("expected a string key")
		}
		k, err := p.str()
		if err != nil {
			return -1, err
		}
		link(k)
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return -1, p.errorf("expected ':' after an object key")
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return -1, err
		}
		link(v)
		p.ws()
		if p.i >= len(p.b) {
			return -1, p.errorf("unexpected end of input in an object")
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] == '}' {
			p.i++
			p.nodes[idx].end = p.i
			p.depth--
			return idx, nil
		}
		return -1, p.errorf("expected ',' or '}' in an object")
	}
}

func (p *parser) array() (int32, error) {
	if err := p.enter(); err != nil {
		return -1, err
	}
	idx := p.add(node{kind: kArray, start: p.i})
	p.i++ // '['
	last := int32(-1)
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		p.nodes[idx].end = p.i
		p.depth--
		return idx, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return -1, err
		}
		if last < 0 {
			p.nodes[idx].first = v
		} else {
			p.nodes[last].next = v
		}
		last = v
		p.ws()
		if p.i >= len(p.b) {
			return -1, p.errorf("unexpected end of input in an array")
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] == ']' {
			p.i++
			p.nodes[idx].end = p.i
			p.depth--
			return idx, nil
		}
		return -1, p.errorf("expected ',' or ']' in an array")
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (p *parser) str() (int32, error) {
	start := p.i
	i := p.i + 1
	esc := false
	b := p.b
	for {
		if i >= len(b) {
			p.i = i
			return -1, p.errorf("unterminated string")
		}
		c := b[i]
		switch {
		case c == '"':
			i++
			p.i = i
			return p.add(node{kind: kString, esc: esc, start: start, end: i}), nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				p.i = i
				return -1, p.errorf("unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					p.i = i
					return -1, p.errorf("invalid \\u escape")
				}
				i += 6
			default:
				p.i = i
				return -1, p.errorf("invalid escape \\%c", b[i+1])
			}
		case c < 0x20:
			p.i = i
			return -1, p.errorf("control character %#x in a string", c)
		default:
			i++
		}
	}
}

func (p *parser) number() (int32, error) {
	start := p.i
	b := p.b
	i := p.i
	digits := func() bool {
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > s
	}
	if b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if !digits() {
		p.i = i
		return -1, p.errorf("invalid number")
	}
	float := false
	if i < len(b) && b[i] == '.' {
		i++
		float = true
		if !digits() {
			p.i = i
			return -1, p.errorf("invalid number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		float = true
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			p.i = i
			return -1, p.errorf("invalid number")
		}
	}
	// A float out of range (1e400) is read as Python reads it, as an
	// infinity: the writer writes it "Infinity", as Python does.
	p.i = i
	return p.add(node{kind: kNumber, float: float, start: start, end: i}), nil
}

// raw returns the bytes of node n.
func (p *parser) raw(n int32) []byte {
	nd := &p.nodes[n]
	return p.b[nd.start:nd.end:nd.end]
}

// text decodes string node n.
func (p *parser) text(n int32) string {
	nd := &p.nodes[n]
	body := p.b[nd.start+1 : nd.end-1]
	if !nd.esc {
		return string(body)
	}
	return unescape(body)
}

// unescape decodes the body of a JSON string known to be well formed.
func unescape(s []byte) string {
	return string(appendUnescaped(make([]byte, 0, len(s)), s))
}

// appendUnescaped appends the decoded body of a well-formed JSON string.
// Unpaired surrogates become U+FFFD as encoding/json does.
func appendUnescaped(out, s []byte) []byte {
	for i := 0; i < len(s); {
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			return append(out, s[i:]...)
		}
		out = append(out, s[i:i+j]...)
		i += j
		switch s[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := rune(hex4(s[i+2 : i+6]))
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 := rune(hex4(s[i+2 : i+6]))
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						out = utf8.AppendRune(out, d)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, s[i+1])
		}
		i += 2
	}
	return out
}

// canonicalEscapes reports whether every escape in the string token is the
// one Python's json.dumps would write for that character, so the token can
// be copied instead of decoded and encoded again.
func canonicalEscapes(tok []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(tok[i:], '\\')
		if j < 0 {
			return true
		}
		i += j
		switch tok[i+1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			h := tok[i+2 : i+6]
			if h[0] != '0' || h[1] != '0' || h[2] > '1' || !(h[3] >= '0' && h[3] <= '9' || h[3] >= 'a' && h[3] <= 'f') {
				return false
			}
			switch hex4(h) {
			case '\b', '\f', '\n', '\r', '\t':
				return false
			}
			i += 6
		default:
			return false
		}
	}
}

func hex4(b []byte) int {
	v := 0
	for _, c := range b[:4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= int(c - '0')
		case c >= 'a' && c <= 'f':
			v |= int(c-'a') + 10
		default:
			v |= int(c-'A') + 10
		}
	}
	return v
}

// members calls fn for each key and value node of object n, in order.
func (p *parser) members(n int32, fn func(key string, v int32) error) error {
	for k := p.nodes[n].first; k >= 0; {
		v := p.nodes[k].next
		if err := fn(p.text(k), v); err != nil {
			return err
		}
		k = p.nodes[v].next
	}
	return nil
}

// elems calls fn for each element of array n.
func (p *parser) elems(n int32, fn func(i int, v int32) error) error {
	i := 0
	for c := p.nodes[n].first; c >= 0; c = p.nodes[c].next {
		if err := fn(i, c); err != nil {
			return err
		}
		i++
	}
	return nil
}

var errNotStrings = errors.New("not a string or list of strings")

// multiline decodes a string, or a list of strings joined, as nbformat's
// rejoin_lines does.
func (p *parser) multiline(n int32) (string, error) {
	switch p.nodes[n].kind {
	case kString:
		return p.text(n), nil
	case kArray:
		size := 0
		for c := p.nodes[n].first; c >= 0; c = p.nodes[c].next {
			nd := &p.nodes[c]
			if nd.kind != kString {
				return "", errNotStrings
			}
			size += nd.end - nd.start - 2
		}
		buf := make([]byte, 0, size)
		for c := p.nodes[n].first; c >= 0; c = p.nodes[c].next {
			nd := &p.nodes[c]
			body := p.b[nd.start+1 : nd.end-1]
			if nd.esc {
				buf = appendUnescaped(buf, body)
			} else {
				buf = append(buf, body...)
			}
		}
		return string(buf), nil
	}
	return "", errNotStrings
}

// intValue decodes an integer number node.
func (p *parser) intValue(n int32) (int, bool) {
	nd := &p.nodes[n]
	if nd.kind != kNumber || nd.float {
		return 0, false
	}
	v, err := strconv.Atoi(string(p.raw(n)))
	return v, err == nil
}

// nonFinite reads NaN, Infinity or -Infinity: not JSON, but what Python's
// json writes for those floats (allow_nan, its default, which nbformat
// keeps) and reads back, so Jupyter saves and opens notebooks holding them.
func (p *parser) nonFinite() (int32, error) {
	for _, word := range []string{"NaN", "Infinity", "-Infinity"} {
		if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
			n := p.add(node{kind: kNumber, float: true, start: p.i, end: p.i + len(word)})
			p.i += len(word)
			return n, nil
		}
	}
	return -1, p.errorf("invalid literal")
}
