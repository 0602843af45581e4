// Package e2e tests the built binary end to end, as its users run it: over
// stdio and streamable HTTP with go-sdk clients, and as the workbench in a
// real terminal (tmux), attached to a stdio server, recording and replaying,
// always against a real managed Jupyter server. The tests reach the product
// only through internal/harness and the binary it builds once per run.
package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: error result: %s", name, harness.Text(res))
	}
	return res
}

// leftovers lists processes whose command line mentions dir (the managed
// Jupyter server and its kernels carry the root dir or a runtime dir in it),
// but for those that mention one of ignore.
func leftovers(dir string, ignore ...string) []string {
	out, _ := exec.Command("ps", "-eo", "pid,args").Output()
	var found []string
lines:
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.Contains(l, dir) || strings.Contains(l, "ps -eo") {
			continue
		}
		for _, ig := range ignore {
			if strings.Contains(l, ig) {
				continue lines
			}
		}
		found = append(found, strings.TrimSpace(l))
	}
	return found
}
