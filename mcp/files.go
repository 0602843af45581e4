package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// Server tools: list_files, list_kernels, connect_to_jupyter.

type listFilesIn struct {
	Path       string `json:"path,omitempty" jsonschema:"The starting path to list from (empty string means root directory)"`
	MaxDepth   int    `json:"max_depth,omitempty" jsonschema:"Maximum depth to recurse into subdirectories"`
	StartIndex int    `json:"start_index,omitempty" jsonschema:"Starting index for pagination (0-based)"`
	Limit      int    `json:"limit,omitempty" jsonschema:"Maximum number of items to return (0 means no limit)"`
	Pattern    string `json:"pattern,omitempty" jsonschema:"Glob pattern to filter file paths"`
}

func patchListFiles(p patcher) {
	def(p.get("path"), "")
	def(maximum(minimum(p.get("max_depth"), 0), 3), 1)
	def(minimum(p.get("start_index"), 0), 0)
	def(minimum(p.get("limit"), 0), 25)
	def(p.get("pattern"), "")
}

// listFiles pages the engine's listing the way the reference does: sorted by
// path, a "Showing a-b of n files" line above the table, and a start index
// past the end reset to 0 with a warning rather than an empty answer.
func (s *Server) listFiles(ctx context.Context, _ *call, in listFilesIn) (*answer, error) {
	files, err := s.e.ListFiles(ctx, in.Path, in.MaxDepth, in.Pattern)
	if err != nil {
		return nil, err
	}
	where := in.Path
	if where == "" {
		where = "root"
	}
	empty := fmt.Sprintf("No files found in path '%s'", where)
	if in.Pattern != "" {
		empty = fmt.Sprintf("No files matching pattern '%s' found in path '%s'", in.Pattern, where)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	total := len(files)
	var prefix strings.Builder
	start := in.StartIndex
	if total > 0 && start >= total {
		fmt.Fprintf(&prefix, "[WARNING] Start index is greater than the number of files: start_index=%d, total_files=%d. Reset start_index to 0. \n", start, total)
		start = 0
	}
	end := total
	if in.Limit > 0 && start+in.Limit < total {
		end = start + in.Limit
	}
	page := files
	if total > 0 {
		page = files[start:end]
	}
	fmt.Fprintf(&prefix, "Showing %d-%d of %d files\n\n", start, end, total)
	return rows(prefix.String(), filesTable(page), empty), nil
}

// filesTable is the list_files table, with the reference's columns.
func filesTable(files []engine.FileEntry) table {
	t := table{columns: []string{"Path", "Type", "Size", "Last_Modified"}}
	for _, f := range files {
		size := ""
		if f.Size != nil && f.Type != "directory" {
			size = formatSize(*f.Size)
		}
		modified := ""
		if !f.LastModified.IsZero() {
			modified = f.LastModified.Format("2006-01-02 15:04:05")
		}
		t.rows = append(t.rows, []string{f.Path, f.Type, size, modified})
	}
	return t
}

// formatSize is the reference's human-readable size.
func formatSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
	}
}

func (s *Server) listKernels(ctx context.Context, _ *call, _ noArgs) (*answer, error) {
	kernels, err := s.e.ListKernels(ctx)
	if err != nil {
		return nil, err
	}
	return rows("", kernelsTable(kernels), "No kernels found on the Jupyter server."), nil
}

// kernelsTable is the list_kernels table. The reference's eight columns keep
// their places; Language comes from the kernel spec; Environment (which the
// reference fills only for some providers) says "unknown", as the reference
// does when it cannot tell. Notebooks (the notebooks in use on the kernel)
// is added last.
func kernelsTable(kernels []engine.KernelInfo) table {
	t := table{columns: []string{"ID", "Name", "Display_Name", "Language", "State", "Connections", "Last_Activity", "Environment", "Notebooks"}}
	for _, k := range kernels {
		display := k.DisplayName
		if display == "" {
			display = "unknown"
		}
		state := k.State
		if state == "" {
			state = "unknown"
		}
		last := "unknown"
		if !k.LastActivity.IsZero() {
			last = k.LastActivity.Format("2006-01-02 15:04:05")
		}
		lang := k.Language
		if lang == "" {
			lang = "unknown"
		}
		nbs := strings.Join(k.Notebooks, ", ")
		if nbs == "" {
			nbs = "-"
		}
		t.rows = append(t.rows, []string{k.ID, k.Name, display, lang, state, fmt.Sprint(k.Connections), last, "unknown", nbs})
	}
	return t
}

type connectIn struct {
	JupyterURL       string  `json:"jupyter_url" jsonschema:"Jupyter server URL to connect to (e.g., 'http://localhost:8888')"`
	JupyterToken     *string `json:"jupyter_token,omitempty" jsonschema:"Jupyter server authentication token"`
	DocumentProvider string  `json:"document_provider,omitempty" jsonschema:"Which backend holds the notebook documents"`
}

func patchConnect(p patcher) {
	nullable(p.get("jupyter_token"))
	def(p.get("document_provider"), "jupyter")
}

// connectToJupyter switches servers. Only the "jupyter" document provider
// exists here (documents are read through the Jupyter Contents API), so any
// other value is refused rather than silently ignored.
func (s *Server) connectToJupyter(ctx context.Context, c *call, in connectIn) (*answer, error) {
	if in.DocumentProvider != "" && in.DocumentProvider != "jupyter" {
		return nil, engine.Userf("document_provider %q is not supported: this server reads notebooks through the Jupyter Contents API, so use \"jupyter\" (the default).", in.DocumentProvider)
	}
	sw, err := s.e.ConnectJupyter(ctx, c.session, in.JupyterURL, deref(in.JupyterToken))
	if err != nil {
		return nil, err
	}
	return message(redact(textConnected(sw))), nil
}
