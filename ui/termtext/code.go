package termtext

import (
	"fmt"
	"unicode/utf8"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/invisible"
)

// The sanitizer's second mode, for text a person approves or reads as
// source rather than as rendered output: code, cell sources, diffs, tool
// arguments, names. Nothing is dropped and nothing styles the screen: every
// control, escape, bidirectional, zero-width or format character is spelled
// as a marker (⟨ESC⟩, ⟨U+202E⟩), so an SGR in a source shows as the text
// ⟨ESC⟩[30;40m instead of painting it, and an OSC opened inside a string
// literal hides nothing after it. A lone carriage return, a line break to
// Python, breaks the line here too (after a ⟨CR⟩ marker). What is left is
// printable text, tabs and newlines: safe to draw and to cut anywhere.

// Code returns s fit to draw as source text (see above).
func Code(s string) string { return invisible.Show(s) }

// Name returns s fit to draw on one line: Code with newlines and carriage
// returns shown as ⟨LF⟩ and ⟨CR⟩ too.
func Name(s string) string { return invisible.ShowLine(s) }

// JSONCode returns the JSON text raw fit to draw as it is, every string
// kept whole: a hidden character inside a string is written as its JSON
// escape (\u001b, \u202e), which draws as plain text and decodes to the
// same value, and escapes already there are left alone. Layout and values
// are unchanged. raw itself is returned, without allocating, when nothing
// in it needs a change. Text that is not JSON is shown as Code shows it.
func JSONCode(raw []byte) []byte {
	var out []byte // nil until the first change
	kept := 0
	inString := false
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case inString && c == '\\':
			if i+1 >= len(raw) || raw[i+1] < 0x20 || raw[i+1] >= 0x7f {
				return []byte(Code(string(raw))) // not JSON
			}
			i += 2 // an escape stays as written
			continue
		case c == '"':
			inString = !inString
			i++
			continue
		case c >= 0x20 && c < 0x7f:
			i++
			continue
		case !inString && (c == '\t' || c == '\n' || c == '\r'):
			// Whitespace between tokens: only \r draws as a movement.
			if c == '\r' {
				if out == nil {
					out = make([]byte, 0, len(raw)+16)
				}
				out = append(out, raw[kept:i]...)
				kept = i + 1
			}
			i++
			continue
		case !inString:
			return []byte(Code(string(raw))) // a control or non-ASCII outside a string: not JSON
		}
		r, n := utf8.DecodeRune(raw[i:])
		if c >= 0x80 && !(r == utf8.RuneError && n == 1) && invisible.ClassOf(r) == invisible.Visible {
			i += n
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(raw)+16)
		}
		out = append(out, raw[kept:i]...)
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case r > 0xffff:
			r1, r2 := utf16Pair(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		kept = i + n
		i += n
	}
	if inString {
		return []byte(Code(string(raw))) // a string left open: not JSON
	}
	if out == nil {
		return raw
	}
	return append(out, raw[kept:]...)
}

// utf16Pair is the surrogate pair of a rune past the basic plane.
func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}
