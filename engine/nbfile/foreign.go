package nbfile

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// A file that sits where a notebook's save lock goes but was not written
// by a jupyter-mcp-server (someone's own "results.ipynb.lock") is no lock:
// it is never taken for a stale one and deleted, nor hidden from listings.
// A save that finds it says the file is in the way.

// SaveLockInTheWayError says a change was not saved because a file that is
// not a save lock of ours sits at the lock's name; it was left untouched.
type SaveLockInTheWayError struct {
	Notebook, Path string
	LockPath       string
}

func (e *SaveLockInTheWayError) Error() string {
	return fmt.Sprintf("notebook %q (%s) was not saved: the file %s sits where its save lock goes and is not a lock of jupyter-mcp-server, so it was left as it is; rename or move that file and try again", e.Notebook, e.Path, e.LockPath)
}

// CallerCanFix: the file is the user's to move, not a server failure.
func (*SaveLockInTheWayError) CallerCanFix() bool { return true }

var lockToken = regexp.MustCompile(`^[0-9a-f]{32}$`)

// isOurLock says whether a lock file's text is what Lock writes.
func isOurLock(text string) bool {
	var lc lockContent
	return json.Unmarshal([]byte(text), &lc) == nil && strings.HasPrefix(lc.Owner, "jupyter-mcp-server ") && lockToken.MatchString(lc.Token)
}

// IsVisibleLockName says whether a file name has the form of a visible save
// lock ("x.ipynb.lock", used on servers that refuse hidden files), which a
// user's own file may have too.
func IsVisibleLockName(name string) bool {
	base := path.Base(name)
	return strings.HasSuffix(base, ".ipynb.lock") && !strings.HasPrefix(base, ".")
}

// IsOurLockFile reads a file named like a visible lock (IsVisibleLockName)
// and says whether it is one of ours; one gone meanwhile was (a lock lives
// for one save).
func IsOurLockFile(ctx context.Context, client *jupyter.Client, p string) bool {
	m, err := client.Get(ctx, p, true)
	if err != nil {
		return jupyter.IsNotFound(err)
	}
	var s string
	_ = json.Unmarshal(m.Content, &s)
	return isOurLock(s)
}
