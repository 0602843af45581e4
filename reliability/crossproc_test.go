package reliability

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// startStdio runs the binary as an agent's host would: its own stdio
// server on --jupyter-url, driven by a go-sdk client.
func startStdio(t *testing.T, srv *jupytertest.Server) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), "--transport", "stdio", "--feed", "", "--start-new-code-sandbox", "false",
		"--jupyter-url", srv.URL, "--jupyter-token", srv.Token)
	cmd.Env = harness.CleanEnv("XDG_RUNTIME_DIR=" + t.TempDir())
	stderr := &harness.LockedBuffer{}
	cmd.Stderr = stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stderr of a stdio server:\n%s", truncate(stderr.String(), 4000))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := harness.ConnectStdio(ctx, "crossproc-agent", cmd)
	if err != nil {
		t.Fatal(err)
	}
	// Closing the session closes stdin; the binary exits on EOF (the
	// transport stops it if it does not).
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Several server processes, each its own agent's stdio server, append to
// one notebook at once. Every insert that answered success is in the file,
// once, in its process's order; an insert that failed says it was not saved
// and left nothing in the file; and each process then reads what the file
// holds.
func TestProcessesShareOneNotebook(t *testing.T) {
	srv := jupytertest.Shared(t)
	reapKernels(t, srv)
	kernel := srv.StartKernel(t)
	for _, procs := range []int{2, 4} {
		t.Run(fmt.Sprintf("%d processes", procs), func(t *testing.T) {
			insertFromProcesses(t, srv, kernel.ID, procs, 50)
		})
	}
}

// The same on jupyter_server's asynchronous contents manager (the default
// of jupyter_server 2.x), where a rename onto an existing file is not
// exclusive: the lock is confirmed by reading it back.
func TestProcessesShareOneNotebookAsyncContents(t *testing.T) {
	srv := jupytertest.Start(t, jupytertest.WithArgs(
		"--ServerApp.contents_manager_class=jupyter_server.services.contents.largefilemanager.AsyncLargeFileManager"))
	kernel := srv.StartKernel(t)
	insertFromProcesses(t, srv, kernel.ID, 4, 25)
}

func insertFromProcesses(t *testing.T, srv *jupytertest.Server, kernelID string, procs, perProc int) {
	{
		{
			sub := srv.Subdir(t)
			path := writeNotebook(t, srv, sub+"/shared.ipynb", "# header")

			sessions := make([]*sdk.ClientSession, procs)
			var wg sync.WaitGroup
			for p := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sessions[p] = startStdio(t, srv)
				}()
			}
			wg.Wait()
			for _, cs := range sessions {
				if cs == nil {
					t.FailNow()
				}
				ok(t, cs, "use_notebook", map[string]any{"notebook_name": "shared", "notebook_path": path, "kernel_id": kernelID})
			}

			acked := make([][]string, procs)
			refused := make([][]string, procs)
			errs := make(chan error, procs*perProc)
			start := make(chan struct{})
			for p, cs := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for i := 0; i < perProc; i++ {
						src := fmt.Sprintf("# process %d cell %d", p, i)
						ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
						res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "insert_cell", Arguments: map[string]any{
							"cell_index": -1, "cell_type": "code", "cell_source": src, "notebook_name": "shared"}})
						cancel()
						switch {
						case err != nil:
							errs <- fmt.Errorf("process %d insert %d: protocol error: %v", p, i, err)
							return
						case res.IsError:
							text := textOf(res)
							if !strings.Contains(text, "Not saved") {
								errs <- fmt.Errorf("process %d insert %d failed without saying it was not saved: %s", p, i, text)
							}
							refused[p] = append(refused[p], src)
						default:
							acked[p] = append(acked[p], src)
						}
					}
				}()
			}
			began := time.Now()
			close(start)
			wg.Wait()
			close(errs)
			took := time.Since(began)
			for err := range errs {
				t.Error(err)
			}

			nb := parseFile(t, srv.Path(path))
			pos := map[string]int{}
			for i, c := range nb.Cells {
				if _, dup := pos[c.Source]; dup {
					t.Errorf("cell %q is in the file twice", c.Source)
				}
				pos[c.Source] = i
			}
			total := 0
			for p := range acked {
				total += len(acked[p])
				last := -1
				for _, src := range acked[p] {
					i, found := pos[src]
					if !found {
						t.Errorf("acknowledged cell %q is not in the file", src)
						continue
					}
					if i < last {
						t.Errorf("process %d's cell %q is at %d, before its previous cell (at %d)", p, src, i, last)
					}
					last = i
				}
				for _, src := range refused[p] {
					if _, found := pos[src]; found {
						t.Errorf("cell %q is in the file although its insert said it was not saved", src)
					}
				}
			}
			t.Logf("%d processes x %d inserts in %s: %d acknowledged, %d refused; the file has %d cells (header included)",
				procs, perProc, took.Round(time.Millisecond), total, procs*perProc-total, len(nb.Cells))
			if len(nb.Cells) != total+1 {
				t.Errorf("the file has %d cells, want the header and the %d acknowledged ones", len(nb.Cells), total)
			}
			if total < procs*perProc/2 {
				t.Errorf("only %d of %d inserts were saved", total, procs*perProc)
			}
			// What each process reads is what the file holds.
			for p, cs := range sessions {
				text, _ := ok(t, cs, "read_notebook", map[string]any{"notebook_name": "shared", "start_index": len(nb.Cells) - 1, "limit": 1})
				if lastSrc := nb.Cells[len(nb.Cells)-1].Source; !strings.Contains(text, lastSrc) {
					t.Errorf("process %d reads the last cell without %q:\n%s", p, lastSrc, text)
				}
			}
		}
	}
}

// A notebook edited or deleted outside: reads serve the file, not the
// cells cached before.
func TestReadsFollowTheFile(t *testing.T) {
	srv := jupytertest.Shared(t)
	reapKernels(t, srv)
	kernel := srv.StartKernel(t)
	cs := startStdio(t, srv)
	sub := srv.Subdir(t)
	path := writeNotebook(t, srv, sub+"/outside.ipynb", "x = 1", "y = 2")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "o", "notebook_path": path, "kernel_id": kernel.ID})
	if text, _ := ok(t, cs, "read_cell", map[string]any{"cell_index": 1, "notebook_name": "o"}); !strings.Contains(text, "y = 2") {
		t.Fatalf("read_cell: %s", text)
	}

	// Someone else rewrites the file. A read may serve the file as it was
	// up to 100 ms before (engine/freshness.go): reads after that see the
	// edit.
	writeNotebook(t, srv, path, "x = 1", "y = 'edited outside'", "z = 3")
	time.Sleep(150 * time.Millisecond)
	if text, _ := ok(t, cs, "read_cell", map[string]any{"cell_index": 1, "notebook_name": "o"}); !strings.Contains(text, "edited outside") {
		t.Errorf("read_cell after an outside edit serves the old cell:\n%s", text)
	}
	if text, _ := ok(t, cs, "read_notebook", map[string]any{"notebook_name": "o"}); !strings.Contains(text, "z = 3") {
		t.Errorf("read_notebook after an outside edit serves the old cells:\n%s", text)
	}

	if err := os.Remove(srv.Path(path)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	fails(t, cs, "read_cell", map[string]any{"cell_index": 0, "notebook_name": "o"}, "no longer exists")
	fails(t, cs, "read_notebook", map[string]any{"notebook_name": "o"}, "no longer exists")
}

// BenchmarkReadCellHTTP is figure 5 of the bench (read_cell from 8 HTTP
// sessions at once) against the binary, for comparing binaries
// (JMS_TEST_BIN) on a machine where the bench's baseline cannot run.
func BenchmarkReadCellHTTP(b *testing.B) {
	p, srv := startShared(b, "tok")
	sub := srv.Subdir(b)
	srcs := make([]string, 2000)
	for i := range srcs {
		srcs[i] = fmt.Sprintf("x = %d", i)
	}
	path := writeNotebook(b, srv, sub+"/read.ipynb", srcs...)
	kernel := srv.StartKernel(b)
	const sessions = 8
	css := make([]*sdk.ClientSession, sessions)
	for i := range css {
		css[i] = p.Connect(b)
		ok(b, css[i], "use_notebook", map[string]any{"notebook_name": "reader", "notebook_path": path, "kernel_id": kernel.ID})
	}
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, cs := range css {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read_cell",
					Arguments: map[string]any{"cell_index": (int(n) + i*250) % 2000, "notebook_name": "reader"}})
				if err != nil || res.IsError {
					b.Errorf("read_cell: %v %v", err, res)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}
