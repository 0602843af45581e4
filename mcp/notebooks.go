package mcp

import (
	"context"
	"fmt"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// Notebook tools: use, unuse, list, read, restart.

// CreatedNotebookHeading is the one markdown cell of a notebook use_notebook
// creates, in the reference's words (engine.Config.CreatedHeading): its
// clients count on a new notebook having a cell 0, and insert at 1.
const CreatedNotebookHeading = "New Notebook Created by Jupyter MCP Server"

type useNotebookIn struct {
	NotebookName string  `json:"notebook_name" jsonschema:"Unique identifier for the notebook"`
	NotebookPath string  `json:"notebook_path" jsonschema:"Path to the notebook file, relative to the Jupyter server root (e.g. 'notebook.ipynb')"`
	Mode         string  `json:"mode,omitempty" jsonschema:"Notebook operation mode: 'connect' to connect to existing and activate it, 'create' to create new and activate it"`
	KernelID     *string `json:"kernel_id,omitempty" jsonschema:"Id of an existing kernel (or sandbox, for a non-Jupyter sandbox variant) to attach the notebook to. A new one is created if skipped."`
}

func patchUseNotebook(p patcher) {
	def(enum(p.get("mode"), "connect", "create"), "connect")
	// The reference types kernel_id as a plain string with default null;
	// accepting an explicit null as well is what its clients send.
	nullable(p.get("kernel_id"))
}

func (s *Server) useNotebook(ctx context.Context, c *call, in useNotebookIn) (*answer, error) {
	// What was current, and whether this name was in use already, for the
	// reference's "Reactivating" line.
	var previous string
	if cur, err := s.e.Notebook(c.session, ""); err == nil {
		previous = cur.Name
	}
	_, err := s.e.Notebook(c.session, in.NotebookName)
	reused := err == nil
	nb, err := s.e.UseNotebook(ctx, engine.UseRequest{Session: c.session, Name: in.NotebookName, Path: in.NotebookPath, Mode: in.Mode, KernelID: deref(in.KernelID)})
	if err != nil {
		return nil, err
	}
	var also []string
	for _, o := range s.e.ListNotebooks(c.session) {
		if o.Path == nb.Path && o.Name != nb.Name {
			also = append(also, o.Name)
		}
	}
	if !reused || previous == nb.Name {
		previous = ""
	}
	return message(textUseNotebook(nb, in.Mode, previous, also)).withNotebook(nb.Name), nil
}

type notebookNameIn struct {
	NotebookName string `json:"notebook_name" jsonschema:"Notebook identifier to disconnect"`
}

func (s *Server) unuseNotebook(ctx context.Context, c *call, in notebookNameIn) (*answer, error) {
	u, err := s.e.UnuseNotebook(ctx, c.session, in.NotebookName)
	if err != nil {
		return nil, err
	}
	return message(textUnused(u)).withNotebook(u.Name), nil
}

type noArgs struct{}

func (s *Server) listNotebooks(_ context.Context, c *call, _ noArgs) (*answer, error) {
	return rows("", notebooksTable(s.e.ListNotebooks(c.session)),
		"No managed notebooks. Use the use_notebook tool to manage notebooks first."), nil
}

type readNotebookIn struct {
	NotebookName   string `json:"notebook_name" jsonschema:"Notebook identifier to read"`
	ResponseFormat string `json:"response_format,omitempty" jsonschema:"Response format: 'brief' will return first line and lines number, 'detailed' will return full cell source"`
	StartIndex     int    `json:"start_index,omitempty" jsonschema:"Starting index for pagination (0-based)"`
	Limit          int    `json:"limit,omitempty" jsonschema:"Maximum number of items to return (0 means no limit)"`
}

func patchReadNotebook(p patcher) {
	def(enum(p.get("response_format"), "brief", "detailed"), "brief")
	def(minimum(p.get("start_index"), 0), 0)
	def(minimum(p.get("limit"), 0), 20)
}

func (s *Server) readNotebook(ctx context.Context, c *call, in readNotebookIn) (*answer, error) {
	nb, cells, err := s.e.ReadNotebook(ctx, c.session, in.NotebookName, in.StartIndex, in.Limit)
	if err != nil {
		return nil, err
	}
	return message(textReadNotebook(nb, cells, in.ResponseFormat, in.StartIndex)).withNotebook(nb.Name), nil
}

type restartIn struct {
	NotebookName string `json:"notebook_name" jsonschema:"Notebook identifier to restart"`
}

func (s *Server) restartNotebook(ctx context.Context, c *call, in restartIn) (*answer, error) {
	nb, err := s.e.RestartNotebook(ctx, c.session, in.NotebookName)
	if err != nil {
		return nil, err
	}
	if nb.Replaced != "" {
		// The reference's words for it, with both ids.
		return message(fmt.Sprintf("Notebook '%s' kernel was no longer available and has been reprovisioned (new kernel '%s'; the old one, %s, no longer exists on the Jupyter server). Memory state and imported packages have been cleared; re-run the cells you need.",
			nb.Name, nb.KernelID, nb.Replaced)).withNotebook(nb.Name), nil
	}
	return message(fmt.Sprintf("Notebook '%s' kernel restarted successfully. Memory state and imported packages have been cleared; re-run the cells you need.", nb.Name)).withNotebook(nb.Name), nil
}

// notebooksTable is the list_notebooks table, with the reference's columns.
func notebooksTable(list []engine.NotebookInfo) table {
	t := table{columns: []string{"Name", "Path", "Kernel_ID", "Kernel_Status", "Activate"}}
	for _, nb := range list {
		kid := nb.KernelID
		if kid == "" {
			kid = "-"
		}
		state := nb.KernelState
		if state == "" {
			state = "unknown"
		}
		mark := ""
		if nb.Current {
			mark = "✓"
		}
		t.rows = append(t.rows, []string{nb.Name, nb.Path, kid, state, mark})
	}
	return t
}

func deref[T any](p *T) T {
	if p == nil {
		var z T
		return z
	}
	return *p
}
