package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The MCP tools and their snake_case arguments, as the reference (spec 001)
// lists them. The engine serves the workbench as well as MCP, so its texts
// speak of notebooks, cells and kernels; which tool or argument fixes a
// problem is mcp/'s to say (mcp/errors.go).
var (
	mcpToolNames = []string{
		"clear_cell_output", "connect_to_jupyter", "delete_cell", "edit_cell_source",
		"execute_cell", "execute_code", "insert_cell", "insert_execute_code_cell",
		"launch_sandbox", "list_files", "list_kernels", "list_notebooks",
		"list_sandboxes", "move_cell", "overwrite_cell_source", "read_cell",
		"read_notebook", "restart_notebook", "terminate_sandbox", "unuse_notebook",
		"use_notebook", "use_sandbox",
	}
	mcpArgumentNames = []string{
		"cell_id", "cell_ids_to_delete", "cell_index", "cell_indices", "cell_source",
		"cell_type", "channels_url", "document_provider", "environment_version",
		"include_outputs", "include_source", "jupyter_token", "jupyter_url",
		"kernel_id", "max_depth", "new_string", "notebook_name", "notebook_path",
		"old_string", "progress_interval", "proxy_token", "python_version",
		"replace_all", "response_format", "sandbox_name", "server_url",
		"snapshot_name", "source_cell_id", "source_index", "start_index",
		"target_cell_id", "target_index",
	}
)

// vocabularyAllowed are words a package may use because they are not the
// MCP argument there: "cell_type" is nbformat's own key, which the notebook
// package reads and writes.
var vocabularyAllowed = map[string][]string{
	"notebook": {"cell_type"},
}

var mcpVocabulary = regexp.MustCompile(`\b(` + strings.Join(append(append([]string{}, mcpToolNames...), mcpArgumentNames...), "|") + `)\b`)

// vocabularyHits lists, as "file:line: word in literal", the MCP tool and
// argument names in the string literals of one Go source. Struct tags are
// not texts anyone reads and are skipped; so are comments.
func vocabularyHits(fset *token.FileSet, f *ast.File, allowed []string) []string {
	tags := map[*ast.BasicLit]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if fl, ok := n.(*ast.Field); ok && fl.Tag != nil {
			tags[fl.Tag] = true
		}
		return true
	})
	var hits []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || tags[lit] {
			return true
		}
		for _, w := range mcpVocabulary.FindAllString(lit.Value, -1) {
			if !slices.Contains(allowed, w) {
				hits = append(hits, fset.Position(lit.Pos()).String()+": "+w+" in "+lit.Value)
			}
		}
		return true
	})
	return hits
}

// TestNoMCPVocabulary fails naming file:line when a string literal in the
// engine (any subpackage, test files aside) names an MCP tool or argument.
func TestNoMCPVocabulary(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, h := range vocabularyHits(fset, f, vocabularyAllowed[filepath.Base(filepath.Dir(path))]) {
			t.Errorf("%s: the engine names an MCP tool or argument; return a typed error and word it in mcp/errors.go", h)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("scanned only %d files: is the test running in engine/?", files)
	}
}

// TestVocabularyHitsFinds shows the scan catches a name in a literal, and
// only there.
func TestVocabularyHitsFinds(t *testing.T) {
	t.Parallel()
	src := `package p

// use_notebook in a comment is fine.
type T struct {
	K string ` + "`json:\"kernel_id\"`" + `
}

var ok = "no current notebook"
var bad = "call use_notebook first"
var raw = ` + "`pass cell_index`" + `
var nbformat = "cell_type"
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := vocabularyHits(fset, f, []string{"cell_type"})
	if len(got) != 2 || !strings.HasPrefix(got[0], "p.go:9:11: use_notebook") || !strings.HasPrefix(got[1], "p.go:10:11: cell_index") {
		t.Fatalf("hits = %q, want use_notebook at p.go:9 and cell_index at p.go:10", got)
	}
}
