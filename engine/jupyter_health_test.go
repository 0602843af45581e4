package engine

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// The health check says up, token refused (with the status) or not
// answering, and publishes a header state each time that changes.
func testJupyterHealth(t *testing.T, f *fixture) {
	check := func(url, token string) event.ServerEvent {
		t.Helper()
		e, err := New(ctxT(t), Config{JupyterURL: url, JupyterToken: token, CheckLater: true, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		sub := e.Bus().SubscribeTo(16, event.EvServerState)
		defer sub.Close()
		events := sub.C()
		ctx, cancel := context.WithCancel(ctxT(t))
		defer cancel()
		reported := make(chan string, 4)
		go e.WatchJupyter(ctx, time.Hour, func(state, _ string) { reported <- state })
		select {
		case ev := <-events:
			if ev.Type != event.EvServerState {
				t.Fatalf("first event %s", ev.Type)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no header state after the first check")
		}
		if st := <-reported; st != e.Calls().State().Jupyter {
			t.Errorf("reported %q, header says %q", st, e.Calls().State().Jupyter)
		}
		return e.Calls().State()
	}
	if st := check(f.srv.URL, f.srv.Token); st.Jupyter != event.JupyterUp || st.JupyterProblem != "" {
		t.Errorf("right token: %+v", st)
	}
	st := check(f.srv.URL, "not-the-token")
	if st.Jupyter != event.JupyterRefused || st.JupyterCause != "403" || !strings.Contains(st.JupyterProblem, "refused the token (403)") {
		t.Errorf("wrong token: %+v", st)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	if st := check("http://"+addr+"/", f.srv.Token); st.Jupyter != event.JupyterUnreachable || st.JupyterCause != "connection refused" {
		t.Errorf("nothing listening: %+v", st)
	}
}

// A refused token is not asked about every interval: each refusal is a
// warning in the user's Jupyter log, and it stays refused until this
// process is given another token. The real server sits behind a proxy
// that counts what reaches it.
func testRefusedTokenAskedLess(t *testing.T, f *fixture) {
	target, err := url.Parse(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/api/status") {
			asked.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	e, err := New(ctxT(t), Config{JupyterURL: srv.URL + "/", JupyterToken: "not-the-token", CheckLater: true, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(ctxT(t))
	reported := make(chan string, 4)
	done := make(chan struct{})
	const interval = 40 * time.Millisecond
	go func() {
		defer close(done)
		e.WatchJupyter(ctx, interval, func(state, _ string) { reported <- state })
	}()
	if st := <-reported; st != event.JupyterRefused {
		t.Fatalf("first check: %s", st)
	}
	start := asked.Load()
	time.Sleep(24 * interval)
	cancel()
	<-done
	// 24 intervals: asked twice (every 12th), three times at most when
	// the sleep ends on a tick; 24 times before.
	if n := asked.Load() - start; n > 3 {
		t.Errorf("over 24 intervals a refused token was asked about %d times, want at most 3", n)
	}
}
