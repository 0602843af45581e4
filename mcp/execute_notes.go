package mcp

import (
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// interruptedByPersonNote tells the agent that the KeyboardInterrupt in its
// outputs was the person's doing, as cancel, undo, edit and deny tell it of
// theirs: a bare traceback reads like a fault to retry.
const interruptedByPersonNote = "[INTERRUPTED: the person supervising at the workbench interrupted the kernel while this code ran; the KeyboardInterrupt above is theirs. Do not run it again unless they ask you to.]"

// cellError names what the code of a run raised, for the workbench's
// timeline (event.CallEvent.CellError): the first error output's name, or
// the status when the kernel reported a failure without one. "" when the
// code raised nothing (or is still running).
func cellError(res engine.ExecResult) string {
	if res.StillRunning {
		return ""
	}
	for _, o := range res.Outputs {
		if o.OutputType == notebook.Error {
			if o.EName != "" {
				return o.EName
			}
			return "error"
		}
	}
	switch res.Status {
	case "error", "aborted":
		return res.Status
	}
	return ""
}
