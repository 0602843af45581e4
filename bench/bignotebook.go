package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// figBigNotebook (figure 12) is the notebook pane with big notebooks: the workbench's model
// (Update with a key or an output event, then View, as bubbletea runs it)
// scrolling a notebook of 2,000 cells with small PNGs, and a cell's output
// arriving in it, each paired with the same in a notebook of 10 cells. The
// frames are timed by the ui package's benchmarks (BenchmarkNotebookScroll,
// BenchmarkNotebookOutput), which run in-process on the real model.
func (b *bench) figBigNotebook() []*figure {
	fail := func(err error) []*figure { return []*figure{errFigure("12", "big notebooks", err)} }
	cmd := exec.CommandContext(b.ctx, "go", "test", "./ui", "-run", "XXX", "-bench", "^(BenchmarkNotebookScroll|BenchmarkNotebookOutput)$",
		"-benchtime", "3000x", "-count", "1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return fail(fmt.Errorf("go test ./ui -bench: %v\n%s%s", err, out.String(), errOut.String()))
	}
	// name -> metric -> value, e.g. NotebookScroll/cells=2000 -> p95-ms/frame.
	res := map[string]map[string]float64{}
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkNotebook") {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i] // the GOMAXPROCS suffix
		}
		res[name] = map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				res[name][f[i+1]] = v
			}
		}
	}
	get := func(name, metric string) (float64, error) {
		v, ok := res[name][metric]
		if !ok {
			return 0, fmt.Errorf("no %s %s in the benchmark output:\n%s", name, metric, out.String())
		}
		return v, nil
	}
	var vals [8]float64
	for i, k := range []struct{ name, metric string }{
		{"NotebookScroll/cells=2000", "p95-ms/frame"}, {"NotebookScroll/cells=10", "p95-ms/frame"},
		{"NotebookScroll/cells=2000", "p50-ms/frame"}, {"NotebookScroll/cells=10", "p50-ms/frame"},
		{"NotebookOutput/cells=2000", "p50-ms/frame"}, {"NotebookOutput/cells=10", "p50-ms/frame"},
		{"NotebookOutput/cells=2000", "p95-ms/frame"}, {"NotebookOutput/cells=10", "p95-ms/frame"},
	} {
		v, err := get(k.name, k.metric)
		if err != nil {
			return fail(err)
		}
		vals[i] = v
	}
	scroll10, out10 := vals[1], vals[5]
	return []*figure{
		{ID: "12a", Name: "scroll a 2,000-cell notebook with images, per frame", Unit: "ms", Ours: vals[0], Baseline: &scroll10,
			BaselineName: "10 cells", Samples: 3000, goal: atMost, limit: 16,
			Notes: fmt.Sprintf("p95 of 3,000 frames (down, page down every 10th: the whole notebook and back), each its best of 3 sweeps on fresh models; p50 %.2f vs %.2f ms; 160x50, 256 colours",
				vals[2], vals[3])},
		{ID: "12b", Name: "an output arriving in a 2,000-cell notebook", Unit: "ms", Ours: vals[4], Baseline: &out10,
			BaselineName: "10 cells", Samples: 3000, goal: ratioMax, limit: 2,
			Notes: fmt.Sprintf("p50 of 3,000 output events for a cell in view (with a plot), Update+View, each its best of 3 runs; p95 %.2f vs %.2f ms", vals[6], vals[7])},
	}
}
