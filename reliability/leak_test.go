package reliability

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp/guard"
)

// goroutines returns the stacks of the live goroutines, leaving out the
// ones that are not the server's: idle keep-alive connections of HTTP
// clients (a connection cache that closes itself after IdleConnTimeout) and
// the test framework's own.
func goroutines() []string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		switch {
		case strings.Contains(g, "net/http.(*persistConn)"),
			strings.Contains(g, "testing.(*T).Run"),
			strings.Contains(g, "testing.tRunner") && !strings.Contains(g, "reliability."),
			strings.Contains(g, "testing.(*M)"),
			strings.Contains(g, "runtime.goexit") && strings.Contains(g, "os/signal"),
			strings.Contains(g, "runtime/trace"),
			strings.Contains(g, "goroutines()"):
			continue
		}
		out = append(out, g)
	}
	return out
}

// signature is a goroutine's stack without addresses, arguments and ids,
// for telling which ones are new.
func signature(g string) string {
	var fns []string
	for _, line := range strings.Split(g, "\n")[1:] {
		if strings.HasPrefix(line, "\t") || line == "" {
			continue
		}
		if i := strings.LastIndex(line, "("); i > 0 {
			line = line[:i]
		}
		fns = append(fns, line)
	}
	return strings.Join(fns, " < ")
}

// settledGoroutines waits up to timeout for the count to fall to want and
// returns the goroutines that are left beyond the baseline.
func settledGoroutines(baseline []string, timeout time.Duration) []string {
	base := map[string]int{}
	for _, g := range baseline {
		base[signature(g)]++
	}
	var extra []string
	deadline := time.Now().Add(timeout)
	for {
		runtime.GC()
		now := goroutines()
		seen := map[string]int{}
		extra = extra[:0]
		for _, g := range now {
			s := signature(g)
			seen[s]++
			if seen[s] > base[s] {
				extra = append(extra, g)
			}
		}
		if len(extra) == 0 || time.Now().After(deadline) {
			return extra
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// An in-process server (engine, MCP over in-memory transports and over the
// guarded HTTP handler) that did real work leaves no goroutine behind once
// its clients are gone and it is shut down.
func TestNoGoroutineLeaks(t *testing.T) {
	srv := jupytertest.Shared(t)
	reapKernels(t, srv)
	sub := srv.Subdir(t)
	path := writeNotebook(t, srv, sub+"/leak.ipynb", "print('leak check')")

	baseline := goroutines()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := engine.New(ctx, engine.Config{JupyterURL: srv.URL, JupyterToken: srv.Token, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.New(e, mcp.Options{Version: "test", Images: true, Logger: testLogger()})
	g, err := guard.New(s.HTTPHandler(), guard.Options{Token: "leak", BindHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(g)

	// In memory: a notebook with a kernel, executions, a read, an error.
	mem, ss, err := harness.ConnectInMemory(ctx, s.SDK(), "mem", nil)
	if err != nil {
		t.Fatal(err)
	}
	ok(t, mem, "use_notebook", map[string]any{"notebook_name": "leak", "notebook_path": path})
	ok(t, mem, "execute_cell", map[string]any{"cell_index": 0})
	ok(t, mem, "insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.1)"})
	ok(t, mem, "execute_code", map[string]any{"code": "1+1"})
	callTool(t, mem, "read_cell", map[string]any{"cell_index": 99})
	// An execution that outlives its call (timeout) and is still running
	// at shutdown.
	callTool(t, mem, "execute_code", map[string]any{"code": "import time; time.sleep(1.5); print('late')", "timeout": 1})
	if _, err := mem.ReadResource(ctx, &sdk.ReadResourceParams{URI: "notebook://leak"}); err != nil {
		t.Errorf("reading notebook://leak: %v", err)
	}

	// Over HTTP, two sessions with the standalone SSE stream open.
	tr := &http.Transport{}
	for i := 0; i < 2; i++ {
		cs, err := harness.ConnectHTTP(ctx, "http", hs.URL, harness.AuthClient("leak", tr), false)
		if err != nil {
			t.Fatal(err)
		}
		ok(t, cs, "use_notebook", map[string]any{"notebook_name": "leak", "notebook_path": path})
		ok(t, cs, "read_notebook", map[string]any{"notebook_name": "leak"})
		ok(t, cs, "list_kernels", nil)
		cs.Close()
	}
	tr.CloseIdleConnections()

	mem.Close()
	ss.Wait()
	hs.CloseClientConnections()
	hs.Close()
	e.Close()

	if extra := settledGoroutines(baseline, 10*time.Second); len(extra) > 0 {
		sort.Strings(extra)
		t.Errorf("%d goroutines left after shutdown (baseline %d):\n\n%s", len(extra), len(baseline), strings.Join(extra, "\n\n"))
	}
}

// A client that vanishes without ending its session (a crashed agent, a
// closed laptop) must not leave the session behind forever. With
// mcp.Options.SessionTimeout set, the idle session is closed; without it
// (the zero value) it stays until the process exits.
func TestVanishedClientSession(t *testing.T) {
	srv := jupytertest.Shared(t)
	for _, timeout := range []time.Duration{time.Second, 0} {
		baseline := goroutines()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		e, err := engine.New(ctx, engine.Config{JupyterURL: srv.URL, JupyterToken: srv.Token, Logger: testLogger()})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		s := mcp.New(e, mcp.Options{Version: "test", Logger: testLogger(), SessionTimeout: timeout})
		g, _ := guard.New(s.HTTPHandler(), guard.Options{Token: "gone", BindHost: "127.0.0.1"})
		hs := httptest.NewServer(g)
		r := newRPC(t, hs.URL, "gone")
		r.initialize(t)
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		if code, body, _, err := r.post(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_notebooks","arguments":{}}}`), nil); err != nil || code != http.StatusOK {
			t.Fatalf("call: %d %v %s", code, err, body)
		}
		cancel()
		// The client disappears: no DELETE, connections dropped.
		r.client.CloseIdleConnections()
		hs.CloseClientConnections()
		if timeout > 0 {
			time.Sleep(2 * timeout)
		}
		hs.Close()
		e.Close()
		extra := settledGoroutines(baseline, 2*time.Second)
		switch {
		case timeout > 0 && len(extra) > 0:
			t.Errorf("SessionTimeout %v: %d goroutines of the vanished session left:\n\n%s", timeout, len(extra), strings.Join(extra, "\n\n"))
		case timeout == 0 && len(extra) > 0:
			// With no timeout a vanished client's session lives until
			// exit, by definition; the binary sets one (--session-timeout).
			t.Logf("no SessionTimeout: the vanished session keeps %d goroutines until exit", len(extra))
		}
	}
}
