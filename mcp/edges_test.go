package mcp

// The edges of the arguments: bounds on timeouts, paths that leave the root,
// control characters in names, and what Jupyter's own errors reveal.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

// Paths and names are refused as written, saying why, instead of being
// rewritten or sent to Jupyter to fail as a "server error"; Jupyter's own
// path faults read as argument errors and never show the server's root; a
// missing kernel is not answered with the list of everyone's kernels.
func TestPathsAndNamesAreRefusedAsWritten(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	root := h.srv.RootDir
	text, _, _ := ok(t, cs, "use_notebook", map[string]any{"notebook_name": "edges", "notebook_path": h.dir + "/edges.ipynb", "mode": "create"})
	kernel := regexp.MustCompile(`kernel '([0-9a-f-]{36})'`).FindStringSubmatch(text)
	if kernel == nil {
		t.Fatalf("no kernel id in %q", text)
	}
	escape := "h8-escape-" + strings.ReplaceAll(h.dir, "/", "-") + ".ipynb"
	use := func(name, path string) map[string]any {
		return map[string]any{"notebook_name": name, "notebook_path": path, "mode": "create"}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"use_notebook", use("up", "../"+escape), `notebook_path "../` + escape + `" leaves the Jupyter server's root directory`},
		{"use_notebook", use("up2", h.dir+"/../../"+escape), "leaves the Jupyter server's root directory"},
		{"use_notebook", use("abs", "/abs/"+escape), `notebook_path "/abs/` + escape + `" is absolute`},
		{"use_notebook", use("nul", h.dir+"/a\x00b.ipynb"), `notebook_path "` + h.dir + `/a\x00b.ipynb" holds a control character`},
		{"use_notebook", use("nl", h.dir+"/a\nb.ipynb"), `a\nb.ipynb" holds a control character`},
		{"use_notebook", use("esc\x1b[2J", h.dir+"/esc.ipynb"), `notebook_name "esc\x1b[2J" holds a control character`},
		{"use_notebook", use("long", h.dir+"/"+strings.Repeat("a", 300)+".ipynb"), "has a part longer than 255 bytes"},
		{"use_notebook", use("nodir", h.dir+"/nodir/x.ipynb"), "does not exist on the Jupyter server"},
		{"use_notebook", map[string]any{"notebook_name": "k", "notebook_path": h.dir + "/k.ipynb", "mode": "create", "kernel_id": "no-such-kernel"}, `kernel "no-such-kernel" not found on the Jupyter server; list_kernels shows the running kernels`},
		{"execute_code", map[string]any{"code": "1", "kernel_id": "no-such-kernel"}, "list_kernels shows the running kernels"},
		{"execute_code", map[string]any{"code": "1", "kernel_id": "a\x00b"}, `"kernels/a\x00b" holds a control character`},
		{"list_files", map[string]any{"path": "../"}, `path "../" leaves the Jupyter server's root directory`},
		{"list_files", map[string]any{"path": "/etc"}, `path "/etc" is absolute`},
		{"launch_sandbox", map[string]any{"sandbox_name": "a\nb", "variant": "eval"}, `sandbox_name "a\nb" holds a control character`},
	} {
		text := fails(t, cs, c.tool, c.args, c.want)
		if strings.Contains(text, root) {
			t.Errorf("%s: the answer shows the server's root %s: %q", c.tool, root, text)
		}
		if strings.Contains(text, kernel[1]) {
			t.Errorf("%s: the answer lists a running kernel: %q", c.tool, text)
		}
		if !strings.HasPrefix(text, "Error executing tool "+c.tool+": ") {
			t.Errorf("%s: the answer does not lead with the reference's prefix: %q", c.tool, text)
		}
		if strings.Contains(strings.ToLower(text), "server error") {
			t.Errorf("%s: an argument fault reads as a server failure: %q", c.tool, text)
		}
	}
	if _, err := os.Stat(filepath.Join(root, escape)); err == nil {
		t.Errorf("a path leaving the root created %s at the root", escape)
	}
	if _, err := os.Stat(filepath.Join(root, "abs")); err == nil {
		t.Errorf("an absolute path created abs/ at the root")
	}
	// "/" still names the root for list_files.
	ok(t, cs, "list_files", map[string]any{"path": "/"})
}
