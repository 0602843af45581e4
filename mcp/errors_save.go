package mcp

import (
	"errors"
	"fmt"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/nbfile"
)

// wordSaveErrors words the errors of the cross-process save lock for the
// agent: the change was not saved, and what to do about it. (A Jupyter
// failure while taking the lock is a server error, said as such by
// errorResult with the engine's text: "... was not saved: taking its save
// lock failed: ...". So is a lock whose refreshes the server failed for
// half its TTL: SaveLockStaleError, "... was not saved: its save lock was
// last refreshed ...".)
func wordSaveErrors(tool string, err error) (string, bool) {
	var busy *nbfile.SaveLockError
	if errors.As(err, &busy) && busy.Err == nil {
		holder := "another process"
		if busy.Holder != "" {
			holder = busy.Holder
		}
		return fmt.Sprintf("Not saved: notebook %q (%s) is being saved by %s, which held its save lock for the whole %s this call waited. Nothing was changed; retry %s. If this keeps happening that process may be stuck: stop it, or delete the lock file %q on the Jupyter server (a lock nobody refreshes also expires by itself after 10 s).",
			busy.Notebook, busy.Path, holder, busy.Waited.Round(time.Second), tool, busy.LockPath), true
	}
	var lost *nbfile.SaveLockLostError
	if errors.As(err, &lost) {
		holder := "another process"
		if lost.Holder != "" {
			holder = lost.Holder
		}
		return fmt.Sprintf("Not saved: %s took over the save lock of notebook %q (%s) before this change could be saved. Nothing was changed; read the notebook again (read_notebook) and retry %s.",
			holder, lost.Notebook, lost.Path, tool), true
	}
	var inTheWay *nbfile.SaveLockInTheWayError
	if errors.As(err, &inTheWay) {
		return fmt.Sprintf("Not saved: the file %q sits where the save lock of notebook %q (%s) goes, and it is not a lock of this server (it was left as it is). Nothing was changed; ask the person to rename or move that file, then retry %s.",
			inTheWay.LockPath, inTheWay.Notebook, inTheWay.Path, tool), true
	}
	var undone *nbfile.SaveUndoneError
	if errors.As(err, &undone) {
		return fmt.Sprintf("Not saved: %d times the Jupyter server put the previous copy of notebook %q (%s) back as it saved this change, because something else read the notebook while it was being written. Nothing was changed; retry %s. If it keeps happening, close the notebook where it is open (JupyterLab) until you are done.",
			undone.Attempts, undone.Notebook, undone.Path, tool), true
	}
	return "", false
}
