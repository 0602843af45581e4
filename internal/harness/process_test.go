package harness

import (
	"slices"
	"testing"
)

func TestCleanEnvDropsTheOptionsAndAddsExtras(t *testing.T) {
	t.Setenv("MCP_TOKEN", "developer-token")
	t.Setenv("JUPYTER_URL", "http://developer:8888")
	t.Setenv("HARNESS_KEPT", "1")
	env := CleanEnv("EXTRA=2")
	for _, kv := range env {
		if kv == "MCP_TOKEN=developer-token" || kv == "JUPYTER_URL=http://developer:8888" {
			t.Errorf("%s reached the child's environment", kv)
		}
	}
	for _, want := range []string{"HARNESS_KEPT=1", "EXTRA=2", "PYDEVD_DISABLE_FILE_VALIDATION=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("%s is missing", want)
		}
	}
}
