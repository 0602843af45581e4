package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// Resources: capabilities:// and the three notebook templates. A notebook is
// named by the name it was used under (use_notebook's notebook_name), and a
// cell by its nbformat id, so a URI keeps naming the same cell while others
// are inserted above it.

const (
	capabilitiesURI = "capabilities://"
	notebookScheme  = "notebook://"
	ipynbMIME       = "application/x-ipynb+json"
)

func (s *Server) addResources() {
	s.srv.AddResource(&sdk.Resource{
		URI:      capabilitiesURI,
		Name:     "capabilities_resource",
		MIMEType: "application/json",
		Description: "What this server can do, and where each answer came from.\n\n" +
			"A server does things a client cannot see and did not ask for — replacing a dead kernel with an empty one is the clearest case. " +
			"Reading this is how a client finds out which of those are on, and an operator finds out why a capability is on, " +
			"which is the first question asked when one surprises somebody.",
	}, s.readCapabilities)
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: notebookTemplate,
		Name:        "notebook",
		MIMEType:    ipynbMIME,
		Description: "A notebook in use, as nbformat JSON. Cells and outputs are resources of their own.",
	}, s.readNotebookResource)
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: cellTemplate,
		Name:        "notebook-cell",
		MIMEType:    "application/json",
		Description: "One cell by its nbformat id, with its outputs listed rather than inlined.",
	}, s.readNotebookResource)
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: outputTemplate,
		Name:        "notebook-cell-output",
		Description: "One output of one cell, with its own MIME type. Read it only if you need the bytes.",
	}, s.readNotebookResource)
}

// Notebooks in use are listed in resources/list, one concrete resource per
// notebook (notebook://NAME), and a client is sent
// notifications/resources/list_changed when that list changes. The list
// follows the engine's notebook.opened and notebook.closed events, so no
// tool handler does anything for it: a goroutine, running while any MCP
// session is open, brings the SDK's resource list in line with the
// engine's notebooks after each such event (the SDK debounces the
// notification and sends it to every session).
type notebookList struct {
	mu       sync.Mutex // guards sessions and sub
	sessions int
	sub      *event.Subscription

	syncMu sync.Mutex        // serializes syncs
	listed map[string]string // name -> path of each notebook listed
}

// watchNotebooks is called when a session opens: the first one starts
// following the engine's notebooks.
func (s *Server) watchNotebooks() {
	w := &s.notebooks
	w.mu.Lock()
	w.sessions++
	if w.sub != nil {
		w.mu.Unlock()
		return
	}
	sub := s.e.Bus().SubscribeTo(64, event.EvNotebookOpened, event.EvNotebookClosed)
	w.sub = sub
	w.mu.Unlock()
	// The first session lists what is in use now, before its first
	// request is answered.
	s.syncNotebookResources()
	go func() {
		for range sub.C() {
			// Which notebook changed does not matter, nor whether some
			// events were lost (engine.EvMissed): every sync makes the
			// whole list right.
			s.syncNotebookResources()
		}
	}()
}

// unwatchNotebooks is called when a session ends: the last one stops the
// goroutine. The listed resources stay until the next session's sync.
func (s *Server) unwatchNotebooks() {
	w := &s.notebooks
	w.mu.Lock()
	w.sessions--
	var sub *event.Subscription
	if w.sessions == 0 {
		sub, w.sub = w.sub, nil
	}
	w.mu.Unlock()
	if sub != nil {
		sub.Close()
	}
}

// syncNotebookResources lists every notebook in use and no other.
func (s *Server) syncNotebookResources() {
	w := &s.notebooks
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.listed == nil {
		w.listed = map[string]string{}
	}
	inUse := map[string]string{}
	for _, nb := range s.e.ListNotebooks("") {
		inUse[nb.Name] = nb.Path
	}
	var gone []string
	for name := range w.listed {
		if _, ok := inUse[name]; !ok {
			gone = append(gone, notebookResourceURI(name))
			delete(w.listed, name)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveResources(gone...)
	}
	for name, path := range inUse {
		if p, ok := w.listed[name]; ok && p == path {
			continue
		}
		uri := notebookResourceURI(name)
		if _, err := url.Parse(uri); err != nil {
			// The SDK would panic; the notebook stays readable through
			// the template.
			s.log.Warn("a notebook name makes no valid resource URI; not listed", "name", name, "err", err)
			continue
		}
		s.srv.AddResource(&sdk.Resource{
			URI:      uri,
			Name:     name,
			Title:    path,
			MIMEType: ipynbMIME,
			Description: fmt.Sprintf("The notebook %s in use as %q, as nbformat JSON. Its cells are notebook://%s/cells/{cell_id}.",
				path, name, strings.TrimPrefix(uri, notebookScheme)),
		}, s.readNotebookResource)
		w.listed[name] = path
	}
}

// notebookResourceURI is the URI of a notebook in use. The name is one
// path segment, escaped; ":" and "@" are escaped too, since right after
// "notebook://" they would read as a port or a user.
func notebookResourceURI(name string) string {
	return notebookScheme + strings.NewReplacer(":", "%3A", "@", "%40").Replace(url.PathEscape(name))
}

// readCapabilities lists every capability: on or off, its value, where the
// value came from (default, flag, env), and what it does.
func (s *Server) readCapabilities(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	caps := s.e.Capabilities()
	if caps == nil {
		caps = []engine.Capability{}
	}
	body, err := json.MarshalIndent(map[string]any{"capabilities": caps}, "", "  ")
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{
		URI: req.Params.URI, MIMEType: "application/json", Text: string(body),
	}}}, nil
}

// notebookURI is a parsed notebook:// URI.
type notebookURI struct {
	name   string
	cellID string
	output int // -1 when the URI names no output
}

// parseNotebookURI splits notebook://{name}[/cells/{cell_id}[/outputs/{index}]].
func parseNotebookURI(uri string) (notebookURI, error) {
	rest, ok := strings.CutPrefix(uri, notebookScheme)
	if !ok || rest == "" {
		return notebookURI{}, fmt.Errorf("not a notebook URI: %q (want notebook://{name}[/cells/{cell_id}[/outputs/{index}]])", uri)
	}
	parts := strings.Split(rest, "/")
	for i, p := range parts {
		u, err := url.PathUnescape(p)
		if err != nil || u == "" {
			return notebookURI{}, fmt.Errorf("bad notebook URI %q: empty or badly escaped segment", uri)
		}
		parts[i] = u
	}
	n := notebookURI{name: parts[0], output: -1}
	switch len(parts) {
	case 1:
	case 3:
		if parts[1] != "cells" {
			return notebookURI{}, fmt.Errorf("bad notebook URI %q: expected /cells/{cell_id}", uri)
		}
		n.cellID = parts[2]
	case 5:
		if parts[1] != "cells" || parts[3] != "outputs" {
			return notebookURI{}, fmt.Errorf("bad notebook URI %q: expected /cells/{cell_id}/outputs/{index}", uri)
		}
		i, err := strconv.Atoi(parts[4])
		if err != nil || i < 0 {
			return notebookURI{}, fmt.Errorf("bad notebook URI %q: output index must be a number >= 0", uri)
		}
		n.cellID, n.output = parts[2], i
	default:
		return notebookURI{}, fmt.Errorf("bad notebook URI %q (want notebook://{name}[/cells/{cell_id}[/outputs/{index}]])", uri)
	}
	return n, nil
}

// resourceError is how a resource read fails: a problem the reader can fix
// (unknown notebook, cell or output) is "resource not found" with the
// engine's message; anything else is an internal error without secrets.
func resourceError(uri string, err error) error {
	if engine.IsUserError(err) {
		//lint:ignore SA1019 -32002 is the code the 2025-11-25 spec names for a missing resource; keep it
		return &jsonrpc.Error{Code: sdk.CodeResourceNotFound, Message: agentText("", err), Data: json.RawMessage(fmt.Sprintf(`{"uri":%q}`, uri))}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "reading " + uri + " failed: " + redact(err.Error())}
}

func (s *Server) readNotebookResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	n, err := parseNotebookURI(uri)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	switch {
	case n.cellID == "":
		body, err := s.e.NotebookJSON(ctx, n.name)
		if err != nil {
			return nil, resourceError(uri, err)
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: ipynbMIME, Text: string(body)}}}, nil
	case n.output < 0:
		_, cell, err := s.e.ReadCell(ctx, s.sessionID(req.Session), n.name, engine.CellRef{ID: n.cellID})
		if err != nil {
			return nil, resourceError(uri, err)
		}
		body, err := json.MarshalIndent(cellResource(n.name, cell), "", "  ")
		if err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
	default:
		out, err := s.e.CellOutput(ctx, n.name, n.cellID, n.output)
		if err != nil {
			return nil, resourceError(uri, err)
		}
		return &sdk.ReadResourceResult{Contents: outputContents(uri, out)}, nil
	}
}

// cellResource is a cell as nbformat keys, its outputs listed by URI (with
// their type and main MIME type) instead of inlined: a cell with a large
// plot stays small, and each output can be read on its own.
func cellResource(name string, c engine.CellInfo) map[string]any {
	m := map[string]any{
		"id":        c.ID,
		"index":     c.Index,
		"cell_type": c.Type,
		"source":    c.Source,
	}
	if len(c.Metadata) > 0 {
		// NaN and the infinities a notebook may hold are no JSON.
		m["metadata"] = notebook.StrictJSON(c.Metadata)
	} else {
		m["metadata"] = map[string]any{}
	}
	if c.Type == notebook.Code {
		m["execution_count"] = c.ExecutionCount
		outs := make([]map[string]any, 0, len(c.Outputs))
		for i, o := range c.Outputs {
			outs = append(outs, map[string]any{
				"uri":         output.URI(name, c.ID, i),
				"output_type": o.OutputType,
				"mimeType":    output.MIMEs(&o)[0],
			})
		}
		m["outputs"] = outs
	}
	return m
}

// outputContents serves one output whole: a stream's text (its "\r"s
// applied, as everywhere it is shown), an error's traceback (escapes
// stripped, as everywhere an agent reads it), or every representation of a
// bundle under its own MIME type, the one the output model chooses first,
// images as blobs.
func outputContents(uri string, o notebook.Output) []*sdk.ResourceContents {
	switch o.OutputType {
	case notebook.Stream, notebook.Error:
		v := output.Render(&o, output.Options{})
		return []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: v.String()}}
	}
	var contents []*sdk.ResourceContents
	for _, m := range output.MIMEs(&o) {
		v, ok := o.Data[m]
		if !ok {
			continue
		}
		if strings.HasPrefix(m, "image/") && m != "image/svg+xml" {
			raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(notebook.DataText(v)), ""))
			if err == nil {
				contents = append(contents, &sdk.ResourceContents{URI: uri, MIMEType: m, Blob: raw})
				continue
			}
		}
		text := notebook.DataText(v)
		if m == "text/plain" {
			text = ansi.Strip(text)
		}
		contents = append(contents, &sdk.ResourceContents{URI: uri, MIMEType: m, Text: text})
	}
	if len(contents) == 0 {
		contents = append(contents, &sdk.ResourceContents{URI: uri, MIMEType: "text/plain", Text: ""})
	}
	return contents
}
