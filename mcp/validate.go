package mcp

import (
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file turns an answer into the wire result and checks its
// structuredContent against the tool's declared output schema.

// toResult turns an answer into the wire result: content as built,
// structuredContent with kind, _meta with the cache hint (listings only) and
// the acted-on cell. The structured answer is validated against the tool's
// declared output schema on every call; a mismatch is a server bug, logged
// and recorded in the call's outcome, and the result still goes out (losing
// the answer would be worse than a wrong shape).
func (s *Server) toResult(d *toolDef, c *call, a *answer) *sdk.CallToolResult {
	structured := map[string]any{"kind": d.kind}
	for k, v := range a.structured {
		structured[k] = v
	}
	res := &sdk.CallToolResult{Content: a.content}
	if len(res.Content) == 0 {
		res.Content = []sdk.Content{&sdk.TextContent{Text: ""}}
	}

	raw, err := json.Marshal(structured)
	ok := err == nil
	problem := ""
	if err != nil {
		problem = "marshal: " + err.Error()
	} else {
		// The validator wants the value as JSON decodes it. Decoding raw
		// again cost more than the validation itself, so the answer is
		// viewed as JSON in place when its types allow.
		v, exact := jsonView(structured)
		if !exact {
			v = nil
			err = json.Unmarshal(raw, &v)
		}
		if err != nil {
			ok, problem = false, "unmarshal: "+err.Error()
		} else if r := s.resolved[d.name]; r != nil {
			if err := r.Validate(v); err != nil {
				ok, problem = false, err.Error()
			}
		}
		res.StructuredContent = json.RawMessage(raw)
	}
	if !ok {
		s.noteSchemaProblem(d.name, problem)
	}

	meta := sdk.Meta{}
	if d.cacheTTL > 0 {
		meta[metaCache] = map[string]any{"ttlMs": d.cacheTTL, "cacheScope": "private"}
	}
	if a.cellID != "" {
		meta[metaCellID] = a.cellID
	}
	if len(a.cellIDs) > 0 {
		meta[metaCellIDs] = a.cellIDs
	}
	if len(meta) > 0 {
		res.Meta = meta
	}

	c.schemaOK, c.schemaProblem = &ok, problem
	c.cellID, c.images, c.cellError = a.cellID, a.images, a.cellError
	if a.notebook != "" {
		c.notebook = a.notebook
	}
	return res
}
