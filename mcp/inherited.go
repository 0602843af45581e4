package mcp

import (
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A new session starts on the notebook most recently activated on the
// server (engine/sessions.go), so that a client written for the
// reference's server-wide pointer finds its notebook after a reconnect. But
// a client whose session was closed (evicted past --max-sessions, expired)
// may then start on another client's notebook, and a cell tool without
// notebook_name acts there. So until a session chooses a notebook itself
// (use_notebook), every result that acted on its current notebook without
// being told which says which one it was.

// withInheritedNote adds that note to a result of c, when it is due.
func (s *Server) withInheritedNote(d *toolDef, c *call, res *sdk.CallToolResult) {
	if d == nil || res == nil || c.notebook == "" {
		return
	}
	s.mu.Lock()
	if d.name == "use_notebook" {
		s.chose[c.session] = true
	}
	chose := s.chose[c.session]
	s.mu.Unlock()
	if chose || namesNotebook(c.req) {
		return
	}
	path := ""
	if nb, err := s.e.Notebook(c.session, c.notebook); err == nil {
		path = " (" + nb.Path + ")"
	}
	res.Content = append(res.Content, &sdk.TextContent{Text: fmt.Sprintf(
		"Note: this acted on notebook '%s'%s, which this session did not choose: it started on it because it was the notebook last used on this server, perhaps by another client. Pass notebook_name, or call use_notebook, to act on the notebook you mean.",
		c.notebook, path)})
}

// namesNotebook says whether the call's arguments name a notebook.
func namesNotebook(req *sdk.CallToolRequest) bool {
	if req == nil || req.Params == nil {
		return false
	}
	var args struct {
		NotebookName *string `json:"notebook_name"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &args)
	return args.NotebookName != nil && *args.NotebookName != ""
}
