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

// jsonDepth counts the deepest nesting of brackets outside strings; it
// reads any depth without recursing.
func jsonDepth(raw json.RawMessage) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range raw {
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
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
