package reliability

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// kill -9 of the binary in the middle of a burst of saves leaves a notebook
// that parses, holding every insert that was acknowledged, in order, and at
// most the one in flight besides.
func TestKillNineDuringSaves(t *testing.T) {
	p, srv := startShared(t, "kill-nine-token")
	sub := srv.Subdir(t)
	path := writeNotebook(t, srv, sub+"/burst.ipynb", "# start")

	const writers = 2
	acked := make([]int, writers)
	var wg sync.WaitGroup
	ready := make(chan struct{}, writers)
	for w := 0; w < writers; w++ {
		cs := p.Connect(t)
		ok(t, cs, "use_notebook", map[string]any{"notebook_name": "burst", "notebook_path": path})
		wg.Add(1)
		go func(w int, cs *sdk.ClientSession) {
			defer wg.Done()
			ready <- struct{}{}
			for i := 0; ; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "insert_cell", Arguments: map[string]any{
					"cell_index": -1, "cell_type": "code", "notebook_name": "burst",
					// Big enough that a save takes a moment to write.
					"cell_source": fmt.Sprintf("# writer %d insert %d\n%s", w, i, strings.Repeat("x = 1\n", 2000)),
				}})
				cancel()
				if err != nil || res.IsError {
					return // the server is gone
				}
				acked[w] = i + 1
			}
		}(w, cs)
	}
	for w := 0; w < writers; w++ {
		<-ready
	}
	time.Sleep(1500 * time.Millisecond)
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	wg.Wait()
	// A save the binary had sent is Jupyter's to finish; give it a moment.
	time.Sleep(300 * time.Millisecond)

	nb := parseFile(t, srv.Path(path))
	if len(nb.Cells) == 0 || nb.Cells[0].Source != "# start" {
		t.Fatalf("the first cell is gone")
	}
	next := make([]int, writers)
	for _, c := range nb.Cells[1:] {
		var w, i int
		if _, err := fmt.Sscanf(c.Source, "# writer %d insert %d", &w, &i); err != nil || w < 0 || w >= writers {
			t.Fatalf("unexpected cell %q", truncate(c.Source, 60))
		}
		if i != next[w] {
			t.Errorf("writer %d: insert %d where %d was expected (lost or repeated)", w, i, next[w])
		}
		next[w] = i + 1
	}
	total := 0
	for w := 0; w < writers; w++ {
		total += acked[w]
		if next[w] < acked[w] || next[w] > acked[w]+1 {
			t.Errorf("writer %d: %d inserts acknowledged, %d in the file", w, acked[w], next[w])
		}
	}
	if total < 4 {
		t.Errorf("only %d inserts before the kill: the burst did not run", total)
	}
	t.Logf("%d inserts acknowledged before kill -9; file has %d cells and parses", total, len(nb.Cells))
}
