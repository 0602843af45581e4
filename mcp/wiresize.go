package mcp

import (
	"encoding/base64"
	"unicode/utf8"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// measureResult records in o what each part of res weighs on the wire: the
// workbench's stats show what a tool's results cost the agent's context.
// The sizes are those of the JSON the client receives, counted without
// encoding it a second time (the structured content is already encoded).
func measureResult(o *calls.Outcome, res *sdk.CallToolResult) {
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			o.TextBytes += jsonStringLen(c.Text)
		case *sdk.ImageContent:
			o.ImageBytes += base64.StdEncoding.EncodedLen(len(c.Data)) + 2
		}
	}
	o.StructuredBytes = len(o.Structured)
}

// jsonStringLen is the length of s encoded as a JSON string the way
// encoding/json (and so the SDK) encodes it: quotes, short escapes for
// quote, backslash and the common controls, \u00XX for other controls and
// for the HTML-sensitive <, > and &, \ufffd for invalid UTF-8, and
// \u2028 / \u2029 escaped.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"', b == '\\', b == '\n', b == '\r', b == '\t', b == '\b', b == '\f':
				n += 2
			case b < 0x20, b == '<', b == '>', b == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
