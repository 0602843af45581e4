package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// taskNote is what a call row says of its task, before the arguments:
// the end of its id (enough to tell tasks apart), its state and polls.
func taskNote(c *observe.Call) string {
	if c.Task == nil {
		return ""
	}
	id := c.Task.ID
	if len(id) > 6 {
		id = "…" + id[len(id)-6:]
	}
	return "task " + id + " " + c.Task.State + ", " + polls(c.Task.Polls) + " · "
}

// polls counts a task's polls.
func polls(n int) string {
	if n == 1 {
		return "1 poll"
	}
	return fmt.Sprintf("%d polls", n)
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
