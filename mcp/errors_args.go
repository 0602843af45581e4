package mcp

import (
	"errors"
	"fmt"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// wordArgumentErrors words the refusals of paths and names as written:
// absolute or leaving the root, control characters, too long, and the
// path faults Jupyter itself reports (which it answers with a 500, so they
// once read as a server failure).
func wordArgumentErrors(tool string, err error) (string, bool) {
	var bp *engine.BadPathError
	if errors.As(err, &bp) {
		arg := pathArg(tool)
		switch bp.Fault {
		case engine.PathAbsolute:
			return fmt.Sprintf("%s %s is absolute: paths are relative to the Jupyter server's root directory, e.g. \"analysis.ipynb\" or \"dir/analysis.ipynb\" (list_files shows what is there)", arg, shortQuote(bp.Path)), true
		case engine.PathLeavesRoot:
			return fmt.Sprintf("%s %s leaves the Jupyter server's root directory: paths are relative to the root and cannot climb above it with \"..\" (list_files shows what is there)", arg, shortQuote(bp.Path)), true
		case engine.PathControl:
			return fmt.Sprintf("%s %s holds a control character (such as NUL, a newline or an escape); use a path without one", arg, shortQuote(bp.Path)), true
		case engine.PathTooLong:
			return fmt.Sprintf("%s %s has a part longer than 255 bytes, more than a file name can hold; use a shorter name", arg, shortQuote(bp.Path)), true
		}
	}
	var bn *engine.BadNameError
	if errors.As(err, &bn) {
		arg := "notebook_name"
		if tool == "launch_sandbox" {
			arg = "sandbox_name"
		}
		return fmt.Sprintf("%s %s holds a control character (such as NUL, a newline or an escape); names are shown in results and in the workbench, so use one without", arg, shortQuote(bn.Name)), true
	}
	var cc *jupyter.ControlCharacterError
	if errors.As(err, &cc) {
		return fmt.Sprintf("%s holds a control character (such as NUL, a newline or an escape): no file, kernel or session on a Jupyter server is named so", shortQuote(cc.Value)), true
	}
	var ae *jupyter.APIError
	if errors.As(err, &ae) {
		switch {
		case ae.NameTooLong():
			return fmt.Sprintf("the Jupyter server's file system refused %s as too long; use a shorter %s", shortQuote(ae.ContentsPath()), pathArg(tool)), true
		case ae.NoDirectory():
			return fmt.Sprintf("the directory of %s does not exist on the Jupyter server (or is a file); use an existing directory (list_files shows them)", shortQuote(ae.ContentsPath())), true
		}
	}
	return "", false
}

// pathArg is the argument of tool that holds a path.
func pathArg(tool string) string {
	if tool == "use_notebook" {
		return "notebook_path"
	}
	return "path"
}

// shortQuote quotes s as Go does (control characters escaped, so the text
// cannot drive a terminal), cut to 80 characters.
func shortQuote(s string) string {
	r := []rune(s)
	if len(r) > 80 {
		return fmt.Sprintf("%q…", string(r[:80]))
	}
	return fmt.Sprintf("%q", s)
}
