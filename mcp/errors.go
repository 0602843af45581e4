package mcp

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/sandbox"
)

// The engine's errors carry facts and neutral sentences; this is where they
// become what an agent reads: the same facts, plus which tool or argument
// fixes the problem. Only mcp/ names tools and arguments (a test in engine/
// keeps them out of the engine).
//
// A wording turns the errors it knows into the agent's sentence for the
// tool being called (tool is "" for resource and prompt reads) and answers
// false for every other error. agentText tries the wordings in order and
// falls back to the error's own text. To word new engine errors, write a
// wording in a file of its topic (mcp/errors_<topic>.go) and add it to
// wordings. Use errors.As / errors.Is, so that an error wrapped on its way
// out of the engine is still recognised.
type wording func(tool string, err error) (string, bool)

// wordings are every wording, in the order agentText tries them; the
// first that knows the error wins.
func wordings() []wording {
	return []wording{
		wordNotebookErrors, // errors.go
		wordCellErrors,
		wordKernelErrors,
		wordSandboxErrors,
		wordArgumentErrors, // errors_args.go
		wordJupyterErrors,  // errors_jupyter.go
		wordKernelLosses,   // errors_kernel.go
		wordSaveErrors,     // errors_save.go
	}
}

// agentText is the sentence the agent reads for err, a problem it can fix,
// from the tool named tool.
func agentText(tool string, err error) string {
	for _, w := range wordings() {
		if text, ok := w(tool, err); ok {
			return text
		}
	}
	return err.Error()
}

// toolArgs maps each tool to the names of its arguments, so that a text
// names only arguments the tool being called takes. It is made on first
// use: made by a variable's initializer, it would be an initialization
// cycle with the wordings, which reach it through takes.
func toolArgs() map[string]map[string]bool {
	argsOnce.Do(func() {
		argNames = map[string]map[string]bool{}
		for _, d := range allTools() {
			names := map[string]bool{}
			if d.input != nil {
				for name := range d.input.Properties {
					names[name] = true
				}
			}
			argNames[d.name] = names
		}
	})
	return argNames
}

var (
	argsOnce sync.Once
	argNames map[string]map[string]bool // toolArgs
)

// takes reports whether tool has the argument arg.
func takes(tool, arg string) bool { return toolArgs()[tool][arg] }

// as is errors.As with the target made here.
func as[T error](err error) (T, bool) {
	var t T
	ok := errors.As(err, &t)
	return t, ok
}

// wordNotebookErrors words the errors about which notebook a call means and
// opening one.
func wordNotebookErrors(tool string, err error) (string, bool) {
	if e, ok := as[*engine.NoNotebookError](err); ok {
		inUse := e.InUseClause()
		closed := closedClause(e.Closed)
		switch {
		case tool == "execute_code":
			return "execute_code needs a kernel: this session has no current notebook" + closed + inUse + ". Call use_notebook first, or pass kernel_id (list_kernels shows the running kernels)", true
		case e.Name != "":
			// "not connected" is the reference's word for it, which its
			// clients look for.
			return fmt.Sprintf("notebook %q is not connected: no notebook of that name is in use%s; call use_notebook first%s", e.Name, closed, inUse), true
		case takes(tool, "notebook_name") || tool == "":
			return "this session has no current notebook" + closed + "; pass notebook_name, or call use_notebook first" + inUse, true
		}
		// execute_cell and insert_execute_code_cell act on the current
		// notebook only.
		return "this session has no current notebook" + closed + "; call use_notebook first to open one (or to make one in use current)" + inUse, true
	}
	if e, ok := as[*engine.RequiredError](err); ok {
		switch e.Field {
		case engine.FieldNotebookName:
			return "notebook_name is required: a short name of your choice to refer to this notebook in later calls", true
		case engine.FieldNotebookPath:
			return `notebook_path is required: the notebook's path relative to the Jupyter root, e.g. "analysis.ipynb"`, true
		case engine.FieldKernelID:
			return "kernel_id is required: list_kernels shows the running kernels", true
		case engine.FieldJupyterURL:
			return `jupyter_url is required, e.g. "http://localhost:8888"`, true
		case engine.FieldSandboxName:
			return "sandbox_name is required: name the sandbox, then use that name with use_sandbox, list_sandboxes and terminate_sandbox", true
		}
		return e.Error(), true
	}
	if e, ok := as[*engine.NotebookPathError](err); ok {
		if e.Root {
			return fmt.Sprintf("notebook_path %q names the root directory, not a notebook", e.Path), true
		}
		return fmt.Sprintf("notebook_path %q must end in .ipynb to create a notebook", e.Path), true
	}
	if e, ok := as[*engine.ModeError](err); ok {
		return fmt.Sprintf(`mode %q is not valid: use "connect" to open an existing notebook or "create" to make a new one`, e.Mode), true
	}
	if e, ok := as[*engine.NotebookExistsError](err); ok {
		return fmt.Sprintf(`%q already exists; pass mode "connect" to open it, or choose another path to create a new notebook`, e.Path), true
	}
	if e, ok := as[*engine.NoFileError](err); ok {
		switch tool {
		case "use_notebook":
			return fmt.Sprintf(`%q not found on the Jupyter server; check the path with list_files, or pass mode "create" to create a new notebook there`, e.Path), true
		case "list_files":
			return fmt.Sprintf("there is no file or directory %q on the Jupyter server; list_files with an empty path lists the root", e.Path), true
		}
		return e.Error() + "; list_files shows what there is", true
	}
	if e, ok := as[*engine.NameInUseError](err); ok {
		return fmt.Sprintf("the name %q is already in use for %q; call unuse_notebook %q first, or choose another name for %q", e.Name, e.Path, e.Name, e.Want), true
	}
	if e, ok := as[*engine.KernelMismatchError](err); ok {
		return fmt.Sprintf("notebook %q is already in use on kernel %s; to move it to kernel %s, call unuse_notebook %q and then use_notebook with that kernel_id", e.Notebook, e.Kernel, e.Want, e.Notebook), true
	}
	if e, ok := as[*engine.ServerSwitchedError](err); ok {
		return fmt.Sprintf("the Jupyter server was switched while %q was being opened; call use_notebook again", e.Path), true
	}
	if e, ok := as[*engine.NotebookReloadedError](err); ok {
		text := e.Error() + ". Read it again (read_notebook) and retry"
		if by := idArgs(tool); by != "" {
			text += ", or address the cell by " + by
		}
		return text, true
	}
	if e, ok := as[*engine.NotebookFileGoneError](err); ok {
		return fmt.Sprintf(`%s; call unuse_notebook %q, or use_notebook with mode "create" to make it again`, e.Error(), e.Notebook), true
	}
	if e, ok := as[*engine.PatternError](err); ok {
		return fmt.Sprintf("pattern %q is not a valid glob (use *, **, ?, [abc] and {a,b})", e.Pattern), true
	}
	if e, ok := as[*engine.DepthError](err); ok {
		return fmt.Sprintf("max_depth %d is out of range: use 0 (only the entries of path) to %d", e.Depth, e.Max), true
	}
	return "", false
}

// closedClause says how another session closed the notebook this session
// was using ("" when none did).
func closedClause(n *engine.ClosedNotice) string {
	if n == nil {
		return ""
	}
	how := "with unuse_notebook"
	if n.Cause == engine.ClosedBySwitch {
		how = "by switching to the Jupyter server at " + redact(n.Server)
	}
	return fmt.Sprintf(" (session %s closed its notebook '%s' at %s %s)", n.By, n.Notebook, n.At.UTC().Format("15:04:05 UTC"), how)
}

// idArgs names the arguments by which tool addresses cells by id ("" when
// it addresses them only by index).
func idArgs(tool string) string {
	switch {
	case takes(tool, "source_cell_id"):
		return "source_cell_id and target_cell_id"
	case takes(tool, "cell_ids_to_delete"):
		return "cell_ids_to_delete"
	case takes(tool, "cell_id"):
		return "cell_id"
	}
	return ""
}

// cellArgs are the index and id arguments for a cell of role in tool.
func cellArgs(tool string, role engine.CellRole) (index, id string) {
	switch role {
	case engine.RoleSource:
		return "source_index", "source_cell_id"
	case engine.RoleTarget:
		return "target_index", "target_cell_id"
	}
	if takes(tool, "cell_ids_to_delete") {
		return "cell_indices", "cell_ids_to_delete"
	}
	return "cell_index", "cell_id"
}

// wordCellErrors words the errors about which cell a call means and what it
// does to it.
func wordCellErrors(tool string, err error) (string, bool) {
	// delete_cell checks every cell before deleting any.
	nothingDone := ""
	if tool == "delete_cell" {
		nothingDone = "; nothing was deleted"
	}
	if e, ok := as[*engine.CellIndexError](err); ok {
		what := "cell index"
		if arg, _ := cellArgs(tool, e.Role); takes(tool, arg) {
			what = arg
		}
		var text string
		switch {
		case e.Insert:
			text = fmt.Sprintf("%s %d is out of range for an insert: notebook %q has %d cells (valid 0-%d, or -1 to append)", what, e.Index, e.Notebook, e.Count, e.Count)
		case e.Count == 0:
			text = fmt.Sprintf("%s %d is out of range: notebook %q has no cells", what, e.Index, e.Notebook)
		default:
			text = fmt.Sprintf("%s %d is out of range: notebook %q has %d cells (valid indices 0-%d)", what, e.Index, e.Notebook, e.Count, e.Count-1)
		}
		return text + nothingDone, true
	}
	if e, ok := as[*engine.CellIDError](err); ok {
		text := fmt.Sprintf("no cell with id %q in notebook %q", e.ID, e.Notebook)
		if _, arg := cellArgs(tool, e.Role); e.Role != engine.RoleCell && takes(tool, arg) {
			text = arg + ": " + text
		}
		return text + nothingDone + "; read_notebook lists the cell ids", true
	}
	if e, ok := as[*engine.NoCellError](err); ok {
		index, id := cellArgs(tool, e.Role)
		switch {
		case e.Several:
			return fmt.Sprintf("say which cells to delete: pass %s or %s", index, id), true
		case e.Role == engine.RoleSource:
			return fmt.Sprintf("say which cell to move: pass %s or %s", index, id), true
		case e.Role == engine.RoleTarget:
			return fmt.Sprintf("say where to move the cell: pass %s or %s", index, id), true
		}
		return fmt.Sprintf("say which cell: pass %s or %s", index, id), true
	}
	if e, ok := as[*engine.CellTypeError](err); ok {
		return fmt.Sprintf(`cell_type %q is not valid: use "code", "markdown" or "raw"`, e.Type), true
	}
	if e, ok := as[*engine.LimitError](err); ok {
		return fmt.Sprintf("limit %d is negative: pass 0 for all cells or a positive count", e.Limit), true
	}
	if e, ok := as[*engine.StartIndexError](err); ok {
		if e.Start < 0 {
			return fmt.Sprintf("start_index %d is negative: cells are numbered from 0", e.Start), true
		}
		return fmt.Sprintf("start_index %d is past the end: notebook %q has %d cells (valid start 0-%d)", e.Start, e.Notebook, e.Count, max(e.Count-1, 0)), true
	}
	if e, ok := as[*engine.EditError](err); ok {
		switch e.Problem {
		case engine.EditEmptyOld:
			return "old_string is empty: pass the exact text to replace (read_cell shows the source), or use overwrite_cell_source to replace the whole cell", true
		case engine.EditNotFound:
			if e.Source == "" {
				return fmt.Sprintf("old_string was not found: cell %d (id %q) is empty; use overwrite_cell_source to give it a source", e.Index, e.CellID), true
			}
			return fmt.Sprintf("old_string was not found in cell %d (id %q). Matching is literal, including whitespace and line breaks; read_cell shows the exact source, which begins: %q", e.Index, e.CellID, e.Source), true
		}
		return fmt.Sprintf("old_string occurs %d times in cell %d (id %q); pass replace_all=true to replace every occurrence, or include more of the surrounding text so that it matches exactly once", e.Count, e.Index, e.CellID), true
	}
	return "", false
}

// wordKernelErrors words the errors about kernels.
func wordKernelErrors(tool string, err error) (string, bool) {
	if e, ok := as[*engine.UnknownKernelError](err); ok {
		text := e.Error() + "; list_kernels shows the running kernels"
		if tool == "use_notebook" {
			text += ", or leave kernel_id unset to start a new kernel"
		}
		return text, true
	}
	return "", false
}

// wordSandboxErrors words the errors about code sandboxes.
func wordSandboxErrors(tool string, err error) (string, bool) {
	if e, ok := as[*engine.SandboxExistsError](err); ok {
		if e.Launching {
			return e.Error() + "; pick another sandbox_name", true
		}
		return fmt.Sprintf("%s; pick another sandbox_name, or terminate_sandbox %q first", e.Error(), e.Name), true
	}
	if e, ok := as[*engine.UnknownSandboxError](err); ok {
		launched := e.Launched()
		if len(e.Names) == 0 {
			launched += " (launch_sandbox starts one)"
		}
		text := fmt.Sprintf("no sandbox is named %q: %s", e.Name, launched)
		if tool == "use_sandbox" {
			text += "; pass an empty sandbox_name to go back to Jupyter kernels"
		}
		return text, true
	}
	if e, ok := as[*engine.SandboxDownError](err); ok {
		text := e.Error() + "; terminate_sandbox it and launch a new one"
		if !e.Failed {
			text += ", or call use_sandbox with an empty name to go back to Jupyter kernels"
		}
		return text, true
	}
	if e, ok := as[*engine.SandboxNotKernelError](err); ok {
		return e.Error() + "; use use_sandbox to route execute_code to it instead", true
	}
	if e, ok := as[*engine.SandboxServerError](err); ok {
		if e.Err == nil {
			return e.Error() + "; pass server_url (and token), or use the eval variant", true
		}
		return fmt.Sprintf("cannot use the Jupyter server at server_url for the sandbox: %v", e.Err), true
	}
	if e, ok := as[*sandbox.ArgRefusedError](err); ok {
		switch e.Arg {
		case sandbox.ArgGPU:
			return fmt.Sprintf("the %s variant has no GPU, so gpu=%q is refused rather than run on a CPU: only %s take a gpu; leave gpu unset for %s",
				e.Variant, e.Value, strings.Join(e.Takers, ", "), e.Variant), true
		case sandbox.ArgEnvironmentVersion:
			return fmt.Sprintf("only the datalayer variant has environment versions, so environment_version=%q is refused for %s; leave it unset", e.Value, e.Variant), true
		}
		return fmt.Sprintf("only the datalayer variant has snapshots, so snapshot_name=%q is refused for %s rather than started empty; leave it unset", e.Value, e.Variant), true
	}
	if e, ok := as[*engine.SandboxTimeoutError](err); ok {
		if e.Timeout < time.Second {
			return fmt.Sprintf("timeout must be at least 1 second (it is the sandbox's default execution timeout); got %s", e.Timeout), true
		}
		return fmt.Sprintf("timeout %s is above this server's longest execution timeout, %s; pass at most %d", e.Timeout, e.Max, int(e.Max/time.Second)), true
	}
	if e, ok := as[*sandbox.NoKernelSpecError](err); ok {
		return fmt.Sprintf("the Jupyter server at %s has no kernel spec %q (for the jupyter-server variant, environment names the kernel spec); its kernel specs are %s", e.Server, e.Spec, e.Quoted()), true
	}
	if e, ok := as[*sandbox.NoKernelError](err); ok {
		return e.Error() + "; leave kernel_id unset to start a new one", true
	}
	return "", false
}
