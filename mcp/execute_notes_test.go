package mcp

import (
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// The timeline names what a run raised: the first error output's name,
// the kernel's status when it failed without one, nothing while it runs or
// when it raised nothing.
func TestCellError(t *testing.T) {
	t.Parallel()
	errOut := func(name string) notebook.Output { return notebook.Output{OutputType: notebook.Error, EName: name} }
	text := notebook.Output{OutputType: notebook.Stream, Name: "stdout", Text: "hi\n"}
	for _, tc := range []struct {
		res  engine.ExecResult
		want string
	}{
		{engine.ExecResult{Status: "ok", Outputs: []notebook.Output{text}}, ""},
		{engine.ExecResult{Status: "error", Outputs: []notebook.Output{text, errOut("ZeroDivisionError")}}, "ZeroDivisionError"},
		{engine.ExecResult{Status: "error", Outputs: []notebook.Output{errOut("KeyboardInterrupt")}, InterruptedByPerson: true}, "KeyboardInterrupt"},
		{engine.ExecResult{Status: "error", Outputs: []notebook.Output{errOut("")}}, "error"},
		{engine.ExecResult{Status: "error"}, "error"},
		{engine.ExecResult{Status: "aborted"}, "aborted"},
		{engine.ExecResult{Status: "running", StillRunning: true, Outputs: []notebook.Output{errOut("ValueError")}}, ""},
	} {
		if got := cellError(tc.res); got != tc.want {
			t.Errorf("cellError(%+v) = %q, want %q", tc.res, got, tc.want)
		}
	}
}
