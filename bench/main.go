// Command bench is `make bench`: it measures the jupyter-mcp-server binary
// against a real Jupyter server it starts itself, pairs every figure with its
// baseline in the same run (rounds alternate between ours and the baseline,
// so both see the same machine load), prints one table and writes it as JSON.
//
//	go run ./bench -out bench.json
//
// Progress goes to stderr, the table to stdout. The exit status is 1 when a
// figure misses its target or could not be measured.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

func main() {
	out := flag.String("out", "bench.json", "write the results as JSON to this file")
	bin := flag.String("bin", "bin/jupyter-mcp-server", "the binary under test; built into a temporary directory when missing")
	rounds := flag.Int("rounds", 8, "rounds of the paired figures, ours and the baseline taking turns in each: figure 1 runs 4x this many rounds of 10 calls per path, figure 2 2x of 5, figure 4 this many of 3")
	only := flag.String("only", "", "comma-separated figure numbers to run (default: all)")
	keep := flag.Bool("keep", false, "keep the work directory (notebooks and the logs of every process)")
	flag.Parse()
	os.Exit(run(*out, *bin, *rounds, *only, *keep))
}

// bench holds what the figures share: the Jupyter server, one kernel, the
// jupyter_client helper on it, and our binary over stdio and over HTTP.
type bench struct {
	ctx    context.Context
	t      *target
	root   string // the Jupyter root: notebooks live here
	work   string // logs and scripts
	jup    *jupyter.Managed
	jc     *jupyter.Client
	rounds int

	kernel  string // the shared kernel of figures 1, 2, 4 and 6
	py      *pyBaseline
	raw     *jupyter.KernelConn
	stdio   *stdioServer
	http    *httpServer
	httpSDK *sdk.ClientSession

	cleanup []func()
}

func (b *bench) defer_(f func()) { b.cleanup = append(b.cleanup, f) }

func run(outPath, bin string, rounds int, only string, keep bool) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep := &report{Started: time.Now(), Machine: newMachine(), Rounds: rounds}

	work, err := os.MkdirTemp("", "jupyter-mcp-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	if keep {
		progress("work directory: %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	b := &bench{ctx: ctx, work: work, root: filepath.Join(work, "root"), rounds: rounds}
	defer func() {
		for i := len(b.cleanup) - 1; i >= 0; i-- {
			b.cleanup[i]()
		}
	}()
	if err := b.setup(bin); err != nil {
		fmt.Fprintln(os.Stderr, "bench: setup:", err)
		return 1
	}
	rep.Binary = b.t.bin

	want := map[string]bool{}
	for _, s := range strings.Split(only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			want[s] = true
		}
	}
	steps := []struct {
		n    string
		name string
		f    func() []*figure
	}{
		{"1", "execute_code round trip", b.fig1},
		{"2", "plot cell", b.fig2},
		{"3", "start-up, size, idle memory", b.fig3},
		{"4", "edits of a 2,000-cell notebook", b.fig4},
		{"5", "read_cell throughput", b.fig5},
		{"6", "memory with 10 notebooks", b.fig6},
		{"7", "TUI under an output flood", b.fig7},
		{"8", "group commit: 8 sessions inserting", b.fig8},
		{"9", "reads during writes", b.fig9},
		{"10", "execute_code 1+1 on a stock jupyter-server", b.fig10},
		{"11", "instant start", b.figInstant},
		{"12", "big notebooks in the workbench", b.figBigNotebook},
		{"13", "long runs as MCP tasks", b.figTasks},
	}
	for _, s := range steps {
		if len(want) > 0 && !want[s.n] {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		progress("figure %s: %s", s.n, s.name)
		t0 := time.Now()
		figs := s.f()
		for _, f := range figs {
			f.judge()
			rep.Figures = append(rep.Figures, f)
			if f.Result == "FAIL" || f.Result == "error" {
				rep.Failures++
			}
		}
		progress("figure %s done in %.1f s", s.n, time.Since(t0).Seconds())
	}
	rep.Seconds = time.Since(rep.Started).Seconds()

	fmt.Println()
	rep.printTable(os.Stdout)
	if err := rep.write(outPath); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	progress("wrote %s", outPath)
	if rep.Failures > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}

// setup builds the binary if needed, starts Jupyter and a kernel, and the
// long-lived clients of the paired figures.
func (b *bench) setup(bin string) error {
	ctx := b.ctx
	if err := os.MkdirAll(b.root, 0o755); err != nil {
		return err
	}
	bin, err := ensureBinary(bin, b.work)
	if err != nil {
		return err
	}

	progress("writing the test notebooks")
	nb, err := bigNotebook(2000, 2500)
	if err != nil {
		return err
	}
	for _, name := range []string{"big.ipynb", "raw.ipynb", "read.ipynb"} {
		if err := os.WriteFile(filepath.Join(b.root, name), nb, 0o644); err != nil {
			return err
		}
	}

	progress("starting Jupyter")
	log, err := os.Create(filepath.Join(b.work, "jupyter.log"))
	if err != nil {
		return err
	}
	b.defer_(func() { log.Close() })
	b.jup, err = jupyter.StartManaged(ctx, jupyter.ManagedOptions{RootDir: b.root, Log: log})
	if err != nil {
		return err
	}
	b.defer_(func() {
		progress("stopping Jupyter")
		_ = b.jup.Stop()
	})
	b.t = &target{bin: bin, jupyterURL: b.jup.URL, jupyterToken: b.jup.Token, logDir: b.work}
	if b.jc, err = jupyter.NewClient(b.jup.URL, b.jup.Token, jupyter.Options{Timeout: 2 * time.Minute}); err != nil {
		return err
	}
	k, err := b.jc.StartKernel(ctx, "python3")
	if err != nil {
		return err
	}
	b.kernel = k.ID

	// jupyter_client reaches the kernel through its connection file, which
	// the managed server keeps in its private runtime directory.
	connFile := filepath.Join(b.jup.RuntimeDir, "kernel-"+k.ID+".json")
	if _, err := os.Stat(connFile); err != nil {
		return fmt.Errorf("the kernel's connection file: %w", err)
	}
	pyLog, err := os.Create(filepath.Join(b.work, "baseline.log"))
	if err != nil {
		return err
	}
	b.defer_(func() { pyLog.Close() })
	if b.py, err = startBaseline(b.jup.Python, b.work, pyLog); err != nil {
		return err
	}
	b.defer_(b.py.close)
	progress("connecting jupyter_client to kernel %s", k.ID)
	if err := b.py.connect(connFile); err != nil {
		return err
	}

	if b.raw, err = b.jc.ConnectKernel(ctx, k.ID); err != nil {
		return err
	}
	b.defer_(func() { b.raw.Close() })

	progress("starting %s over stdio and over HTTP", bin)
	if b.stdio, err = b.t.startStdio(ctx, "stdio"); err != nil {
		return err
	}
	b.defer_(b.stdio.close)
	if b.http, err = b.t.startHTTP(ctx, "http"); err != nil {
		return err
	}
	b.defer_(b.http.close)
	if b.httpSDK, err = b.http.connectSDK(ctx); err != nil {
		return err
	}
	b.defer_(func() { b.httpSDK.Close() })
	return nil
}

// ensureBinary returns the binary to measure: the given path when it exists
// (make bench builds it first), else a fresh build of this module.
func ensureBinary(bin, work string) (string, error) {
	if st, err := os.Stat(bin); err == nil && !st.IsDir() {
		return filepath.Abs(bin)
	}
	out := filepath.Join(work, "jupyter-mcp-server")
	progress("%s not found: building it", bin)
	if err := harness.Build(out, "-trimpath", "-ldflags", "-s -w"); err != nil {
		return "", err
	}
	return out, nil
}

// errFigure is a figure that could not be measured.
func errFigure(id, name string, err error) *figure {
	if errors.Is(err, context.Canceled) {
		err = errors.New("interrupted")
	}
	return &figure{ID: id, Name: name, Error: err.Error()}
}

// callCtx bounds one tool call.
func (b *bench) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, 2*time.Minute)
}
