package mcp

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/nbfile"
)

func TestSaveErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{&nbfile.SaveLockError{Notebook: "nb", Path: "a.ipynb", LockPath: "a.ipynb.lock", Holder: "jupyter-mcp-server pid 7 on box", Waited: 30 * time.Second},
			[]string{"Not saved", `"nb"`, "pid 7 on box", "30s", "Nothing was changed", "retry insert_cell", `"a.ipynb.lock"`}},
		{&nbfile.SaveLockLostError{Notebook: "nb", Path: "a.ipynb", Holder: "jupyter-mcp-server pid 9 on box"},
			[]string{"Not saved", "pid 9 on box", "Nothing was changed", "read_notebook", "retry insert_cell"}},
		{&nbfile.SaveLockInTheWayError{Notebook: "nb", Path: "a.ipynb", LockPath: "a.ipynb.lock"},
			[]string{"Not saved", `"a.ipynb.lock"`, "not a lock of this server", "left as it is", "rename or move", "retry insert_cell"}},
		{fmt.Errorf("wrapped: %w", &nbfile.SaveUndoneError{Notebook: "nb", Path: "a.ipynb", Attempts: 3}),
			[]string{"Not saved", "3 times", `"nb"`, "(a.ipynb)", "read the notebook while it was being written", "Nothing was changed", "retry insert_cell", "JupyterLab"}},
	} {
		text, ok := wordSaveErrors("insert_cell", tc.err)
		if !ok {
			t.Errorf("%v: not worded", tc.err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%q lacks %q", text, w)
			}
		}
		if strings.Contains(text, "s3cret") {
			t.Errorf("%q leaks the token", text)
		}
	}
	if _, ok := wordSaveErrors("insert_cell", engine.Userf("bad index")); ok {
		t.Error("a user error was worded as a save error")
	}
	// Through the tool result: a busy lock is the agent's to retry, a
	// Jupyter failure is a server error; both say nothing was saved.
	busy := errorResult("insert_cell", fmt.Errorf("x: %w", &nbfile.SaveLockError{Notebook: "nb", Path: "a.ipynb", LockPath: "a.ipynb.lock", Waited: time.Second}))
	if text := textOf(busy); !busy.IsError || !strings.HasPrefix(text, "Error executing tool insert_cell: Not saved") {
		t.Errorf("busy lock: %q", text)
	}
	failed := errorResult("insert_cell", &nbfile.SaveLockError{Notebook: "nb", Path: "a.ipynb", Err: errors.New("answered 500")})
	if text := textOf(failed); !failed.IsError || !strings.Contains(text, "was not saved") || !strings.HasPrefix(text, "Error executing tool insert_cell: Server error") {
		t.Errorf("Jupyter failure: %q", text)
	}
	// A lock the Jupyter server did not let us refresh: a server error
	// too, saying nothing was saved and why.
	stale := errorResult("insert_cell", &nbfile.SaveLockStaleError{Notebook: "nb", Path: "a.ipynb", Age: 6 * time.Second, Err: errors.New("answered 503")})
	if text := textOf(stale); !stale.IsError || !strings.HasPrefix(text, "Error executing tool insert_cell: Server error") || !strings.Contains(text, "was not saved") ||
		!strings.Contains(text, "last refreshed 6s ago") || !strings.Contains(text, "answered 503") {
		t.Errorf("unrefreshed lock: %q", text)
	}
}
