package mcp

import (
	"strings"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Each way a kernel goes away is worded with what happened, that the state
// is gone, and the call that brings back a working kernel.
func TestKernelErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool string
		err  error
		want []string
	}{
		{"execute_code", &engine.KernelLostError{KernelID: "k1", Notebook: "nb", What: event.KernelShutDown},
			[]string{"Kernel k1 (notebook 'nb') was shut down from outside", "this code was not run", "state", "is gone", "restart_notebook with notebook_name 'nb'", "calling execute_code again"}},
		{"execute_cell", &engine.KernelLostError{KernelID: "k1", Notebook: "nb", What: event.KernelRestartedAfterCrash, During: true, Index: 2, CellID: "c"},
			[]string{"died", "Jupyter restarted it while it ran cell 2 (id 'c')", "outputs printed before that are in the cell", "restart_notebook"}},
		{"execute_code", &engine.KernelLostError{KernelID: "k1", Notebook: "nb", What: event.KernelRestartedOutside, During: true},
			[]string{"restarted from outside this server", "while it ran this code", "restart_notebook"}},
		{"execute_code", &engine.KernelLostError{KernelID: "k1", What: event.KernelGone},
			[]string{"no longer exists", "list_kernels"}},
		{"execute_code", &engine.KernelLostError{KernelID: "k1", What: event.KernelRestartedOutside},
			[]string{"blank state", "call execute_code again"}},
		{"insert_execute_code_cell", &engine.CodeNULError{Offset: 3},
			[]string{"not run", "NUL byte", "at byte 3", "call insert_execute_code_cell again"}},
		{"execute_code", &engine.NoReplyError{KernelID: "k1"},
			[]string{"went idle without a reply", "did not run it"}},
	}
	for _, tt := range tests {
		res := errorResult(tt.tool, tt.err)
		text := contentText(res.Content)
		if !res.IsError {
			t.Errorf("%T: not an error result", tt.err)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %T: %q lacks %q", tt.tool, tt.err, text, w)
			}
		}
		if strings.Contains(strings.ToLower(text), "server error") {
			t.Errorf("%T worded as a server error: %q", tt.err, text)
		}
	}
	if _, ok := wordKernelLosses("execute_code", &engine.NoCellError{}); ok {
		t.Error("kernelErrorText claims an error that is not a kernel's")
	}
}
