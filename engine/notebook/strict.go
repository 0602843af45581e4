package notebook

import (
	"bytes"
	"encoding/json"
)

// StrictJSON is raw (a value kept from a notebook) as JSON proper, for
// readers that need it (an MCP result, a resource): NaN, Infinity and
// -Infinity, which Python's json writes and notebooks may hold, become
// null, as JavaScript's JSON.stringify writes them. Anything else is left
// as it is.
func StrictJSON(raw json.RawMessage) json.RawMessage {
	if json.Valid(raw) {
		return raw
	}
	var out []byte
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		replaced := false
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == 'N' || c == 'I' || c == '-':
			for _, word := range []string{"NaN", "-Infinity", "Infinity"} {
				if bytes.HasPrefix(raw[i:], []byte(word)) {
					if out == nil {
						out = append(make([]byte, 0, len(raw)), raw[:i]...)
					}
					out = append(out, "null"...)
					i += len(word) - 1
					replaced = true
					break
				}
			}
		}
		if out != nil && !replaced {
			out = append(out, c)
		}
	}
	if out == nil {
		return raw
	}
	return out
}
