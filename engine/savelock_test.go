package engine

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

func TestIsLockFile(t *testing.T) {
	tok := strings.Repeat("ab", 16)
	for name, want := range map[string]bool{
		"a.ipynb.lock":                         false, // may be the user's: read to tell
		".a.ipynb.lock":                        true,
		"dir/.a b.ipynb.lock":                  true,
		"a.ipynb.lock." + tok:                  true,
		"a.ipynb.lock.stale." + tok:            true,
		"a.ipynb":                              false,
		"a.lock":                               false,
		"a.ipynb.lock.txt":                     false,
		"a.ipynb.lock." + tok[:10]:             false,
		"a.ipynb.lock.stale." + tok + "x":      false,
		"notes/a.ipynb.lock/readme.ipynb":      false,
		"a.ipynb.locked":                       false,
		"a.ipynb.lock.stale":                   false,
		"a.ipynb.lock." + strings.ToUpper(tok): false,
	} {
		if got := isLockFile(name); got != want {
			t.Errorf("isLockFile(%q) = %v, want %v", name, got, want)
		}
	}
}

// testSaveLock holds the save lock the way another process would (a file
// at the lock's name) and checks what a save does: waits while the holder
// refreshes it and then says it was not saved, takes it over once nobody
// refreshes it, and leaves no lock file behind.
func testSaveLock(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	e.saveLockTimes = saveLockTimes{ttl: 600 * time.Millisecond, wait: 2 * time.Second, look: 50 * time.Millisecond}
	f.use(t, "s", "nb", "locked.ipynb", "create")
	_, _, err := e.InsertCell(ctx, "s", "", -1, "code", "a = 1")
	checkNoError(t, "insert", err)
	d, err := e.lookup("s", "nb")
	if err != nil {
		t.Fatal(err)
	}
	// The test server refuses hidden files, so the lock has a visible name.
	lockPath := f.path("locked.ipynb.lock")
	if d.lockMode.v.Load() != 2 {
		t.Fatalf("lock mode %d, want 2 (visible names) on a server that refuses hidden files", d.lockMode.v.Load())
	}
	hold := func(seq int) {
		b, _ := json.Marshal(lockContent{Owner: "jupyter-mcp-server pid 4242 on elsewhere", Token: strings.Repeat("0", 32), Seq: seq})
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
		if isLockFile(en.Path) {
			t.Errorf("list_files shows the lock file %s", en.Path)
		}
	}
	_, _, err = e.InsertCell(ctx, "s", "", -1, "code", "b = 2")
	close(stop)
	wg.Wait()
	var busy *SaveLockError
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
	l, err := e.acquireSaveLock(ctx, d)
	checkNoError(t, "acquire", err)
	checkNoError(t, "verify", l.verify(ctx, d))
	hold(99)
	var lost *SaveLockLostError
	if err := l.verify(ctx, d); !errors.As(err, &lost) || lost.Holder != "jupyter-mcp-server pid 4242 on elsewhere" {
		t.Errorf("verify after a takeover: %v, want a *SaveLockLostError naming the holder", err)
	}
	// Releasing leaves the other holder's lock alone.
	l.release(e)
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

// faultyTransport answers requests for one path (the lock file) with a
// 503, as a loaded or restarting Jupyter server would, while failGet or
// failPut is set; everything else goes to the real server.
type faultyTransport struct {
	path             string // escaped URL path suffix, e.g. /api/contents/dir/x.lock
	failGet, failPut atomic.Int32
	failedGets       atomic.Int32
}

func (ft *faultyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.EscapedPath(), ft.path) {
		n := &ft.failPut
		if r.Method == http.MethodGet {
			n = &ft.failGet
		}
		if n.Load() > 0 {
			n.Add(-1)
			if r.Method == http.MethodGet {
				ft.failedGets.Add(1)
			}
			if r.Body != nil {
				r.Body.Close()
			}
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable",
				Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
				Body: io.NopCloser(strings.NewReader(`{"message": "injected: try again"}`))}, nil
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// testSaveLockRefreshRetries: a refresh the Jupyter server fails (a 503
// here) does not end the refresher: the lock is refreshed on a later tick,
// so it never looks stale to other processes while we hold it. And when
// refreshes keep failing, verify refuses the save once the lock is half a
// TTL old, and accepts again once a refresh gets through.
func testSaveLockRefreshRetries(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	ttl := 800 * time.Millisecond
	lockPath := f.path("refresh.ipynb.lock")
	ft := &faultyTransport{path: "/api/contents/" + lockPath}
	client, err := jupyter.NewClient(f.srv.URL, f.srv.Token, jupyter.Options{HTTPClient: &http.Client{Transport: ft}})
	checkNoError(t, "client", err)
	d := &document{name: "nb", path: f.path("refresh.ipynb")}
	seqOnServer := func() int {
		m, err := f.client.Get(ctx, lockPath, true)
		checkNoError(t, "reading the lock", err)
		var s string
		_ = json.Unmarshal(m.Content, &s)
		var lc lockContent
		if err := json.Unmarshal([]byte(s), &lc); err != nil {
			t.Fatalf("lock content %q: %v", s, err)
		}
		return lc.Seq
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited 30s for %s", what)
			}
		}
	}

	token := newToken()
	content := func(seq int) string {
		b, _ := json.Marshal(lockContent{Owner: lockOwner, Token: token, Seq: seq})
		return string(b)
	}
	// The first two reads back fail, before any refresh got through.
	ft.failGet.Store(2)
	sent := time.Now()
	_, err = f.client.SaveText(ctx, lockPath, content(0))
	checkNoError(t, "writing the lock", err)
	l := e.holdSaveLock(client, lockPath, token, ttl, sent, content)
	released := false
	defer func() {
		if !released {
			l.release(e)
		}
	}()
	waitFor("the injected failures", func() bool { return ft.failedGets.Load() == 2 })
	waitFor("a refresh after the failed ones", func() bool { return seqOnServer() >= 1 })
	select {
	case <-l.done:
		t.Fatal("the refresher stopped")
	default:
	}

	// Every refresh write fails from now on: the lock ages, and verify
	// refuses the save, naming the failure.
	ft.failPut.Store(1 << 30)
	var stale *SaveLockStaleError
	waitFor("verify to refuse a lock not refreshed for half a TTL", func() bool {
		err := l.verify(ctx, d)
		if err != nil && !errors.As(err, &stale) {
			t.Fatalf("verify: %v (%T), want nil or a *SaveLockStaleError", err, err)
		}
		return err != nil
	})
	if stale.Age < ttl/2 || stale.Err == nil || !strings.Contains(stale.Error(), "was not saved") || !strings.Contains(stale.Error(), "injected") {
		t.Errorf("SaveLockStaleError %q (age %s, err %v): want an age of at least %s and the refresh failure", stale, stale.Age, stale.Err, ttl/2)
	}
	// The server answers again: a refresh gets through and saves may go on.
	ft.failPut.Store(0)
	waitFor("verify to accept the lock after a refresh got through", func() bool { return l.verify(ctx, d) == nil })
	l.release(e)
	released = true
	if _, err := f.client.Get(ctx, lockPath, false); !jupyter.IsNotFound(err) {
		t.Errorf("after release, the lock file: %v, want it gone", err)
	}
}
