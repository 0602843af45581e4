package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/nbfile"
)

// testSaveLock holds the save lock the way another process would (a file
// at the lock's name) and checks what a save does: waits while the holder
// refreshes it and then says it was not saved, takes it over once nobody
// refreshes it, and leaves no lock file behind.
func testSaveLock(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	e.saveLockTimes = nbfile.LockTimes{TTL: 600 * time.Millisecond, Wait: 2 * time.Second, Look: 50 * time.Millisecond}
	f.use(t, "s", "nb", "locked.ipynb", "create")
	_, _, err := e.InsertCell(ctx, "s", "", -1, "code", "a = 1")
	checkNoError(t, "insert", err)
	d, err := e.lookup("s", "nb")
	if err != nil {
		t.Fatal(err)
	}
	// The test server refuses hidden files, so the lock has a visible name.
	lockPath := f.path("locked.ipynb.lock")
	if got := d.file.LockName(); got != lockPath {
		t.Fatalf("lock name %q, want %q (visible names) on a server that refuses hidden files", got, lockPath)
	}
	hold := func(seq int) {
		// A lock file as nbfile writes one.
		b, _ := json.Marshal(map[string]any{"owner": "jupyter-mcp-server pid 4242 on elsewhere", "token": strings.Repeat("0", 32), "seq": seq})
		if _, err := f.client.SaveText(ctx, lockPath, string(b)); err != nil {
			t.Fatal(err)
		}
	}

	// A live holder: it rewrites its lock faster than the TTL.
	before := f.file(t, "locked.ipynb")
	hold(0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for seq := 1; ; seq++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				hold(seq)
			}
		}
	}()
	// Listings do not show it.
	entries, err := e.ListFiles(ctx, f.dir, 0, "")
	checkNoError(t, "list", err)
	for _, en := range entries {
		if nbfile.IsLockFile(en.Path) {
			t.Errorf("list_files shows the lock file %s", en.Path)
		}
	}
	_, _, err = e.InsertCell(ctx, "s", "", -1, "code", "b = 2")
	close(stop)
	wg.Wait()
	var busy *nbfile.SaveLockError
	if !errors.As(err, &busy) {
		t.Fatalf("insert while another process holds the lock: %v (%T), want a *SaveLockError", err, err)
	}
	if busy.Holder != "jupyter-mcp-server pid 4242 on elsewhere" || busy.LockPath != lockPath || busy.Err != nil {
		t.Errorf("SaveLockError %+v: want holder %q and lock path %q", busy, "jupyter-mcp-server pid 4242 on elsewhere", lockPath)
	}
	if string(before) != string(f.file(t, "locked.ipynb")) {
		t.Error("the refused insert changed the file")
	}

	// The holder stops refreshing (it crashed): after the TTL the lock is
	// taken over and the insert is saved.
	_, _, err = e.InsertCell(ctx, "s", "", -1, "code", "c = 3")
	checkNoError(t, "insert over a stale lock", err)
	if got, want := sources(f.disk(t, "locked.ipynb")), []string{"a = 1", "c = 3"}; !equalStrings(got, want) {
		t.Errorf("on disk %q, want %q", got, want)
	}

	// Our lock read back with another token (taken over meanwhile): the
	// save is refused.
	l, err := d.file.Lock(ctx)
	checkNoError(t, "acquire", err)
	checkNoError(t, "verify", l.Verify(ctx))
	hold(99)
	var lost *nbfile.SaveLockLostError
	if err := l.Verify(ctx); !errors.As(err, &lost) || lost.Holder != "jupyter-mcp-server pid 4242 on elsewhere" {
		t.Errorf("verify after a takeover: %v, want a *SaveLockLostError naming the holder", err)
	}
	// Releasing leaves the other holder's lock alone.
	l.Release()
	if m, err := f.client.Get(ctx, lockPath, true); err != nil || !strings.Contains(string(m.Content), "jupyter-mcp-server pid 4242 on elsewhere") {
		t.Errorf("after releasing a lock lost to another holder, its lock file: %v %v", m, err)
	}
	if err := f.client.Delete(ctx, lockPath); err != nil {
		t.Fatal(err)
	}

	// Nothing of the lock is left in the directory.
	ms, err := f.client.List(ctx, f.dir)
	checkNoError(t, "list", err)
	for _, m := range ms {
		if m.Name != "locked.ipynb" {
			t.Errorf("left in the directory: %s", m.Name)
		}
	}
}
