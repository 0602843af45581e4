package mcp

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Executions on both eras, against a real kernel: output while it runs
// (progress), the client's cancel interrupting the kernel, and resource
// subscriptions (resources/subscribe, subscriptions/listen).

// Progress carries the newest output lines while a cell runs, on
// 2026-07-28 (where logging is deprecated and sent only on request) as on
// 2025-11-25; over HTTP it rides the call's own stream.
func TestProgressCarriesOutputOnBothEras(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, transport string, e era) {
		h := newHarness(t)
		var mu sync.Mutex
		var msgs []string
		cs := h.connectAs(transport, e, "agent", &sdk.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
				mu.Lock()
				msgs = append(msgs, req.Params.Message)
				mu.Unlock()
			},
		})
		rel := h.writeNotebook("p.ipynb", "x = 1")
		ok(t, cs, "use_notebook", map[string]any{"notebook_name": "p", "notebook_path": rel})
		params := &sdk.CallToolParams{Name: "insert_execute_code_cell", Arguments: map[string]any{
			"cell_index": -1, "cell_source": "import time\nfor i in range(3):\n    print('line', i, flush=True)\n    time.sleep(1)",
			"timeout": 60, "progress_interval": 1, "notebook_name": "p",
		}}
		params.SetProgressToken("tok")
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			t.Fatalf("insert_execute_code_cell: %v %v", err, res)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			got := strings.Join(msgs, "\n---\n")
			mu.Unlock()
			if strings.Contains(got, "Latest output:\nline 0") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no progress carried the output: %q", got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// A client that cancels its call (stdio: notifications/cancelled; HTTP at
// 2026-07-28: closing the call's stream) interrupts the kernel at once, on
// both eras, and the kernel takes the next cell.
func TestClientCancelInterruptsTheKernelOnBothEras(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, transport string, e era) {
		h := newHarness(t)
		cs := h.connectAs(transport, e, "agent", nil)
		rel := h.writeNotebook("c.ipynb", "x = 1")
		ok(t, cs, "use_notebook", map[string]any{"notebook_name": "c", "notebook_path": rel})
		sub := h.e.Bus().SubscribeTo(256, event.EvExecStarted, event.EvExecFinished)
		defer sub.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": "import time\ntime.sleep(60)", "timeout": 90}})
			errc <- err
		}()
		var cancelled time.Time
		timeout := time.After(60 * time.Second)
		for {
			select {
			case ev := <-sub.C():
				if ev.Exec == nil {
					continue
				}
				if ev.Type == event.EvExecStarted && cancelled.IsZero() {
					time.Sleep(300 * time.Millisecond) // the kernel is in the sleep
					cancelled = time.Now()
					cancel()
					continue
				}
				if ev.Type == event.EvExecFinished {
					took := time.Since(cancelled)
					if ev.Exec.Status != "interrupted" || took > 5*time.Second {
						t.Fatalf("the execution ended %q %s after the cancel", ev.Exec.Status, took)
					}
					t.Logf("interrupted %s after the client cancelled", took.Round(time.Millisecond))
					if err := <-errc; err == nil {
						t.Error("the cancelled call answered as if it ran")
					}
					text, _, _ := ok(t, cs, "execute_code", map[string]any{"code": "print('next')", "timeout": 30})
					if !strings.Contains(text, "next") {
						t.Errorf("after the interrupt: %q", text)
					}
					return
				}
			case <-timeout:
				t.Fatal("the execution neither started nor ended")
			}
		}
	})
}

// A change to a notebook reaches a subscribed client on both eras: by
// resources/subscribe in a session, by subscriptions/listen without one.
func TestSubscriptionUpdatesOnBothEras(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, transport string, e era) {
		h := newHarness(t)
		u := make(updates, 256)
		cs := h.connectAs(transport, e, "agent", u.options())
		rel := h.writeNotebook("s.ipynb", "a = 1")
		ok(t, cs, "use_notebook", map[string]any{"notebook_name": "s", "notebook_path": rel})
		const uri = "notebook://s/cells/cell-0"
		if err := cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		// A listen is acknowledged on its own stream, after Subscribe has
		// returned: change the cell until the update comes.
		deadline := time.After(30 * time.Second)
		for i := 0; ; i++ {
			ok(t, cs, "overwrite_cell_source", map[string]any{"cell_id": "cell-0", "cell_source": "a = " + string(rune('2'+i%7)), "notebook_name": "s"})
			select {
			case got := <-u:
				if got != uri {
					t.Fatalf("an update of %s", got)
				}
				return
			case <-time.After(500 * time.Millisecond):
			case <-deadline:
				t.Fatal("no update of the subscribed cell")
			}
		}
	})
}

// A 2026-07-28 client over HTTP cancels by closing its call's stream: no
// notification comes, the connection just goes. That interrupts the kernel.
func TestClosingTheStreamCancelsTheCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.connectAs("http", eraNew, "agent", nil)
	rel := h.writeNotebook("c.ipynb", "x = 1")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "c", "notebook_path": rel})
	sub := h.e.Bus().SubscribeTo(256, event.EvExecStarted, event.EvExecFinished)
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"import time\ntime.sleep(60)","timeout":90},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint(), strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "execute_code"} {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	go func() {
		if resp, err := (&http.Client{Transport: tr}).Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	var closed time.Time
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev := <-sub.C():
			if ev.Exec == nil {
				continue
			}
			if ev.Type == event.EvExecStarted && closed.IsZero() {
				time.Sleep(300 * time.Millisecond) // the kernel is in the sleep
				closed = time.Now()
				cancel()
				continue
			}
			if ev.Type == event.EvExecFinished {
				if took := time.Since(closed); ev.Exec.Status != "interrupted" || took > 5*time.Second {
					t.Fatalf("the execution ended %q %s after the stream closed", ev.Exec.Status, took)
				}
				return
			}
		case <-timeout:
			t.Fatal("the execution neither started nor ended")
		}
	}
}

// The notebooks in use are listed as resources, and a change of that list
// reaches a client on both eras: on 2026-07-28 through the listen the Go
// client opens when it has a list-changed handler.
func TestListChangedOnBothEras(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, transport string, e era) {
		h := newHarness(t)
		changed := make(chan struct{}, 16)
		cs := h.connectAs(transport, e, "agent", &sdk.ClientOptions{
			ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { changed <- struct{}{} },
		})
		if listed(t, cs, "gamma") {
			t.Fatal("notebook listed before use")
		}
		ok(t, cs, "use_notebook", map[string]any{"notebook_name": "gamma", "notebook_path": h.writeNotebook("gamma.ipynb", "1 + 1")})
		awaitListChanged(t, cs, changed, "gamma", true)
		ok(t, cs, "unuse_notebook", map[string]any{"notebook_name": "gamma"})
		awaitListChanged(t, cs, changed, "gamma", false)
	})
}
