package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// BenchmarkInsertCell times insert_cell (an append, saved before it
// returns: the save lock, the freshness check and the save) on a 10-cell
// and a 500-cell notebook, one writer; the save lock alone; and read_cell
// from 8 parallel readers (each read checks the file's last_modified,
// coalesced). It reports the p50 and p90 of the calls as ms/p50 and ms/p90.
func BenchmarkInsertCell(b *testing.B) {
	srv, k, e := benchEngine(b)
	ctx := context.Background()
	dir := srv.Subdir(b)
	for _, size := range []int{10, 500} {
		nb := notebook.New()
		for i := range size {
			nb.Cells = append(nb.Cells, nb.NewCell(notebook.Code, fmt.Sprintf("x = %d\nprint(x * 2)", i)))
		}
		data, err := nb.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		path := fmt.Sprintf("%s/n%d.ipynb", dir, size)
		if _, err := srv.Client().SaveNotebook(ctx, path, data); err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("n%d", size)
		if _, err := e.UseNotebook(ctx, UseRequest{Session: "s", Name: name, Path: path, Mode: "connect", KernelID: k.ID}); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("insert_cell/%d_cells", size), func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, _, err := e.InsertCell(ctx, "s", name, -1, "code", "y = 1"); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			reportPercentiles(b, lat)
		})
		b.Run(fmt.Sprintf("save_lock/%d_cells", size), func(b *testing.B) {
			// The lock alone, as a save takes it: acquire, read back,
			// release (four requests, none carrying the notebook).
			d, err := e.lookup("s", name)
			if err != nil {
				b.Fatal(err)
			}
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				l, err := d.file.Lock(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Verify(ctx); err != nil {
					b.Fatal(err)
				}
				l.Release()
				lat = append(lat, time.Since(t0))
			}
			reportPercentiles(b, lat)
		})
		b.Run(fmt.Sprintf("read_cell/%d_cells", size), func(b *testing.B) {
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, _, err := e.ReadCell(ctx, "s", name, CellRef{Index: ptr(i % size)}); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(ms(0.5), "ms/p50")
	b.ReportMetric(ms(0.9), "ms/p90")
}
