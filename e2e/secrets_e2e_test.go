package e2e

// The secrets and options we are started with never reach code we run for
// the agent: a kernel (started by the managed Jupyter server) and an eval
// sandbox both read os.environ while this process has MCP_TOKEN,
// JUPYTER_TOKEN and other option variables set.

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

func TestChildrenDoNotInheritOurSecrets(t *testing.T) {
	bin := harness.Binary(t)
	root := t.TempDir()
	ours := optionVariables(t, bin)
	cmd := exec.Command(bin, "--transport", "stdio", "--feed", "", "--root-dir", root)
	cmd.Env = append(os.Environ(), "PYDEVD_DISABLE_FILE_VALIDATION=1",
		"MCP_TOKEN=secret-mcp-token", "JUPYTER_TOKEN=secret-jupyter-token",
		"MCP_BIND=127.0.0.1", "LOG_LEVEL=info", "EXECUTION_TIMEOUT=300",
		// Not ours: it must come through, or the test proves nothing.
		"JMS_TEST_SENTINEL=passed-through")
	cs, err := harness.ConnectStdio(context.Background(), "env-agent", cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	const show = "import os\nprint(' '.join(sorted(os.environ)))\nprint([v for v in os.environ.values() if 'secret-' in v])"
	check := func(where, out string) {
		t.Helper()
		names := map[string]bool{}
		for _, n := range strings.Fields(strings.SplitN(out, "\n", 2)[0]) {
			names[n] = true
		}
		if !names["JMS_TEST_SENTINEL"] {
			t.Fatalf("%s: the sentinel variable did not come through; environment: %q", where, out)
		}
		for _, n := range ours {
			if names[n] {
				t.Errorf("%s: our option variable %s is in the environment", where, n)
			}
		}
		if !strings.Contains(out, "[]") {
			t.Errorf("%s: a secret value is in the environment: %s", where, out)
		}
	}

	call(t, cs, "use_notebook", map[string]any{"notebook_name": "env", "notebook_path": "env.ipynb", "mode": "create"})
	check("kernel", harness.Text(call(t, cs, "execute_code", map[string]any{"code": show})))

	call(t, cs, "launch_sandbox", map[string]any{"sandbox_name": "envbox", "variant": "eval"})
	call(t, cs, "use_sandbox", map[string]any{"sandbox_name": "envbox"})
	check("eval sandbox", harness.Text(call(t, cs, "execute_code", map[string]any{"code": show})))
}

// optionLine is an option of --help: "  --name   VARIABLE   default ...".
var optionLine = regexp.MustCompile(`(?m)^  --[a-z0-9-]+ +([A-Z][A-Z0-9_]*) +default `)

// optionVariables lists the environment variables of bin's options, as its
// --help prints them: the same list the binary scrubs before it starts a
// child. The variables this test sets must be among them, or a change to
// the help's layout would leave the test checking nothing.
func optionVariables(t *testing.T, bin string) []string {
	t.Helper()
	out, err := exec.Command(bin, "--help").Output()
	if err != nil {
		t.Fatalf("%s --help: %v", bin, err)
	}
	var names []string
	for _, m := range optionLine.FindAllStringSubmatch(string(out), -1) {
		names = append(names, m[1])
	}
	for _, want := range []string{"MCP_TOKEN", "JUPYTER_TOKEN", "MCP_BIND", "LOG_LEVEL", "EXECUTION_TIMEOUT"} {
		if !slices.Contains(names, want) {
			t.Fatalf("--help names no option variable %s (found %q): has its layout changed?", want, names)
		}
	}
	return names
}
