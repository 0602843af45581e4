package ui

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// argsSummary is the one-line form of the call's arguments (shortArgs),
// made once and kept in the call: the calls pane shows it on every frame.
func argsSummary(c *observe.Call) string {
	if c.Summary != "" {
		// An entry that is no tool call (an undo) says what it was:
		// after its name, "of insert_cell 14:31:23 by the person".
		return strings.TrimPrefix(c.Summary, c.Tool+" ")
	}
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
