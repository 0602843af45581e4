package reliability

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// Past one machine. A 2026-07-28 request can land on any replica: two of our
// processes behind a round-robin HTTP proxy in front of one Jupyter, with
// agents on the newest protocol (the Go SDK client's default) spread across
// both. What the replicas share is the Jupyter server, and through it the
// save lock: every acknowledged change is kept. What lives in one process
// is not shared: a notebook in use (use_notebook) and a held call. A held
// call's retry lands on the other replica under strict round robin; with
// --peers that replica hands it to the one holding the call.

// roundRobin is a reverse proxy that sends each request to the next
// backend in turn, and counts them.
type roundRobin struct {
	backends []*url.URL
	next     atomic.Int64
	served   []atomic.Int64
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(rr.next.Add(1)-1) % len(rr.backends)
	rr.served[i].Add(1)
	u := rr.backends[i]
	(&httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.URL.Path = u.Path
			pr.Out.Host = u.Host
		},
		FlushInterval: -1,
	}).ServeHTTP(w, r)
}

// replicas starts two HTTP servers on srv, named a and b; with peers each
// knows the other. It returns the endpoints and the proxy in front.
func replicas(t *testing.T, srv *jupytertest.Server, token string, peers bool, args ...string) ([]string, *roundRobin, string) {
	t.Helper()
	ports := make([]int, 2)
	urls := make([]string, 2)
	for i := range ports {
		p, err := harness.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i], urls[i] = p, fmt.Sprintf("http://127.0.0.1:%d/mcp", p)
	}
	names := []string{"a", "b"}
	rr := &roundRobin{served: make([]atomic.Int64, 2)}
	var wg sync.WaitGroup
	procs := make([]*harness.Process, 2)
	for i := range procs {
		a := append([]string{"--jupyter-url", srv.URL, "--jupyter-token", srv.Token, "--port", strconv.Itoa(ports[i]), "--instance", names[i]}, args...)
		if peers {
			a = append(a, "--peers", names[1-i]+"="+urls[1-i])
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			procs[i] = harness.StartHTTP(t, token, a...)
		}()
	}
	wg.Wait()
	for i := range procs {
		u, _ := url.Parse(procs[i].Endpoint)
		rr.backends = append(rr.backends, u)
	}
	front := httptest.NewServer(rr)
	t.Cleanup(front.Close)
	eps := []string{procs[0].Endpoint, procs[1].Endpoint}
	return eps, rr, front.URL + "/mcp"
}

// connectNewest connects a Go SDK client at its default protocol
// (2026-07-28) to endpoint, named name, answering approvals with allow.
func connectNewest(t *testing.T, endpoint, token, name string) *sdk.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: harness.AuthClient(token, tr), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client speaks %s through the proxy", v)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestTwoReplicasBehindARoundRobinProxy(t *testing.T) {
	srv := jupytertest.Shared(t)
	reapKernels(t, srv)
	const token = "replicas-test-token"
	for _, peers := range []bool{false, true} {
		t.Run(fmt.Sprintf("peers=%v", peers), func(t *testing.T) {
			eps, rr, front := replicas(t, srv, token, peers, "--approve", "destructive", "--trust-client-approval")
			sub := srv.Subdir(t)
			path := writeNotebook(t, srv, sub+"/shared.ipynb", "# header")
			other := writeNotebook(t, srv, sub+"/other.ipynb", "# other")

			// A notebook is in use in the process that opened it: opened on
			// one replica (as use_notebook through the proxy would be),
			// calls through the proxy that name it find it there only.
			ok(t, connectNewest(t, eps[0], token, "probe"), "use_notebook", map[string]any{"notebook_name": "other", "notebook_path": other})
			probe := connectNewest(t, front, token, "probe")
			found := 0
			for i := 0; i < 10; i++ {
				if res := callTool(t, probe, "read_cell", map[string]any{"cell_index": 0, "notebook_name": "other"}); !res.IsError {
					found++
				} else if !strings.Contains(textOf(res), `notebook "other" is not connected`) {
					t.Errorf("a read on the replica without the notebook: %s", textOf(res))
				}
			}
			t.Logf("a notebook opened on replica a, then 10 reads through the proxy naming it: %d found it, %d landed on replica b, where it is not in use", found, 10-found)
			if found != 5 {
				t.Errorf("%d of 10 reads found the notebook, want 5 (strict round robin)", found)
			}

			// So the shared notebook is opened on each replica, directly.
			for _, ep := range eps {
				ok(t, connectNewest(t, ep, token, "setup"), "use_notebook", map[string]any{"notebook_name": "shared", "notebook_path": path})
			}

			// Agents spread across both replicas write at once; each insert
			// is held for approval and allowed by the agent's client.
			const agents, perAgent = 4, 15
			acked := make([][]string, agents)
			var refused, elsewhereW atomic.Int64
			var wg sync.WaitGroup
			before := [2]int64{rr.served[0].Load(), rr.served[1].Load()}
			for a := 0; a < agents; a++ {
				cs := connectNewest(t, front, token, fmt.Sprintf("agent-%d", a))
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < perAgent; i++ {
						src := fmt.Sprintf("# agent %d cell %d", a, i)
						res := callTool(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": src, "notebook_name": "shared"})
						if res.IsError {
							switch text := textOf(res); {
							case strings.Contains(text, "Not saved"):
								refused.Add(1)
							case strings.Contains(text, "issued by another server process"):
								elsewhereW.Add(1)
							default:
								t.Errorf("an insert failed without saying it was not saved: %s", text)
							}
							continue
						}
						acked[a] = append(acked[a], src)
					}
				}()
			}
			wg.Wait()
			nb := parseFile(t, srv.Path(path))
			in := map[string]int{}
			for _, c := range nb.Cells {
				in[c.Source]++
			}
			total, kept := 0, 0
			for a := range acked {
				for _, src := range acked[a] {
					total++
					switch in[src] {
					case 1:
						kept++
					case 0:
						t.Errorf("acknowledged %q is not in the file", src)
					default:
						t.Errorf("%q is in the file %d times", src, in[src])
					}
				}
			}
			t.Logf("%d agents x %d inserts (each held for approval, allowed by its client) through the proxy (replica a served %d requests, b %d): %d acknowledged, %d kept in the file, %d refused as not saved, %d refused because the answer reached the other replica; the file has %d cells (header included)",
				agents, perAgent, rr.served[0].Load()-before[0], rr.served[1].Load()-before[1], total, kept, refused.Load(), elsewhereW.Load(), len(nb.Cells))
			if kept != total || len(nb.Cells) != total+1 {
				t.Errorf("%d of %d acknowledged inserts kept; the file has %d cells", kept, total, len(nb.Cells))
			}
			if peers && elsewhereW.Load() != 0 {
				t.Errorf("with peers, %d answers were refused as another replica's", elsewhereW.Load())
			}

			// Held calls live in the process that holds them: a call and
			// its retry are two requests, which strict round robin sends to
			// the two replicas.
			approver := connectNewest(t, front, token, "approver")
			header := nb.Cells[0].ID
			allowed, elsewhere := 0, 0
			for i := 0; i < 10; i++ {
				res := callTool(t, approver, "clear_cell_output", map[string]any{"cell_id": header, "notebook_name": "shared"})
				switch text := textOf(res); {
				case !res.IsError:
					allowed++
				case strings.Contains(text, "issued by another server process"):
					elsewhere++
				default:
					t.Errorf("an approval: %s", text)
				}
			}
			t.Logf("10 calls held for approval, answered allow by the client: %d ran, %d refused because the retry reached the other replica", allowed, elsewhere)
			if want := map[bool]int{false: 0, true: 10}[peers]; allowed != want {
				t.Errorf("%d of 10 approvals went through, want %d", allowed, want)
			}
		})
	}
}
