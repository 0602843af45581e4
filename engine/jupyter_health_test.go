package engine

import (
	"context"
	"net"
	"strings"
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
