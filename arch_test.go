package main

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/jupyter-mcp-workbench/jupyter-mcp-server"

// archRules are the arrows of DESIGN.md that keep a headless server free of
// screen code: the engine (the observation layer included) and the MCP
// adapter link neither the terminal UI nor its libraries; the engine links
// no MCP either. A package matches a forbidden path when it is that path or
// lies under it.
var archRules = []struct {
	pattern   string
	forbidden []string
}{
	{"./engine/...", []string{
		"github.com/charmbracelet/bubbletea", "github.com/charmbracelet/lipgloss",
		module + "/ui", module + "/theme", module + "/mcp", "github.com/modelcontextprotocol/go-sdk",
	}},
	{"./mcp/...", []string{
		"github.com/charmbracelet/bubbletea", "github.com/charmbracelet/lipgloss",
		module + "/ui", module + "/theme",
	}},
}

// deps lists, for every package pattern matches, the packages it links
// (transitively, tests excluded).
func deps(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", pattern).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", pattern, err, msg)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			pkgs[f[0]] = f[1:]
		}
	}
	return pkgs
}

// violations returns the forbidden packages among the links of each package.
func violations(pkgs map[string][]string, forbidden []string) []string {
	var bad []string
	for pkg, ds := range pkgs {
		for _, d := range ds {
			for _, f := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					bad = append(bad, pkg+" -> "+d)
				}
			}
		}
	}
	return bad
}

// TestHeadlessLinksNoScreen checks the arrows with the go tool's own view of
// the dependency graph, so an indirect import (engine -> some helper -> ui)
// counts as much as a direct one.
func TestHeadlessLinksNoScreen(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go tool is not on PATH")
	}
	for _, r := range archRules {
		pkgs := deps(t, r.pattern)
		if r.pattern == "./engine/..." {
			if _, ok := pkgs[module+"/engine/observe"]; !ok {
				t.Errorf("%s does not hold engine/observe: the feed, recorder and state projection must live under engine/", r.pattern)
			}
		}
		for _, v := range violations(pkgs, r.forbidden) {
			t.Errorf("%s links %s", r.pattern, v)
		}
	}
	// The check itself: the workbench does link what the rules forbid.
	ui := deps(t, "./ui")
	if len(violations(ui, archRules[1].forbidden)) == 0 {
		t.Fatal("the dependency check finds nothing in ./ui, which links bubbletea and lipgloss: the check is broken")
	}
}
