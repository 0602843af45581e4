package mcp

// The edges of the arguments: bounds on timeouts, paths that leave the root,
// control characters in names, and what Jupyter's own errors reveal.

import (
	"testing"
)

func TestTimeoutsAreBounded(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("bounds.ipynb", "1 + 1")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "bounds", "notebook_path": path})
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"execute_code", map[string]any{"code": "1", "timeout": -1}, "timeout"},
		{"execute_code", map[string]any{"code": "1", "timeout": 1e15}, "timeout"},
		{"execute_code", map[string]any{"code": "1", "progress_interval": -5}, "progress_interval"},
		{"execute_code", map[string]any{"code": "1", "progress_interval": 1e15}, "progress_interval"},
		{"execute_cell", map[string]any{"cell_index": 0, "timeout": -3}, "timeout"},
		{"execute_cell", map[string]any{"cell_index": 0, "progress_interval": 86401}, "progress_interval"},
		{"insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": "2", "timeout": 1e15}, "timeout"},
		{"launch_sandbox", map[string]any{"sandbox_name": "big", "timeout": 1e15}, "timeout"},
	} {
		fails(t, cs, c.tool, c.args, c.want)
	}
	// The bounds themselves are accepted; 0 keeps meaning the default.
	ok(t, cs, "execute_code", map[string]any{"code": "1", "timeout": 0, "progress_interval": 0})
	ok(t, cs, "execute_cell", map[string]any{"cell_index": 0, "timeout": MaxTimeoutSeconds, "progress_interval": MaxTimeoutSeconds})
}
