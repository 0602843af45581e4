package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// Eight agents, each in its own MCP session, insert into the same notebook
// at once and then rewrite their own cells by id. The file ends with every
// cell exactly once, each agent's cells in the order it inserted them, with
// the rewritten sources: no lost update, no duplicate.
func TestConcurrentClientsOneNotebook(t *testing.T) {
	srv := jupytertest.Shared(t)
	ip, _ := startInProcess(t, srv)
	sub := srv.Subdir(t)
	path := writeNotebook(t, srv, sub+"/shared.ipynb", "# header")

	const clients, perClient = 8, 6
	var wg sync.WaitGroup
	errs := make(chan error, clients*perClient*2)
	start := make(chan struct{})
	for c := 0; c < clients; c++ {
		cs := ip.connect(t)
		ok(t, cs, "use_notebook", map[string]any{"notebook_name": "shared", "notebook_path": path})
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			call := func(name string, args map[string]any) (string, string, error) {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					return "", "", fmt.Errorf("client %d %s: %v", c, name, err)
				}
				if res.IsError {
					return "", "", fmt.Errorf("client %d %s(%v): %s", c, name, args, textOf(res))
				}
				return textOf(res), cellID(res), nil
			}
			var ids []string
			for i := 0; i < perClient; i++ {
				// Appends and inserts at the top, so that positions
				// shift under the other clients.
				index := -1
				if i%2 == 1 {
					index = 0
				}
				_, id, err := call("insert_cell", map[string]any{"cell_index": index, "cell_type": "code",
					"cell_source": fmt.Sprintf("# client %d cell %d", c, i), "notebook_name": "shared"})
				if err != nil {
					errs <- err
					return
				}
				ids = append(ids, id)
				// Reads race the writes.
				if _, _, err := call("read_notebook", map[string]any{"notebook_name": "shared", "limit": 0}); err != nil {
					errs <- err
				}
			}
			for i, id := range ids {
				if _, _, err := call("overwrite_cell_source", map[string]any{"cell_id": id, "notebook_name": "shared",
					"cell_source": fmt.Sprintf("# client %d cell %d v2", c, i)}); err != nil {
					errs <- err
				}
			}
		}(c)
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	nb := parseFile(t, srv.Path(path))
	seen := map[string]int{}
	for _, cell := range nb.Cells {
		seen[cell.Source]++
	}
	if len(nb.Cells) != 1+clients*perClient {
		t.Errorf("the notebook has %d cells, want %d", len(nb.Cells), 1+clients*perClient)
	}
	for c := 0; c < clients; c++ {
		// Appended cells (even i) keep their order going down, cells
		// inserted at the top (odd i) going up.
		lastAppend, lastTop := -1, len(nb.Cells)
		for i := 0; i < perClient; i++ {
			src := fmt.Sprintf("# client %d cell %d v2", c, i)
			if seen[src] != 1 {
				t.Errorf("%q appears %d times", src, seen[src])
				continue
			}
			pos := -1
			for j, cell := range nb.Cells {
				if cell.Source == src {
					pos = j
				}
			}
			if i%2 == 0 {
				if pos < lastAppend {
					t.Errorf("client %d: appended cell %d at %d, before its previous append at %d", c, i, pos, lastAppend)
				}
				lastAppend = pos
			} else {
				if pos > lastTop {
					t.Errorf("client %d: top cell %d at %d, after its previous top insert at %d", c, i, pos, lastTop)
				}
				lastTop = pos
			}
		}
	}
	if seen["# header"] != 1 {
		t.Errorf("the original cell is gone or doubled: %d", seen["# header"])
	}
	for src, n := range seen {
		if !strings.HasSuffix(src, "v2") && src != "# header" {
			t.Errorf("a cell kept its first source (lost rewrite): %q ×%d", src, n)
		}
	}
	ids := map[string]bool{}
	for _, cell := range nb.Cells {
		if ids[cell.ID] {
			t.Errorf("duplicate cell id %q", cell.ID)
		}
		ids[cell.ID] = true
	}
}

// A person edits the file (through Jupyter's Contents API, as JupyterLab
// does) between two of our edits: their edit survives ours.
func TestExternalEditSurvives(t *testing.T) {
	srv := jupytertest.Shared(t)
	ip, _ := startInProcess(t, srv)
	sub := srv.Subdir(t)
	path := writeNotebook(t, srv, sub+"/ext.ipynb", "a = 1")
	cs := ip.connect(t)
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "ext", "notebook_path": path})
	_, res := ok(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "ours = 1"})
	oursID := cellID(res)

	// The external writer appends a markdown cell and rewrites cell 0.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := srv.Client()
	m, err := c.Get(ctx, path, true)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(m.Content, &doc); err != nil {
		t.Fatal(err)
	}
	cells := doc["cells"].([]any)
	cells[0].(map[string]any)["source"] = "a = 'edited by a person'"
	doc["cells"] = append(cells, map[string]any{"cell_type": "markdown", "id": "external", "metadata": map[string]any{}, "source": "written by a person"})
	data, _ := json.Marshal(doc)
	if _, err := c.SaveNotebook(ctx, path, data); err != nil {
		t.Fatal(err)
	}

	// Our next edit by id applies to what is on disk now.
	ok(t, cs, "overwrite_cell_source", map[string]any{"cell_id": oursID, "cell_source": "ours = 2"})
	// An edit by index may be refused once (the indices may have moved);
	// then it must work.
	res = callTool(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "ours_last = 3"})
	if res.IsError {
		if !strings.Contains(textOf(res), "changed on disk") {
			t.Fatalf("insert after an external edit: %s", textOf(res))
		}
		ok(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "ours_last = 3"})
	}

	nb := parseFile(t, srv.Path(path))
	var got []string
	for _, cell := range nb.Cells {
		got = append(got, cell.Source)
	}
	want := []string{"a = 'edited by a person'", "ours = 2", "written by a person", "ours_last = 3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("cells after the external edit = %q, want %q", got, want)
	}
	// The engine's view agrees with the file.
	text, _ := ok(t, cs, "read_notebook", map[string]any{"notebook_name": "ext", "response_format": "detailed", "limit": 0})
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("read_notebook misses %q:\n%s", w, text)
		}
	}
}
