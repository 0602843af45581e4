package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/jupyter-mcp-workbench/jupyter-mcp-server"

// A target is a package path a rule names: the package alone (the engine's
// core, module/engine, whose sub-packages are other rooms), or the package
// and everything under it.
type target struct {
	path  string
	alone bool
}

func (t target) matches(pkg string) bool {
	return pkg == t.path || (!t.alone && strings.HasPrefix(pkg, t.path+"/"))
}

func under(path string) target { return target{path: path} }

// theCore is the engine's shared-state core, without its sub-packages.
var theCore = target{path: module + "/engine", alone: true}

var (
	screen      = []target{under("github.com/charmbracelet/bubbletea"), under("github.com/charmbracelet/lipgloss")}
	protocolSDK = under("github.com/modelcontextprotocol/go-sdk")
)

// linkRules are the arrows of DESIGN.md that hold for everything a package
// links, directly or not (tests excluded): the engine links neither screens
// nor protocol nor the packages above it; the MCP adapter links no screen;
// the workbench links neither the engine's core nor MCP; the engine's
// sub-packages never link the core; the theme and the list of hidden
// characters (internal/invisible) link nothing of ours.
var linkRules = []struct {
	pattern   string
	forbidden []target
}{
	{"./engine/...", append([]target{protocolSDK, under(module + "/ui"), under(module + "/theme"), under(module + "/mcp")}, screen...)},
	{"./mcp/...", append([]target{under(module + "/ui"), under(module + "/theme")}, screen...)},
	{"./ui/...", []target{theCore, under(module + "/mcp"), protocolSDK}},
	{"./theme/...", []target{under(module)}},
	{"./internal/invisible/...", []target{under(module)}},
}

// importRules are the arrows DESIGN.md draws from a package to ours: the
// only packages of this module it may import itself. main wires the
// workbench, the MCP server, the engine and the theme (and the internal
// helpers); the workbench sees the engine's vocabulary (event), its call
// registry (calls), the observation layer (observe) and the redaction of
// secrets, and the theme; the workbench and the MCP adapter share the list
// of characters that hide (internal/invisible), so that a held call's card
// and the question put through the client show the same markers.
var importRules = []struct {
	pattern string
	allowed []target
}{
	{".", []target{under(module + "/ui"), under(module + "/mcp"), under(module + "/engine"), under(module + "/theme"), under(module + "/internal")}},
	{"./ui/...", []target{
		under(module + "/engine/event"), under(module + "/engine/calls"), under(module + "/engine/observe"), under(module + "/engine/secret"),
		under(module + "/theme"), under(module + "/ui"), under(module + "/internal/invisible"),
	}},
	{"./mcp/...", []target{under(module + "/engine"), under(module + "/mcp"), under(module + "/internal/invisible")}},
}

// list lists, for every package pattern matches, the packages of field
// ({{.Deps}}: linked, {{.Imports}}: imported), tests excluded.
func list(t *testing.T, pattern, field string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range "+field+"}} {{.}}{{end}}", pattern).Output()
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
func violations(pkgs map[string][]string, forbidden []target) []string {
	var bad []string
	for pkg, ds := range pkgs {
		for _, d := range ds {
			for _, f := range forbidden {
				if f.matches(d) {
					bad = append(bad, pkg+" -> "+d)
				}
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestArrows checks the arrows with the go tool's own view of the
// dependency graph, so an indirect link (engine -> some helper -> ui)
// counts as much as a direct one.
func TestArrows(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go tool is not on PATH")
	}
	for _, r := range linkRules {
		pkgs := list(t, r.pattern, ".Deps")
		if r.pattern == "./engine/..." {
			if _, ok := pkgs[module+"/engine/observe"]; !ok {
				t.Errorf("%s does not hold engine/observe: the feed, recorder and state projection must live under engine/", r.pattern)
			}
		}
		for _, v := range violations(pkgs, r.forbidden) {
			t.Errorf("%s links %s", r.pattern, v)
		}
	}
	// The engine's sub-packages reach the rest through data and funcs:
	// none links the core.
	subs := list(t, "./engine/...", ".Deps")
	delete(subs, theCore.path)
	for _, v := range violations(subs, []target{theCore}) {
		t.Errorf("an engine sub-package links the core: %s", v)
	}
	for _, r := range importRules {
		for pkg, imps := range list(t, r.pattern, ".Imports") {
			for _, imp := range imps {
				if !strings.HasPrefix(imp, module) {
					continue
				}
				if !slices.ContainsFunc(r.allowed, func(a target) bool { return a.matches(imp) }) {
					t.Errorf("%s imports %s, which DESIGN.md draws no arrow to", pkg, imp)
				}
			}
		}
	}

	// The check itself: what the rules forbid is found where it is.
	if len(violations(list(t, "./ui", ".Deps"), screen)) == 0 {
		t.Fatal("the dependency check finds no bubbletea in ./ui: the check is broken")
	}
	if len(violations(list(t, "./mcp", ".Deps"), []target{theCore})) == 0 {
		t.Fatal("the dependency check finds no engine core in ./mcp, which calls it: the check is broken")
	}
	if len(violations(list(t, "./engine/undo", ".Deps"), []target{theCore})) != 0 ||
		len(violations(map[string][]string{"x": {theCore.path + "/undo"}}, []target{theCore})) != 0 {
		t.Fatal("the core's target matches its sub-packages: the check is broken")
	}
}
