package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// README tool reference markers: the generated section lives between them.
const (
	ToolRefStart = "<!-- tools:start -->"
	ToolRefEnd   = "<!-- tools:end -->"
)

// ToolReference renders the tool table as Markdown for the README: one
// section per tool with its annotations, description, arguments and the
// kind and shape of its result. It is generated from the same table the
// server registers, so the README cannot describe a tool that is not there.
func ToolReference() string {
	var b strings.Builder
	tools := allTools()
	fmt.Fprintf(&b, "%d tools. Every result carries text `content` and `structuredContent` with a `kind`; see each tool's result shape.\n", len(tools))
	b.WriteString("\n| Tool | Kind | Shape | Hints |\n| --- | --- | --- | --- |\n")
	for _, d := range tools {
		fmt.Fprintf(&b, "| [`%s`](#%s) | `%s` | %s | %s |\n", d.name, d.name, d.kind, d.shape, hints(d))
	}
	for _, d := range tools {
		fmt.Fprintf(&b, "\n### %s\n\n", d.name)
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(d.description))
		fmt.Fprintf(&b, "Title: %s. Hints: %s. Result: `%s`, %s shape", d.title, hints(d), d.kind, d.shape)
		if d.cacheTTL > 0 {
			fmt.Fprintf(&b, ", cacheable for %d s (private)", d.cacheTTL/1000)
		}
		b.WriteString(".\n")
		names := make([]string, 0, len(d.input.Properties))
		for n := range d.input.Properties {
			names = append(names, n)
		}
		sort.SliceStable(names, func(i, j int) bool { return propIndex(d, names[i]) < propIndex(d, names[j]) })
		if len(names) == 0 {
			b.WriteString("\nNo arguments.\n")
			continue
		}
		b.WriteString("\n| Argument | Type | Required | Default | Description |\n| --- | --- | --- | --- | --- |\n")
		for _, n := range names {
			p := d.input.Properties[n]
			typ := p.Type
			if typ == "" {
				typ = strings.Join(p.Types, " \\| ")
			}
			if len(p.Enum) > 0 {
				vals := make([]string, len(p.Enum))
				for i, v := range p.Enum {
					vals[i] = fmt.Sprint(v)
				}
				typ += " (" + strings.Join(vals, ", ") + ")"
			}
			switch {
			case p.Minimum != nil && p.Maximum != nil:
				typ += fmt.Sprintf(" %g..%g", *p.Minimum, *p.Maximum)
			case p.Minimum != nil:
				typ += fmt.Sprintf(" >= %g", *p.Minimum)
			}
			req := "no"
			if slices.Contains(d.input.Required, n) {
				req = "yes"
			}
			dflt := "—"
			if len(p.Default) > 0 {
				var v any
				_ = json.Unmarshal(p.Default, &v)
				c, _ := json.Marshal(v)
				dflt = "`" + string(c) + "`"
			}
			desc := strings.ReplaceAll(strings.ReplaceAll(p.Description, "\n", " "), "|", "\\|")
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", n, typ, req, dflt, desc)
		}
	}
	return b.String()
}

func hints(d *toolDef) string { return strings.Join(annotationLabels(d), ", ") }

// annotationLabels names the tool's annotation hints that are set, in the
// order the reference prints them.
func annotationLabels(d *toolDef) []string {
	var h []string
	if d.destructive {
		h = append(h, "destructive")
	}
	if d.readOnly {
		h = append(h, "read-only")
	}
	if d.idempotent {
		h = append(h, "idempotent")
	}
	if d.openWorld {
		h = append(h, "open-world")
	}
	return h
}

func propIndex(d *toolDef, name string) int {
	for i, n := range d.input.PropertyOrder {
		if n == name {
			return i
		}
	}
	return len(d.input.PropertyOrder)
}

// SpliceToolReference puts the generated reference between the markers of a
// README, leaving everything else as it was. ok is false when the markers
// are missing.
func SpliceToolReference(readme string) (out string, ok bool) {
	i := strings.Index(readme, ToolRefStart)
	j := strings.Index(readme, ToolRefEnd)
	if i < 0 || j < i {
		return readme, false
	}
	return readme[:i+len(ToolRefStart)] + "\n" + ToolReference() + readme[j:], true
}
