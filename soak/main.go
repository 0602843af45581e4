// Command soak holds the server under a mixed load for a while and reports
// throughput, errors and memory: 16 HTTP clients (separate MCP sessions) on
// four notebooks insert, read, edit, execute and list for N minutes against
// the real binary and its managed Jupyter server. It is not run in CI.
//
//	go run ./soak -minutes 10
//	go run ./soak -minutes 2 -bin bin/jupyter-mcp-server
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

func main() {
	minutes := flag.Float64("minutes", 10, "how long to run the load")
	clients := flag.Int("clients", 16, "concurrent HTTP clients, each its own MCP session")
	notebooks := flag.Int("notebooks", 4, "notebooks the clients share (one kernel each)")
	bin := flag.String("bin", "", "the jupyter-mcp-server binary (default: build it)")
	flag.Parse()
	if err := run(*minutes, *clients, *notebooks, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// stats counts calls and errors by tool, and keeps latencies.
type stats struct {
	calls  atomic.Int64
	errors atomic.Int64
	mu     sync.Mutex
	byTool map[string]*toolStats
}

type toolStats struct {
	calls, errors int
	firstError    string
	lat           []time.Duration
}

func (s *stats) record(tool string, took time.Duration, errText string) {
	s.calls.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.byTool[tool]
	if ts == nil {
		ts = &toolStats{}
		s.byTool[tool] = ts
	}
	ts.calls++
	ts.lat = append(ts.lat, took)
	if errText != "" {
		s.errors.Add(1)
		ts.errors++
		if ts.firstError == "" {
			ts.firstError = errText
		}
	}
}

func run(minutes float64, nClients, nNotebooks int, bin string) error {
	work, err := os.MkdirTemp("", "jms-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if bin == "" {
		bin = filepath.Join(work, "jupyter-mcp-server")
		fmt.Println("building the binary…")
		if err := harness.Build(bin); err != nil {
			return err
		}
	}
	root := filepath.Join(work, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		return err
	}
	token := randomHex(16)
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	proc, err := harness.ServeHTTP(sctx, bin, token, []string{"--root-dir", root, "--log-file", filepath.Join(work, "server.log")}, nil)
	cancel()
	if err != nil {
		return err
	}
	defer proc.Stop(15 * time.Second)
	endpoint, pid := proc.Endpoint, proc.Pid()
	fmt.Printf("server pid %d at %s\n", pid, endpoint)

	httpClient := harness.AuthClient(token, &http.Transport{MaxIdleConnsPerHost: 64})
	connect := func() (*sdk.ClientSession, error) {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return harness.ConnectHTTP(cctx, "soak", endpoint, httpClient, true)
	}

	// The notebooks and their kernels are set up before the clock starts.
	names := make([]string, nNotebooks)
	for i := range names {
		names[i] = fmt.Sprintf("soak%d", i)
	}
	sessions := make([]*sdk.ClientSession, nClients)
	for i := range sessions {
		cs, err := connect()
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		defer cs.Close()
		sessions[i] = cs
		nb := names[i%nNotebooks]
		mode := "connect"
		if i < nNotebooks {
			mode = "create"
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "use_notebook", Arguments: map[string]any{
			"notebook_name": nb, "notebook_path": nb + ".ipynb", "mode": mode}})
		if err != nil || res.IsError {
			return fmt.Errorf("client %d use_notebook: %v %s", i, err, harness.Text(res))
		}
	}

	st := &stats{byTool: map[string]*toolStats{}}
	rssStart := rss(pid)
	treeStart := treeRSS(pid)
	start := time.Now()
	deadline := start.Add(time.Duration(minutes * float64(time.Minute)))
	fmt.Printf("load: %d clients on %d notebooks for %.1f min; server RSS %s (with Jupyter and kernels %s)\n",
		nClients, nNotebooks, minutes, mib(rssStart), mib(treeStart))

	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client(i, cs, names[i%nNotebooks], deadline, st)
		}()
	}
	var peak int64
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	sample := time.NewTicker(2 * time.Second)
	defer sample.Stop()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-proc.Exited():
			return fmt.Errorf("the server exited during the load: %v\n%s", proc.WaitErr(), proc.Stderr.String())
		case <-sample.C:
			peak = max(peak, rss(pid))
		case <-tick.C:
			el := time.Since(start).Seconds()
			fmt.Printf("  %4.0fs  calls %d (%.1f/s)  errors %d  RSS %s\n", el, st.calls.Load(), float64(st.calls.Load())/el, st.errors.Load(), mib(rss(pid)))
		}
	}
	elapsed := time.Since(start)
	// Let the server settle (collectors finish, buffers drop) before the
	// final reading.
	time.Sleep(2 * time.Second)
	rssEnd := rss(pid)
	treeEnd := treeRSS(pid)
	peak = max(peak, rssEnd)

	fmt.Printf("\n%d calls in %s: %.1f calls/s, %d errors\n", st.calls.Load(), elapsed.Round(time.Second),
		float64(st.calls.Load())/elapsed.Seconds(), st.errors.Load())
	fmt.Printf("server RSS: start %s, end %s, peak %s; with Jupyter and kernels: start %s, end %s\n",
		mib(rssStart), mib(rssEnd), mib(peak), mib(treeStart), mib(treeEnd))
	var tools []string
	for t := range st.byTool {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	fmt.Printf("\n%-24s %7s %6s %8s %8s  %s\n", "tool", "calls", "errors", "p50", "p99", "first error")
	for _, t := range tools {
		ts := st.byTool[t]
		sort.Slice(ts.lat, func(a, b int) bool { return ts.lat[a] < ts.lat[b] })
		fmt.Printf("%-24s %7d %6d %8s %8s  %s\n", t, ts.calls, ts.errors, pct(ts.lat, 0.5), pct(ts.lat, 0.99), trunc(ts.firstError, 100))
	}

	// Every notebook must still be a valid file.
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(root, n+".ipynb"))
		if err != nil {
			return err
		}
		nb, err := notebook.Parse(data)
		if err != nil {
			return fmt.Errorf("%s.ipynb does not parse after the soak: %w", n, err)
		}
		fmt.Printf("%s.ipynb: %d cells, %d KiB, parses\n", n, len(nb.Cells), len(data)/1024)
	}
	if st.errors.Load() > 0 {
		return fmt.Errorf("%d calls failed", st.errors.Load())
	}
	return nil
}

// client runs a mixed workload on one notebook until the deadline. It
// addresses its own cells by id, as the server's instructions recommend,
// so that the other clients' inserts cannot make its calls miss.
func client(i int, cs *sdk.ClientSession, nb string, deadline time.Time, st *stats) {
	rng := mrand.New(mrand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
	var mine []string
	call := func(tool string, args map[string]any) *sdk.CallToolResult {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		took := time.Since(t0)
		switch {
		case err != nil:
			st.record(tool, took, err.Error())
			return nil
		case res.IsError:
			st.record(tool, took, harness.Text(res))
			return nil
		}
		st.record(tool, took, "")
		return res
	}
	n := 0
	for time.Now().Before(deadline) {
		n++
		r := rng.IntN(100)
		switch {
		case r < 20 || len(mine) == 0:
			res := call("insert_cell", map[string]any{"notebook_name": nb, "cell_index": -1, "cell_type": "code",
				"cell_source": fmt.Sprintf("v_%d_%d = %d * 2\nprint(v_%d_%d)", i, n, n, i, n)})
			if res != nil {
				if id, _ := res.Meta["io.jupyter-mcp/cell_id"].(string); id != "" {
					mine = append(mine, id)
				}
			}
			// Each client keeps about a dozen cells, so that the
			// notebooks stay the same size however long the soak runs.
			if len(mine) > 12 && call("delete_cell", map[string]any{"notebook_name": nb, "cell_ids_to_delete": []string{mine[0]}}) != nil {
				mine = mine[1:]
			}
		case r < 40:
			call("read_cell", map[string]any{"notebook_name": nb, "cell_id": mine[rng.IntN(len(mine))]})
		case r < 55:
			call("read_notebook", map[string]any{"notebook_name": nb, "limit": 50})
		case r < 63:
			call("overwrite_cell_source", map[string]any{"notebook_name": nb, "cell_id": mine[rng.IntN(len(mine))],
				"cell_source": fmt.Sprintf("w_%d_%d = %d\nprint(w_%d_%d)", i, n, n, i, n)})
		case r < 73:
			call("execute_cell", map[string]any{"notebook_name": nb, "cell_id": mine[rng.IntN(len(mine))], "timeout": 60})
		case r < 78:
			call("execute_code", map[string]any{"code": fmt.Sprintf("sum(range(%d))", n)})
		case r < 85:
			call("list_notebooks", nil)
		case r < 90:
			call("list_files", map[string]any{})
		case r < 93:
			call("list_kernels", nil)
		case r < 96:
			if len(mine) > 1 {
				call("move_cell", map[string]any{"notebook_name": nb, "source_cell_id": mine[len(mine)-1], "target_cell_id": mine[0]})
			}
		default:
			call("clear_cell_output", map[string]any{"notebook_name": nb, "cell_id": mine[rng.IntN(len(mine))]})
		}
	}
}

// rss is a process's resident set in bytes (VmRSS).
func rss(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// treeRSS adds the resident sets of pid and every process below it (the
// managed Jupyter server and its kernels).
func treeRSS(pid int) int64 {
	ents, _ := os.ReadDir("/proc")
	kids := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			kids[pp] = append(kids[pp], p)
		}
	}
	total := int64(0)
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		total += rss(p)
		queue = append(queue, kids[p]...)
	}
	return total
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func pct(sorted []time.Duration, q float64) string {
	if len(sorted) == 0 {
		return "-"
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))].Round(100 * time.Microsecond).String()
}

func trunc(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
