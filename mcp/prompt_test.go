package mcp

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

func TestParseCellIndices(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec  string
		cells int
		want  []int
		err   string
	}{
		{"0,1,2", 5, []int{0, 1, 2}, ""},
		{"0-2", 5, []int{0, 1, 2}, ""},
		{"0-2,4", 5, []int{0, 1, 2, 4}, ""},
		{"3-", 5, []int{3, 4}, ""},
		{" 4 , 1-2 ,1", 5, []int{1, 2, 4}, ""},
		{"2-2", 5, []int{2}, ""},
		{"", 5, nil, "cannot be empty"},
		{"1", 0, nil, "no cells"},
		{"5", 5, nil, "Cell index 5 is out of range. Notebook has 5 cells."},
		{"3-9", 5, nil, "Cell index 5 is out of range"},
		{"7-", 5, nil, "Cell index 7 is out of range"},
		{"-2", 5, nil, "Invalid range format"},
		{"3-1", 5, nil, "End index (1) must be greater than or equal to start index (3)"},
		{"a", 5, nil, "Invalid cell index: a"},
		{"1-b", 5, nil, "Invalid end index: b"},
		{"1-2-3", 5, nil, "Invalid end index"},
	}
	for _, c := range cases {
		got, err := parseCellIndices(c.spec, c.cells)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err = %v, want %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %v, %v; want %v", c.spec, got, err, c.want)
		}
	}
}

func FuzzParseCellIndices(f *testing.F) {
	for _, s := range []string{"0,1,2", "0-2", "0-2,4", "3-", "-", ",", "1-1-1", "99999999999999999999", " 2 - 3 "} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, spec string, cells int) {
		if cells > 10000 {
			cells %= 10000
		}
		got, err := parseCellIndices(spec, cells)
		if err != nil {
			return
		}
		if !sort.IntsAreSorted(got) {
			t.Fatalf("%q: not sorted: %v", spec, got)
		}
		for i, x := range got {
			if x < 0 || x >= cells {
				t.Fatalf("%q (%d cells): index %d out of range", spec, cells, x)
			}
			if i > 0 && got[i-1] == x {
				t.Fatalf("%q: duplicate %d", spec, x)
			}
		}
	})
}

func TestCiteText(t *testing.T) {
	t.Parallel()
	one := 1
	cells := []engine.CellInfo{
		{Index: 0, ID: "a1", Type: "markdown", Source: "# Title"},
		{Index: 1, ID: "b2", Type: "code", Source: "x = 1\n", ExecutionCount: &one},
	}
	got := citeText("nb", cells, []int{0, 1}, "explain")
	// The reference's header, then the id: what read_cell shows.
	want := "USER Cite cells [0, 1] from notebook nb, here are the cells:\n" +
		"=====Cell 0 | type: markdown | execution count: N/A | id: a1=====\n# Title\n" +
		"=====Cell 1 | type: code | execution count: 1 | id: b2=====\nx = 1\n" +
		"=====End of Cited Cells=====\nUSER's Instruction are follow: explain"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestParseNotebookURI(t *testing.T) {
	t.Parallel()
	cases := []struct {
		uri  string
		want notebookURI
		ok   bool
	}{
		{"notebook://nb", notebookURI{name: "nb", output: -1}, true},
		{"notebook://my%20nb/cells/abc", notebookURI{name: "my nb", cellID: "abc", output: -1}, true},
		{"notebook://nb/cells/abc/outputs/3", notebookURI{name: "nb", cellID: "abc", output: 3}, true},
		{"notebook://", notebookURI{}, false},
		{"notebook://nb/cell/abc", notebookURI{}, false},
		{"notebook://nb/cells/abc/outputs/-1", notebookURI{}, false},
		{"notebook://nb/cells//outputs/1", notebookURI{}, false},
		{"file://nb", notebookURI{}, false},
	}
	for _, c := range cases {
		got, err := parseNotebookURI(c.uri)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("%s: got %+v, %v", c.uri, got, err)
		}
	}
	// What the cut marker names is what the parser reads back.
	uri := outputLoc{notebook: "a b/c", cellID: "x1"}.uri(2)
	got, err := parseNotebookURI(uri)
	if err != nil || got.name != "a b/c" || got.cellID != "x1" || got.output != 2 {
		t.Errorf("round trip of %s: %+v, %v", uri, got, err)
	}
}
