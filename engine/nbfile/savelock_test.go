package nbfile

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
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
		if got := IsLockFile(name); got != want {
			t.Errorf("IsLockFile(%q) = %v, want %v", name, got, want)
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

// TestSaveLockRefreshRetries: a refresh the Jupyter server fails (a 503
// here) does not end the refresher: the lock is refreshed on a later tick,
// so it never looks stale to other processes while we hold it. And when
// refreshes keep failing, verify refuses the save once the lock is half a
// TTL old, and accepts again once a refresh gets through.
func TestSaveLockRefreshRetries(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	f := newFixture(t)
	ttl := 800 * time.Millisecond
	lockPath := f.path("refresh.ipynb.lock")
	ft := &faultyTransport{path: "/api/contents/" + lockPath}
	client, err := jupyter.NewClient(f.srv.URL, f.srv.Token, jupyter.Options{HTTPClient: &http.Client{Transport: ft}})
	checkNoError(t, "client", err)
	file := New(f.client, f.path("refresh.ipynb"), "nb", nil, LockTimes{})
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
	l := file.hold(client, lockPath, token, ttl, sent, content)
	released := false
	defer func() {
		if !released {
			l.Release()
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
		err := l.Verify(ctx)
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
	waitFor("verify to accept the lock after a refresh got through", func() bool { return l.Verify(ctx) == nil })
	l.Release()
	released = true
	if _, err := f.client.Get(ctx, lockPath, false); !jupyter.IsNotFound(err) {
		t.Errorf("after release, the lock file: %v, want it gone", err)
	}
}
