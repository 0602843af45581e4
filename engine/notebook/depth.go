package notebook

import "encoding/json"

// Depth is how deeply the JSON values of the output nest (its mime bundle,
// metadata and unknown keys; a scalar is 0, [] is 1). Python's json, which
// Jupyter reads and writes notebooks with, gives up a few hundred levels
// down (recursion), so an output nested deeper cannot be saved.
func (o *Output) Depth() int {
	d := jsonDepth(o.Metadata)
	for _, v := range o.Data {
		d = max(d, jsonDepth(v))
	}
	for _, v := range o.Extra {
		d = max(d, jsonDepth(v))
	}
	return d
}

// jsonDepth counts the deepest nesting of brackets; it reads any depth
// without recursing.
func jsonDepth(raw json.RawMessage) int {
	depth, deepest := 0, 0
	outsideStrings(raw, func(i int) int {
		switch raw[i] {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		}
		return 1
	})
	return deepest
}

// outsideStrings calls f at each byte of raw that is outside its JSON
// strings (quotes excluded); f returns how many bytes it took, at least 1.
func outsideStrings(raw []byte, f func(i int) int) {
	inString, escaped := false, false
	for i := 0; i < len(raw); {
		c := raw[i]
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
		default:
			i += max(1, f(i))
			continue
		}
		i++
	}
}
