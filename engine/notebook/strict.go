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
	from := 0 // raw[from:] is not copied yet
	outsideStrings(raw, func(i int) int {
		for _, word := range []string{"NaN", "-Infinity", "Infinity"} {
			if bytes.HasPrefix(raw[i:], []byte(word)) {
				out = append(append(out, raw[from:i]...), "null"...)
				from = i + len(word)
				return len(word)
			}
		}
		return 1
	})
	if out == nil {
		return raw
	}
	return append(out, raw[from:]...)
}
