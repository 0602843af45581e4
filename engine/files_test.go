package engine

import (
	"os"
	"strings"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

func testListFiles(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	for _, p := range []string{"top.txt", "nb.ipynb", "sub/mid.csv", "sub/deep/low.csv", "sub/deep/deeper/bottom.ipynb"} {
		abs := f.srv.Path(f.path(p))
		if err := os.MkdirAll(abs[:strings.LastIndex(abs, "/")], 0o755); err != nil {
			t.Fatal(err)
		}
		content := "x"
		if strings.HasSuffix(p, ".ipynb") {
			data, _ := notebook.New().Marshal()
			content = string(data)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths := func(es []FileEntry) []string {
		out := make([]string, len(es))
		for i, x := range es {
			out[i] = strings.TrimPrefix(x.Path, f.dir+"/")
		}
		return out
	}
	cases := []struct {
		depth   int
		pattern string
		want    []string
	}{
		{0, "", []string{"nb.ipynb", "sub", "top.txt"}},
		{1, "", []string{"nb.ipynb", "sub", "sub/deep", "sub/mid.csv", "top.txt"}},
		{3, "", []string{"nb.ipynb", "sub", "sub/deep", "sub/deep/deeper", "sub/deep/deeper/bottom.ipynb", "sub/deep/low.csv", "sub/mid.csv", "top.txt"}},
		{3, "*.ipynb", []string{"nb.ipynb", "sub/deep/deeper/bottom.ipynb"}},
		{3, f.dir + "/sub/**/*.csv", []string{"sub/deep/low.csv", "sub/mid.csv"}},
		{1, "*.csv", []string{"sub/mid.csv"}},
	}
	for _, tc := range cases {
		got, err := e.ListFiles(ctx, f.dir, tc.depth, tc.pattern)
		checkNoError(t, "list files", err)
		if !equalStrings(paths(got), tc.want) {
			t.Errorf("ListFiles(depth %d, %q) = %q, want %q", tc.depth, tc.pattern, paths(got), tc.want)
		}
	}
	got, err := e.ListFiles(ctx, f.path("top.txt"), 1, "")
	checkNoError(t, "list a file", err)
	if len(got) != 1 || got[0].Type != "file" || got[0].Size == nil || *got[0].Size != 1 {
		t.Fatalf("ListFiles(file) = %+v", got)
	}
	if got[0].LastModified.IsZero() {
		t.Error("no last_modified")
	}
	_, err = e.ListFiles(ctx, f.path("nope"), 1, "")
	wantUserError(t, err, `"`+f.path("nope")+`"`)
	_, err = e.ListFiles(ctx, f.dir, 4, "")
	if d := wantErrorAs[*DepthError](t, err); d.Depth != 4 || d.Max != 3 {
		t.Errorf("DepthError = %+v", d)
	}
	_, err = e.ListFiles(ctx, f.dir, 1, "[")
	wantUserError(t, err, "not a valid glob")
}
