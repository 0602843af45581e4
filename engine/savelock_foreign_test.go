package engine

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/nbfile"
)

// A user's own file at the lock's name is neither taken for a stale lock
// and deleted nor hidden: the save says it is in the way, at once, and the
// file stays as it was.
func testSaveLockNotOurs(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	e.saveLockTimes = nbfile.LockTimes{TTL: 300 * time.Millisecond, Wait: 3 * time.Second, Look: 20 * time.Millisecond}
	f.use(t, "s", "nb", "mine.ipynb", "create")
	// The test server refuses hidden files: the lock's name is visible.
	userFile := f.path("mine.ipynb.lock")
	if _, err := f.client.SaveText(ctx, userFile, "my notes about the lock I want"); err != nil {
		t.Fatal(err)
	}
	entries, err := e.ListFiles(ctx, f.dir, 0, "")
	checkNoError(t, "list", err)
	listed := false
	for _, en := range entries {
		listed = listed || en.Path == userFile
	}
	if !listed {
		t.Errorf("list_files hides the user's %s: %v", userFile, entries)
	}
	start := time.Now()
	_, _, err = e.InsertCell(ctx, "s", "", -1, "code", "a = 1")
	var inTheWay *nbfile.SaveLockInTheWayError
	if !errors.As(err, &inTheWay) || inTheWay.LockPath != userFile || !strings.Contains(err.Error(), "rename or move that file") {
		t.Fatalf("insert with a user's file at the lock's name: %v (%T)", err, err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("the save waited %s for a file that is no lock", waited)
	}
	time.Sleep(2 * e.saveLockTimes.TTL)
	data, err := os.ReadFile(f.srv.Path(userFile))
	if err != nil || string(data) != "my notes about the lock I want" {
		t.Fatalf("the user's file after the save: %q, %v", data, err)
	}
	if strings.Contains(string(f.file(t, "mine.ipynb")), "a = 1") {
		t.Error("the refused change was saved")
	}
	// Moved away, the save goes through.
	if err := f.client.Delete(ctx, userFile); err != nil {
		t.Fatal(err)
	}
	_, _, err = e.InsertCell(ctx, "s", "", -1, "code", "a = 1")
	checkNoError(t, "insert once the file is gone", err)
}
