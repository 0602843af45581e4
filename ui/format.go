package ui

import (
	"bytes"
	"encoding/json"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// argsSummary is the one-line form of the call's arguments (shortArgs),
// made once and kept in the call: the calls pane shows it on every frame.
func argsSummary(c *observe.Call) string {
	if c.ArgsLine == "" && len(c.Args) > 0 {
		c.ArgsLine = shortArgs(c.Args)
	}
	return c.ArgsLine
}

// prettyJSON indents raw JSON for display; invalid JSON is returned as is.
func prettyJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
