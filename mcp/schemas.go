package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Input schemas start from jsonschema.For[In] (types and descriptions from
// the struct tags) and are then patched with what tags cannot say: defaults,
// enums, bounds and nullability, exactly as the reference declares them.

// inputSchema infers the schema of In and applies patch. It panics on a
// programming error (a property the patch names that the struct lacks), which
// the tool-table test turns into a failure at once.
func inputSchema[In any](patch func(p patcher)) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema: %v", err))
	}
	// The reference (pydantic function arguments) does not forbid extra
	// arguments, and clients written against it pass some (notebook_name to
	// execute_cell, for one). Rejecting them would break a drop-in client.
	s.AdditionalProperties = nil
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	if patch != nil {
		patch(checkedProps{s.Properties})
	}
	// The arguments many tools share carry one description, kept in one
	// place (tools.go) rather than repeated in every struct tag.
	for name, desc := range map[string]string{"notebook_name": notebookNameDesc, "cell_id": cellIDDesc} {
		if p, ok := s.Properties[name]; ok && p.Description == "" {
			p.Description = desc
		}
	}
	return s
}

// checkedProps panics when a patch names a property that does not exist, so a
// renamed json tag cannot silently lose its default.
type checkedProps struct{ m map[string]*jsonschema.Schema }

func (c checkedProps) get(name string) *jsonschema.Schema {
	p, ok := c.m[name]
	if !ok {
		panic(fmt.Sprintf("input schema: no property %q", name))
	}
	return p
}

// The patch helpers. Each returns the property so calls can chain.

func def(p *jsonschema.Schema, v any) *jsonschema.Schema {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	p.Default = b
	return p
}

func minimum(p *jsonschema.Schema, v float64) *jsonschema.Schema {
	p.Minimum = &v
	return p
}

func maximum(p *jsonschema.Schema, v float64) *jsonschema.Schema {
	p.Maximum = &v
	return p
}

func enum(p *jsonschema.Schema, values ...string) *jsonschema.Schema {
	p.Enum = nil
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
	return p
}

// nullable makes a property "T | null" with default null, the reference's
// Optional[...] = None.
func nullable(p *jsonschema.Schema) *jsonschema.Schema {
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	// "T | null", in the reference's order (null last).
	var nonNull []string
	for _, t := range types {
		if t != "null" {
			nonNull = append(nonNull, t)
		}
	}
	types = append(nonNull, "null")
	p.Type, p.Types = "", types
	p.Default = json.RawMessage("null")
	return p
}

// patcher is what a tool's schema patch receives.
type patcher interface {
	get(name string) *jsonschema.Schema
}

// The three output schemas. Their text is the reference's (pydantic models
// ToolAnswer, TableAnswer, OutputsAnswer) so a client validating against the
// reference's schemas validates against ours. Each allows extra keys, which is
// what lets an object-answering tool carry its own.

const (
	kindDesc   = "What this result is — 'cell.read', 'notebooks.list' and so on. Lets a client tell one answer from another without matching prose."
	resultDesc = "The answer itself: a message, the rows of a listing, or the outputs of an execution in order."
	answerDesc = "What every tool of this server answers with.\n\n" +
		"Declared so the shape is *advertised* rather than merely produced. A tool\n" +
		"that returns structure without saying what it will return leaves a client\n" +
		"nothing to validate against and the generated reference nothing to show —\n" +
		"the call works and the contract is invisible, which is the worst of both.\n\n" +
		"Extra fields are allowed on purpose. A tool that already answers with a\n" +
		"mapping keeps its own keys (see :func:`_default_shape`), and those are the\n" +
		"interesting part of its answer; forbidding them would mean either\n" +
		"flattening every tool into one shape or declaring nothing at all."
)

func answerBase(title, desc string) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:        "object",
		Title:       title,
		Description: desc,
		Properties: map[string]*jsonschema.Schema{
			"kind":   {Type: "string", Title: "Kind", Description: kindDesc},
			"result": {Title: "Result", Description: resultDesc, Default: json.RawMessage("null")},
		},
		PropertyOrder:        []string{"kind", "result"},
		Required:             []string{"kind"},
		AdditionalProperties: &jsonschema.Schema{}, // true
	}
}

// outputSchema returns a fresh copy of the output schema of a shape (fresh,
// because the SDK caches resolved schemas by pointer and snapshots must not
// share mutable state).
func outputSchema(sh shape) *jsonschema.Schema {
	switch sh {
	case shapeRows:
		s := answerBase("TableAnswer", "A listing that also comes back as rows keyed by its header.")
		s.Properties["columns"] = &jsonschema.Schema{Type: "array", Title: "Columns", Description: "The header, in order.", Items: &jsonschema.Schema{Type: "string"}}
		s.Properties["items"] = &jsonschema.Schema{Type: "array", Title: "Items", Description: "One object per row, keyed by the header.", Items: &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{}}}
		s.Properties["count"] = &jsonschema.Schema{Type: "integer", Title: "Count", Description: "How many rows.", Default: json.RawMessage("0")}
		s.PropertyOrder = append(s.PropertyOrder, "columns", "items", "count")
		return s
	case shapeOutputs:
		s := answerBase("OutputsAnswer", "Cell or execution outputs, in order.")
		s.Properties["outputs"] = &jsonschema.Schema{Type: "array", Title: "Outputs", Description: "The outputs in order: text as text, an image as its own object.", Items: &jsonschema.Schema{}}
		s.Properties["count"] = &jsonschema.Schema{Type: "integer", Title: "Count", Description: "How many outputs.", Default: json.RawMessage("0")}
		s.Properties["images"] = &jsonschema.Schema{Type: "integer", Title: "Images", Description: "How many of them are images.", Default: json.RawMessage("0")}
		s.PropertyOrder = append(s.PropertyOrder, "outputs", "count", "images")
		return s
	default:
		// message, object and list all answer with the base shape: an
		// object tool's own keys are the extra fields it allows.
		return answerBase("ToolAnswer", answerDesc)
	}
}

// usage renders an input schema as a one-line summary of the arguments, for
// error messages that must say what is allowed.
func usage(s *jsonschema.Schema) string {
	if s == nil || len(s.Properties) == 0 {
		return "this tool takes no arguments"
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	order := map[string]int{}
	for i, n := range s.PropertyOrder {
		order[n] = i + 1
	}
	sort.SliceStable(names, func(i, j int) bool {
		oi, oj := order[names[i]], order[names[j]]
		if oi == 0 || oj == 0 {
			return oi != 0 || (oj == 0 && names[i] < names[j])
		}
		return oi < oj
	})
	var parts []string
	for _, n := range names {
		p := s.Properties[n]
		t := p.Type
		if t == "" {
			t = strings.Join(p.Types, " | ")
		}
		if t == "" {
			t = "any"
		}
		if t == "array" && p.Items != nil && p.Items.Type != "" {
			t = "array of " + p.Items.Type
		}
		desc := n + " (" + t
		if len(p.Enum) > 0 {
			vals := make([]string, len(p.Enum))
			for i, v := range p.Enum {
				vals[i] = fmt.Sprint(v)
			}
			desc += ", one of " + strings.Join(vals, "|")
		}
		switch {
		case p.Minimum != nil && p.Maximum != nil:
			desc += fmt.Sprintf(", %g..%g", *p.Minimum, *p.Maximum)
		case p.Minimum != nil:
			desc += fmt.Sprintf(", >= %g", *p.Minimum)
		}
		if slices.Contains(s.Required, n) {
			desc += ", required"
		} else if len(p.Default) > 0 {
			desc += ", default " + string(p.Default)
		}
		parts = append(parts, desc+")")
	}
	return "arguments: " + strings.Join(parts, "; ")
}
