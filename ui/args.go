package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// A call's arguments in the Call pane, as a person reads them: one line per
// argument in the order the agent sent them, and code (or any text of
// several lines) as code, its lines under the name, syntax-coloured where
// it is a cell's source or code to run, rather than one JSON string of
// escaped newlines. Arguments cut for size, or that are not a JSON object,
// are shown as the JSON they are.

// argLines draws the arguments of c at width w.
func (m *Model) argLines(c *observe.Call, w int) []string {
	s := m.styles
	if len(c.Args) == 0 {
		return []string{s.Muted.Render("  {}")}
	}
	root, err := parseJSONTree(c.Args)
	if c.ArgsCut > 0 || err != nil || root.kind != '{' {
		return boundText(prettyJSON(c.Args), detailArgsLines, w, s.Muted.Render)
	}
	if len(root.children) == 0 {
		return []string{s.Muted.Render("  {}")}
	}
	var out []string
	for _, n := range root.children {
		name := s.JSONKey.Render(n.key) + ":"
		text, multi := argText(n)
		switch {
		case multi && isCodeArg(n.key):
			out = append(out, "  "+name)
			out = append(out, m.codeBlock(text, w)...)
		case multi:
			out = append(out, "  "+name)
			out = append(out, boundText(indentBy(text, "  │ "), detailArgsLines, w, s.Muted.Render)...)
		case n.kind == '{' || n.kind == '[':
			out = append(out, "  "+name+" "+s.Muted.Render(compactJSON(c.Args, n)))
		default:
			out = append(out, "  "+name+" "+m.argValue(n))
		}
	}
	return wrapAll(out, w)
}

// argText is a string argument's text and whether it spans lines (code).
func argText(n *jsonNode) (string, bool) {
	if n.kind != 's' {
		return "", false
	}
	var str string
	if json.Unmarshal([]byte(n.value), &str) != nil {
		return "", false
	}
	return str, strings.Contains(str, "\n")
}

// isCodeArg reports whether an argument holds code or a cell's source.
func isCodeArg(name string) bool {
	for _, k := range codeArgs {
		if k == name {
			return true
		}
	}
	return false
}

// argValue is a scalar argument as JSON, coloured by kind.
func (m *Model) argValue(n *jsonNode) string {
	s := m.styles
	if n.kind == 's' {
		return s.JSONString.Render(oneLine(n.value))
	}
	return s.JSONNumber.Render(n.value)
}

// codeBlock is code drawn under its argument's name: coloured, each line
// behind a bar, at most detailArgsLines lines with a count of the rest.
func (m *Model) codeBlock(code string, w int) []string {
	s := m.styles
	lines := highlight(code, "python", m.styles.Syntax)
	bar := s.Muted.Render("  │ ")
	var out []string
	for i, l := range lines {
		if i == detailArgsLines {
			out = append(out, s.Muted.Render(fmt.Sprintf("  │ … %d more lines", len(lines)-i)))
			break
		}
		out = append(out, bar+l)
	}
	return out
}

// indentBy puts prefix before every line of text.
func indentBy(text, prefix string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// compactJSON is the value of a top-level argument as one line of JSON.
func compactJSON(raw json.RawMessage, n *jsonNode) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, obj[n.key]) != nil {
		return string(obj[n.key])
	}
	return b.String()
}
