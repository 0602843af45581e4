package mcp

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/sandbox"
)

// TestAgentText shows, for each typed engine error, what the agent reads
// from the tools where the wording depends on the tool.
func TestAgentText(t *testing.T) {
	t.Parallel()
	noCurrent := &engine.NoNotebookError{InUse: []string{"a", "b"}}
	cases := []struct {
		tool string
		err  error
		want string
	}{
		// Which notebook.
		{"read_cell", noCurrent, "this session has no current notebook; pass notebook_name, or call use_notebook first (in use: a, b)"},
		{"execute_cell", &engine.NoNotebookError{Closed: &engine.ClosedNotice{Notebook: "nb", By: engine.SessionRef{ID: "4MVH2K1X", Client: "agent-b 1"}, Cause: engine.ClosedByUnuse, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
			"this session has no current notebook (session 4MVH2K1X (agent-b 1) closed its notebook 'nb' at 03:04:05 UTC with unuse_notebook); call use_notebook first to open one (or to make one in use current) (no notebooks are in use)"},
		{"read_cell", &engine.NoNotebookError{Name: "nb", Closed: &engine.ClosedNotice{Notebook: "nb", By: engine.SessionRef{ID: "s1"}, Cause: engine.ClosedBySwitch, Server: "http://h:8888/", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
			`notebook "nb" is not connected: no notebook of that name is in use (session s1 closed its notebook 'nb' at 03:04:05 UTC by switching to the Jupyter server at http://h:8888/); call use_notebook first (no notebooks are in use)`},
		{"execute_cell", noCurrent, "this session has no current notebook; call use_notebook first to open one (or to make one in use current) (in use: a, b)"},
		{"execute_code", &engine.NoNotebookError{}, "execute_code needs a kernel: this session has no current notebook (no notebooks are in use). Call use_notebook first, or pass kernel_id (list_kernels shows the running kernels)"},
		{"insert_cell", &engine.NoNotebookError{Name: "ghost", InUse: []string{"nb"}}, `notebook "ghost" is not connected: no notebook of that name is in use; call use_notebook first (in use: nb)`},
		{"", &engine.NoNotebookError{Name: "ghost"}, `notebook "ghost" is not connected: no notebook of that name is in use; call use_notebook first (no notebooks are in use)`},

		// Which cell.
		{"read_cell", &engine.CellIndexError{Notebook: "nb", Index: 5, Count: 3}, `cell_index 5 is out of range: notebook "nb" has 3 cells (valid indices 0-2)`},
		{"read_cell", &engine.CellIndexError{Notebook: "nb", Index: 0, Count: 0}, `cell_index 0 is out of range: notebook "nb" has no cells`},
		{"insert_cell", &engine.CellIndexError{Notebook: "nb", Index: 7, Count: 3, Insert: true}, `cell_index 7 is out of range for an insert: notebook "nb" has 3 cells (valid 0-3, or -1 to append)`},
		{"move_cell", &engine.CellIndexError{Notebook: "nb", Index: 4, Count: 3, Role: engine.RoleTarget}, `target_index 4 is out of range: notebook "nb" has 3 cells (valid indices 0-2)`},
		{"move_cell", &engine.CellIndexError{Notebook: "nb", Index: 9, Count: 3, Role: engine.RoleSource}, `source_index 9 is out of range: notebook "nb" has 3 cells (valid indices 0-2)`},
		{"delete_cell", &engine.CellIndexError{Notebook: "nb", Index: 8, Count: 3}, `cell_indices 8 is out of range: notebook "nb" has 3 cells (valid indices 0-2); nothing was deleted`},
		{"read_cell", &engine.CellIDError{Notebook: "nb", ID: "x1"}, `no cell with id "x1" in notebook "nb"; read_notebook lists the cell ids`},
		{"move_cell", &engine.CellIDError{Notebook: "nb", ID: "x1", Role: engine.RoleTarget}, `target_cell_id: no cell with id "x1" in notebook "nb"; read_notebook lists the cell ids`},
		{"delete_cell", &engine.CellIDError{Notebook: "nb", ID: "x1"}, `no cell with id "x1" in notebook "nb"; nothing was deleted; read_notebook lists the cell ids`},
		{"", &engine.CellIDError{Notebook: "nb", ID: "x1"}, `no cell with id "x1" in notebook "nb"; read_notebook lists the cell ids`},
		{"clear_cell_output", &engine.NoCellError{}, "say which cell: pass cell_index or cell_id"},
		{"move_cell", &engine.NoCellError{Role: engine.RoleSource}, "say which cell to move: pass source_index or source_cell_id"},
		{"move_cell", &engine.NoCellError{Role: engine.RoleTarget}, "say where to move the cell: pass target_index or target_cell_id"},
		{"delete_cell", &engine.NoCellError{Several: true}, "say which cells to delete: pass cell_indices or cell_ids_to_delete"},
		{"insert_cell", &engine.CellTypeError{Type: "sql"}, `cell_type "sql" is not valid: use "code", "markdown" or "raw"`},
		{"read_notebook", &engine.StartIndexError{Notebook: "nb", Start: -1, Count: 3}, "start_index -1 is negative: cells are numbered from 0"},
		{"read_notebook", &engine.StartIndexError{Notebook: "nb", Start: 5, Count: 3}, `start_index 5 is past the end: notebook "nb" has 3 cells (valid start 0-2)`},

		// Edits.
		{"edit_cell_source", &engine.EditError{Problem: engine.EditEmptyOld}, "old_string is empty: pass the exact text to replace (read_cell shows the source), or use overwrite_cell_source to replace the whole cell"},
		{"edit_cell_source", &engine.EditError{Problem: engine.EditNotFound, Index: 1, CellID: "c"}, `old_string was not found: cell 1 (id "c") is empty; use overwrite_cell_source to give it a source`},
		{"edit_cell_source", &engine.EditError{Problem: engine.EditNotFound, Index: 1, CellID: "c", Source: "a = 1"}, `old_string was not found in cell 1 (id "c"). Matching is literal, including whitespace and line breaks; read_cell shows the exact source, which begins: "a = 1"`},
		{"edit_cell_source", &engine.EditError{Problem: engine.EditAmbiguous, Index: 0, CellID: "c", Count: 2}, `old_string occurs 2 times in cell 0 (id "c"); pass replace_all=true to replace every occurrence, or include more of the surrounding text so that it matches exactly once`},

		// Opening notebooks.
		{"use_notebook", &engine.RequiredError{Field: engine.FieldNotebookName}, "notebook_name is required: a short name of your choice to refer to this notebook in later calls"},
		{"use_notebook", &engine.RequiredError{Field: engine.FieldNotebookPath}, `notebook_path is required: the notebook's path relative to the Jupyter root, e.g. "analysis.ipynb"`},
		{"connect_to_jupyter", &engine.RequiredError{Field: engine.FieldJupyterURL}, `jupyter_url is required, e.g. "http://localhost:8888"`},
		{"launch_sandbox", &engine.RequiredError{Field: engine.FieldSandboxName}, "sandbox_name is required: name the sandbox, then use that name with use_sandbox, list_sandboxes and terminate_sandbox"},
		{"use_notebook", &engine.NotebookPathError{Path: "/", Root: true}, `notebook_path "/" names the root directory, not a notebook`},
		{"use_notebook", &engine.NotebookPathError{Path: "a.txt"}, `notebook_path "a.txt" must end in .ipynb to create a notebook`},
		{"use_notebook", &engine.ModeError{Mode: "open"}, `mode "open" is not valid: use "connect" to open an existing notebook or "create" to make a new one`},
		{"use_notebook", &engine.NotebookExistsError{Path: "a.ipynb"}, `"a.ipynb" already exists; pass mode "connect" to open it, or choose another path to create a new notebook`},
		{"use_notebook", &engine.NoFileError{Path: "a.ipynb"}, `"a.ipynb" not found on the Jupyter server; check the path with list_files, or pass mode "create" to create a new notebook there`},
		{"list_files", &engine.NoFileError{Path: "data"}, `there is no file or directory "data" on the Jupyter server; list_files with an empty path lists the root`},
		{"use_notebook", &engine.NameInUseError{Name: "nb", Path: "a.ipynb", Want: "b.ipynb"}, `the name "nb" is already in use for "a.ipynb"; call unuse_notebook "nb" first, or choose another name for "b.ipynb"`},
		{"use_notebook", &engine.KernelMismatchError{Notebook: "nb", Kernel: "k1", Want: "k2"}, `notebook "nb" is already in use on kernel k1; to move it to kernel k2, call unuse_notebook "nb" and then use_notebook with that kernel_id`},
		{"use_notebook", &engine.ServerSwitchedError{Path: "a.ipynb"}, `the Jupyter server was switched while "a.ipynb" was being opened; call use_notebook again`},
		{"overwrite_cell_source", &engine.NotebookReloadedError{Notebook: "nb"}, `notebook "nb" was changed on disk by someone else and has been reloaded; cell indices may have moved, so nothing was changed. Read it again (read_notebook) and retry, or address the cell by cell_id`},
		{"move_cell", &engine.NotebookReloadedError{Notebook: "nb"}, `notebook "nb" was changed on disk by someone else and has been reloaded; cell indices may have moved, so nothing was changed. Read it again (read_notebook) and retry, or address the cell by source_cell_id and target_cell_id`},
		{"delete_cell", &engine.NotebookReloadedError{Notebook: "nb"}, `notebook "nb" was changed on disk by someone else and has been reloaded; cell indices may have moved, so nothing was changed. Read it again (read_notebook) and retry, or address the cell by cell_ids_to_delete`},
		{"insert_cell", &engine.NotebookReloadedError{Notebook: "nb"}, `notebook "nb" was changed on disk by someone else and has been reloaded; cell indices may have moved, so nothing was changed. Read it again (read_notebook) and retry`},
		{"read_cell", &engine.NotebookFileGoneError{Notebook: "nb", Path: "a.ipynb"}, `the file "a.ipynb" of notebook "nb" no longer exists on the Jupyter server; call unuse_notebook "nb", or use_notebook with mode "create" to make it again`},
		{"list_files", &engine.PatternError{Pattern: "[a"}, `pattern "[a" is not a valid glob (use *, **, ?, [abc] and {a,b})`},
		{"read_notebook", &engine.LimitError{Limit: -1}, "limit -1 is negative: pass 0 for all cells or a positive count"},
		{"list_files", &engine.DepthError{Depth: 4, Max: 3}, "max_depth 4 is out of range: use 0 (only the entries of path) to 3"},

		// Kernels.
		{"execute_code", &engine.UnknownKernelError{KernelID: "k9"}, `kernel "k9" not found on the Jupyter server; list_kernels shows the running kernels`},
		{"use_notebook", &engine.UnknownKernelError{KernelID: "k9"}, `kernel "k9" not found on the Jupyter server; list_kernels shows the running kernels, or leave kernel_id unset to start a new kernel`},
		{"execute_cell", &engine.KernelLostError{KernelID: "k1", Notebook: "nb", What: event.KernelDied, During: true, Index: 0, CellID: "c"}, `the kernel died while running cell 0 (id "c") of notebook "nb" (its state is lost). Call restart_notebook to start a fresh kernel; outputs printed before it died are in the cell`},
		{"execute_code", &engine.KernelLostError{KernelID: "k1", What: event.KernelDied, During: true}, "kernel k1 died while running the code (its state is lost). Restart it with restart_notebook on the notebook that uses it"},

		// Sandboxes.
		{"launch_sandbox", &engine.SandboxExistsError{Name: "py", Variant: "eval", ID: "sbx-1"}, `a sandbox named "py" is already launched (eval, sbx-1); pick another sandbox_name, or terminate_sandbox "py" first`},
		{"launch_sandbox", &engine.SandboxExistsError{Name: "py", Launching: true}, `a sandbox named "py" is being launched right now; pick another sandbox_name`},
		{"use_sandbox", &engine.UnknownSandboxError{Name: "x", Names: []string{"py"}}, `no sandbox is named "x": the launched sandboxes are "py"; pass an empty sandbox_name to go back to Jupyter kernels`},
		{"terminate_sandbox", &engine.UnknownSandboxError{Name: "x"}, `no sandbox is named "x": no sandbox is launched (launch_sandbox starts one)`},
		{"use_sandbox", &engine.SandboxDownError{Name: "py", Variant: "eval", Failed: true}, `sandbox "py" has failed (its Python process died) and cannot run code; terminate_sandbox it and launch a new one`},
		{"execute_code", &engine.SandboxDownError{Name: "py", Variant: "eval", State: "terminated"}, `sandbox "py" is terminated and cannot run code; terminate_sandbox it and launch a new one, or call use_sandbox with an empty name to go back to Jupyter kernels`},
		{"use_notebook", &engine.SandboxNotKernelError{Name: "py", Variant: "eval"}, `sandbox "py" (variant eval) cannot host a notebook: only a jupyter-server sandbox is a Jupyter kernel a notebook can attach to; use use_sandbox to route execute_code to it instead`},
		{"launch_sandbox", &engine.SandboxServerError{}, "the jupyter-server variant needs a Jupyter server: none is connected; pass server_url (and token), or use the eval variant"},
		{"launch_sandbox", &engine.SandboxServerError{Err: errors.New("refused the token")}, "cannot use the Jupyter server at server_url for the sandbox: refused the token"},
		{"launch_sandbox", &sandbox.ArgRefusedError{Variant: "eval", Arg: sandbox.ArgGPU, Value: "T4", Takers: []string{"kaggle", "modal"}}, `the eval variant has no GPU, so gpu="T4" is refused rather than run on a CPU: only kaggle, modal take a gpu; leave gpu unset for eval`},
		{"launch_sandbox", &sandbox.ArgRefusedError{Variant: "eval", Arg: sandbox.ArgEnvironmentVersion, Value: "3"}, `only the datalayer variant has environment versions, so environment_version="3" is refused for eval; leave it unset`},
		{"launch_sandbox", &sandbox.ArgRefusedError{Variant: "eval", Arg: sandbox.ArgSnapshot, Value: "s"}, `only the datalayer variant has snapshots, so snapshot_name="s" is refused for eval rather than started empty; leave it unset`},
		{"launch_sandbox", &engine.SandboxTimeoutError{Timeout: 500 * time.Millisecond}, "timeout must be at least 1 second (it is the sandbox's default execution timeout); got 500ms"},
		{"launch_sandbox", &engine.SandboxTimeoutError{Timeout: 2 * time.Hour, Max: time.Hour}, "timeout 2h0m0s is above this server's longest execution timeout, 1h0m0s; pass at most 3600"},
		{"launch_sandbox", &sandbox.NoKernelSpecError{Server: "http://h/", Spec: "cobol", Specs: []string{"python3"}}, `the Jupyter server at http://h/ has no kernel spec "cobol" (for the jupyter-server variant, environment names the kernel spec); its kernel specs are "python3"`},
		{"launch_sandbox", &sandbox.NoKernelError{KernelID: "k9", Server: "http://h/"}, "there is no kernel k9 on the Jupyter server at http://h/; leave kernel_id unset to start a new one"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%T", c.tool, c.err), func(t *testing.T) {
			if !engine.IsUserError(c.err) {
				t.Fatalf("%T is not a user error", c.err)
			}
			if got := agentText(c.tool, c.err); got != c.want {
				t.Errorf("agentText(%q, %T)\n got %s\nwant %s", c.tool, c.err, got, c.want)
			}
			// Wrapped on its way out, the error is still recognised.
			if got := agentText(c.tool, fmt.Errorf("context: %w", c.err)); got != c.want {
				t.Errorf("wrapped: got %s", got)
			}
			// The engine's own text never names the tool.
			if msg := c.err.Error(); c.tool != "" && containsWord(msg, c.tool) {
				t.Errorf("the engine's text names the tool: %s", msg)
			}
		})
	}
}

// TestAgentTextFallback: an error no wording knows keeps its own text.
func TestAgentTextFallback(t *testing.T) {
	t.Parallel()
	if got := agentText("read_cell", engine.Userf("output index 3 is out of range")); got != "output index 3 is out of range" {
		t.Errorf("user error: %q", got)
	}
	if got := agentText("read_cell", io.ErrUnexpectedEOF); got != io.ErrUnexpectedEOF.Error() {
		t.Errorf("other error: %q", got)
	}
	for _, w := range wordings() {
		if _, ok := w("read_cell", io.ErrUnexpectedEOF); ok {
			t.Errorf("a wording claims an error it does not know")
		}
	}
}

// TestErrorResultWords: the tool-error path uses the wording of the tool
// being called, after the reference's "Error executing tool NAME: ", by
// which its clients tell a failed call.
func TestErrorResultWords(t *testing.T) {
	t.Parallel()
	err := &engine.NoCellError{Role: engine.RoleTarget}
	res := errorResult("move_cell", err)
	if !res.IsError || contentText(res.Content) != "Error executing tool move_cell: say where to move the cell: pass target_index or target_cell_id" {
		t.Errorf("errorResult = %v %q", res.IsError, contentText(res.Content))
	}
}

func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w && (i == 0 || !isWordByte(s[i-1])) && (i+len(w) == len(s) || !isWordByte(s[i+len(w)])) {
			return true
		}
	}
	return false
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
