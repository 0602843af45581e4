package mcp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// completion/complete: what a client may offer while someone types an
// argument.
//
//   - The resource templates: {name} of notebook://{name} (and of the cell
//     and output templates) is a notebook in use; {cell_id} is a cell id of
//     the notebook named in the request's context; {index} is an output
//     index of that cell.
//   - The prompt jupyter_cite: notebook_name is a notebook in use;
//     cell_indices completes its last index (after the last "," or "-")
//     with the indices of the notebook named in the context, or of the
//     session's current notebook, as the prompt itself defaults.
//
// The protocol completes the arguments of prompts (ref/prompt) and of
// resource templates (ref/resource) only: tool arguments, path-like ones
// included (use_notebook's notebook_path, list_files' path), cannot be
// completed through it, so none are offered.
//
// Values are the candidates whose text starts with what was typed (case
// ignored), in their natural order (names sorted, cells and outputs in
// notebook order), at most maxCompletions of them; total counts them all
// and hasMore says when some were left out. An unknown prompt, template or
// argument is an error (-32602, as the protocol asks); a notebook or cell
// that does not exist has no candidates.

const maxCompletions = 100

// The templates' URIs, as declared in addResources.
const (
	notebookTemplate = "notebook://{name}"
	cellTemplate     = "notebook://{name}/cells/{cell_id}"
	outputTemplate   = "notebook://{name}/cells/{cell_id}/outputs/{index}"
)

func (s *Server) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	p := req.Params
	var known map[string]string
	if p.Context != nil {
		known = p.Context.Arguments
	}
	arg := p.Argument
	var (
		values []string
		err    error
	)
	switch p.Ref.Type {
	case "ref/prompt":
		if p.Ref.Name != "jupyter_cite" {
			return nil, invalidParams("unknown prompt %q: this server has one prompt, jupyter_cite", p.Ref.Name)
		}
		switch arg.Name {
		case "notebook_name":
			values = s.notebookNames()
		case "cell_indices":
			values, err = s.cellIndexValues(ctx, s.sessionOf(req), known["notebook_name"], arg.Value)
		case "prompt":
			// Free text: nothing to offer.
		default:
			return nil, invalidParams("the prompt jupyter_cite has no argument %q (it takes prompt, cell_indices, notebook_name)", arg.Name)
		}
	case "ref/resource":
		vars := templateVars(p.Ref.URI)
		if vars == nil {
			return nil, invalidParams("no resource template %q: the templates are %s, %s and %s", p.Ref.URI, notebookTemplate, cellTemplate, outputTemplate)
		}
		if !vars[arg.Name] {
			return nil, invalidParams("the resource template %s has no variable %q", p.Ref.URI, arg.Name)
		}
		switch arg.Name {
		case "name":
			values = s.notebookNames()
		case "cell_id":
			values, err = s.cellIDs(ctx, s.sessionOf(req), known["name"])
		case "index":
			values, err = s.outputIndices(ctx, s.sessionOf(req), known["name"], known["cell_id"])
		}
	default:
		return nil, invalidParams("unknown reference type %q (want ref/prompt or ref/resource)", p.Ref.Type)
	}
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "completing " + arg.Name + " failed: " + redact(err.Error())}
	}
	return &sdk.CompleteResult{Completion: completion(values, arg.Value)}, nil
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// templateVars names the variables of one of the notebook templates, or is
// nil for any other URI.
func templateVars(uri string) map[string]bool {
	switch uri {
	case notebookTemplate:
		return map[string]bool{"name": true}
	case cellTemplate:
		return map[string]bool{"name": true, "cell_id": true}
	case outputTemplate:
		return map[string]bool{"name": true, "cell_id": true, "index": true}
	}
	return nil
}

// completion keeps the candidates starting with typed (case ignored), at
// most maxCompletions, and says how many there were.
func completion(candidates []string, typed string) sdk.CompletionResultDetails {
	lower := strings.ToLower(typed)
	matches := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), lower) {
			matches = append(matches, c)
		}
	}
	d := sdk.CompletionResultDetails{Values: matches, Total: len(matches)}
	if len(matches) > maxCompletions {
		d.Values, d.HasMore = matches[:maxCompletions], true
	}
	return d
}

// notebookNames are the names of the notebooks in use, sorted.
func (s *Server) notebookNames() []string {
	infos := s.e.ListNotebooks("")
	names := make([]string, len(infos))
	for i, nb := range infos {
		names[i] = nb.Name
	}
	return names
}

// cells reads a notebook's cells; a notebook that is not in use (a
// mistyped name) has none, and is no error.
func (s *Server) cells(ctx context.Context, session, name string) ([]engine.CellInfo, error) {
	_, cells, err := s.e.ReadNotebook(ctx, session, name, 0, 0)
	if engine.IsUserError(err) {
		return nil, nil
	}
	return cells, err
}

// cellIDs are the ids of the named notebook's cells, in order. Without a
// name there are none: the template's URI needs the name anyway.
func (s *Server) cellIDs(ctx context.Context, session, name string) ([]string, error) {
	if name == "" {
		return nil, nil
	}
	cells, err := s.cells(ctx, session, name)
	ids := make([]string, len(cells))
	for i, c := range cells {
		ids[i] = c.ID
	}
	return ids, err
}

// outputIndices are the indices of one cell's outputs.
func (s *Server) outputIndices(ctx context.Context, session, name, cellID string) ([]string, error) {
	if name == "" || cellID == "" {
		return nil, nil
	}
	_, cell, err := s.e.ReadCell(ctx, session, name, engine.CellRef{ID: cellID})
	if engine.IsUserError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return indices("", len(cell.Outputs)), nil
}

// cellIndexValues completes jupyter_cite's cell_indices ("0-2,4"): what was
// typed up to its last "," or "-" is kept, and the rest is completed with
// the cell indices of the notebook (the session's current one when name is
// empty, as for the prompt).
func (s *Server) cellIndexValues(ctx context.Context, session, name, typed string) ([]string, error) {
	cells, err := s.cells(ctx, session, name)
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexAny(typed, ",-") + 1
	for i < len(typed) && typed[i] == ' ' {
		i++
	}
	return indices(typed[:i], len(cells)), nil
}

// indices are head+"0" ... head+(n-1).
func indices(head string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = head + strconv.Itoa(i)
	}
	return out
}
