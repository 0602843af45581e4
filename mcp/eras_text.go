package mcp

import (
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a stateless client (2026-07-28) reads that a session's client does
// not: it has no current notebook of its own, so it is told to name one.

// stateless says whether the call comes from a client without a session.
func (c *call) stateless() bool { return c.req != nil && isStateless(c.req) }

// sessionlessUseNote ends use_notebook's answer to a stateless client.
func sessionlessUseNote(name string) string {
	return fmt.Sprintf("\n\nThis client speaks MCP 2026-07-28, which has no sessions: '%s' is now the server's current notebook, and any other client may change that at any time. Pass notebook_name='%s' to every tool that takes it (cell tools, execute_cell, insert_execute_code_cell) to act on this notebook.", name, name)
}

// withSessionlessNote is withInheritedNote for a stateless client: a result
// that acted on the server's current notebook without being told which says
// which one it was, unless it is the one this client itself last made
// current.
func (s *Server) withSessionlessNote(d *toolDef, c *call, res *sdk.CallToolResult) {
	s.mu.Lock()
	if d.name == "use_notebook" {
		if s.activated == nil {
			s.activated = map[string]string{}
		}
		s.activated[c.session] = c.notebook
	}
	mine := s.activated[c.session] == c.notebook
	s.mu.Unlock()
	if mine || namesNotebook(c.req) {
		return
	}
	path := ""
	if nb, err := s.e.Notebook(c.session, c.notebook); err == nil {
		path = " (" + nb.Path + ")"
	}
	res.Content = append(res.Content, &sdk.TextContent{Text: fmt.Sprintf(
		"Note: this acted on notebook '%s'%s, the notebook most recently made current on this server, perhaps by another client: this client has no session, so it has no current notebook of its own. Pass notebook_name to act on the notebook you mean.",
		c.notebook, path)})
}
