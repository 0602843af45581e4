package mcp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// wordKernelLosses words the engine's kernel errors for an agent: what
// happened to the kernel, that its state is gone, and which call brings
// back a working one. It reports false for any other error.
func wordKernelLosses(tool string, err error) (string, bool) {
	var lost *engine.KernelLostError
	var nul *engine.CodeNULError
	var noReply *engine.NoReplyError
	switch {
	case errors.As(err, &lost):
		return lostKernelText(tool, lost), true
	case errors.As(err, &nul):
		return fmt.Sprintf("The code was not run: it contains a NUL byte (\\x00) at byte %d, and the kernel never answers code with one. Remove it and call %s again.", nul.Offset, tool), true
	case errors.As(err, &noReply):
		return fmt.Sprintf("Kernel %s took the code and went idle without a reply, so it did not run it (ipykernel does this for a request it fails to handle). The kernel still works: check the code for unusual characters and call %s again.", noReply.KernelID, tool), true
	}
	return "", false
}

// lostKernelText is the agent's text for a kernel that went away.
func lostKernelText(tool string, e *engine.KernelLostError) string {
	if e.What == event.KernelDied && e.During {
		// Its process died while it ran the call's code.
		if e.CellID != "" {
			return fmt.Sprintf("the kernel died while running cell %d (id %q) of notebook %q (its state is lost). Call restart_notebook to start a fresh kernel; outputs printed before it died are in the cell", e.Index, e.CellID, e.Notebook)
		}
		return fmt.Sprintf("kernel %s died while running the code (its state is lost). Restart it with restart_notebook on the notebook that uses it", e.KernelID)
	}
	var b strings.Builder
	b.WriteString("Kernel ")
	b.WriteString(e.KernelID)
	if e.Notebook != "" {
		fmt.Fprintf(&b, " (notebook '%s')", e.Notebook)
	}
	switch e.What {
	case event.KernelShutDown:
		b.WriteString(" was shut down from outside this server (for example from JupyterLab, or by a DELETE of the kernel)")
	case event.KernelGone:
		b.WriteString(" no longer exists on the Jupyter server (it was shut down, or the server restarted)")
	case event.KernelDied:
		b.WriteString(" died, and Jupyter could not restart it")
	case event.KernelRestartedAfterCrash:
		b.WriteString(" died (its process ended: a crash, out of memory, or kill -9) and Jupyter restarted it")
	case event.KernelRestartedOutside:
		b.WriteString(" was restarted from outside this server (for example from JupyterLab)")
	default:
		b.WriteString(" was lost")
	}
	switch {
	case e.During && e.CellID != "":
		fmt.Fprintf(&b, " while it ran cell %d (id '%s'); outputs printed before that are in the cell", e.Index, e.CellID)
	case e.During:
		b.WriteString(" while it ran this code")
	default:
		b.WriteString("; this code was not run")
	}
	b.WriteString(". Its state (variables, imports, loaded data) is gone. ")
	switch {
	case e.Notebook != "":
		fmt.Fprintf(&b, "Call restart_notebook with notebook_name '%s' to give it a fresh kernel, then re-run the cells your code depends on before calling %s again.", e.Notebook, tool)
	case e.What.Exists():
		fmt.Fprintf(&b, "The kernel now runs from a blank state: re-run what your code depends on, then call %s again.", tool)
	default:
		b.WriteString("Pass the kernel_id of a running kernel (list_kernels shows them), or call use_notebook to work in a notebook with a kernel of its own.")
	}
	return b.String()
}
