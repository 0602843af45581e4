package termtext

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// JSON returns the JSON text raw with every string in it (keys and values)
// sanitized as String would once decoded: "\u001b]52;c;…\u0007" is as
// dangerous as the raw bytes once a pane decodes and draws the value. The
// layout of raw (order of keys, spacing) is kept, and raw itself is returned,
// without allocating, when no string needs a change. Text that is not JSON is
// sanitized as text.
func JSON(raw []byte) []byte {
	var out []byte // nil until the first change
	kept := 0
	i := 0
	for i < len(raw) {
		c := raw[i]
		if c != '"' {
			switch {
			case c == '\r': // whitespace to JSON, but drawn if the text is shown raw
				if out == nil {
					out = make([]byte, 0, len(raw))
				}
				out = append(out, raw[kept:i]...)
				kept = i + 1
			case c < 0x20 && c != '\t' && c != '\n' || c >= del:
				return jsonAsText(raw) // a control or non-ASCII outside a string: not JSON
			}
			i++
			continue
		}
		end, suspect := stringEnd(raw, i)
		if end < 0 {
			return jsonAsText(raw)
		}
		if suspect {
			var v string
			if json.Unmarshal(raw[i:end], &v) != nil {
				return jsonAsText(raw)
			}
			if clean := String(v); clean != v || !utf8.Valid(raw[i:end]) {
				if out == nil {
					out = make([]byte, 0, len(raw))
				}
				out = append(out, raw[kept:i]...)
				out = appendQuoted(out, clean)
				kept = end
			}
		}
		i = end
	}
	if out == nil {
		return raw
	}
	return append(out, raw[kept:]...)
}

// stringEnd finds the end (one past the closing quote) of the JSON string
// starting at raw[i], and whether it holds anything that may decode to what
// String changes: an escape other than \" \\ \/ \t \n and \u of a printable
// character, a control byte, or non-ASCII that is not clean UTF-8. It
// returns -1 for a string left open.
func stringEnd(raw []byte, i int) (end int, suspect bool) {
	for k := i + 1; k < len(raw); {
		c := raw[k]
		switch {
		case c == '"':
			return k + 1, suspect
		case c == '\\':
			if k+1 >= len(raw) {
				return -1, false
			}
			switch raw[k+1] {
			case '"', '\\', '/', 't', 'n':
				k += 2
			case 'u':
				if k+6 > len(raw) {
					return -1, false
				}
				if r, ok := hex4(raw[k+2 : k+6]); !ok || r < 0x20 || r >= del && r <= 0x9f || r >= 0xd800 && r <= 0xdfff {
					suspect = true
				}
				k += 6
			default: // \r \b \f, or not JSON
				suspect = true
				k += 2
			}
		case c < 0x20 || c == del:
			suspect = true
			k++
		case c < 0x80:
			k++
		default:
			r, n := utf8.DecodeRune(raw[k:])
			if r == utf8.RuneError && n == 1 || r <= 0x9f {
				suspect = true
			}
			k += n
		}
	}
	return -1, false
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// appendQuoted appends s as a JSON string, without the HTML escaping
// json.Marshal does (the text is drawn, not put in a page).
func appendQuoted(out []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(out, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// jsonAsText sanitizes raw that is not JSON as plain text.
func jsonAsText(raw []byte) []byte {
	s := string(raw)
	if c := String(s); c != s {
		return []byte(c)
	}
	return raw
}
