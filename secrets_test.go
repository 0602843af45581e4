package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTokenFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	os.WriteFile(good, []byte("  file-token  \nsecond line\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)

	cfg, err := parseConfig([]string{"--mcp-token-file", good}, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o := cfg.origin(&cfg.MCPToken); cfg.MCPToken != "file-token" || o.from != "file" {
		t.Fatalf("token %q from %s", cfg.MCPToken, o.from)
	}
	cfg, err = parseConfig(nil, env(map[string]string{"JUPYTER_TOKEN_FILE": good}), &bytes.Buffer{})
	if err != nil || cfg.JupyterToken != "file-token" {
		t.Fatalf("jupyter token %q, %v", cfg.JupyterToken, err)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--mcp-token-file", good}, map[string]string{"MCP_TOKEN": "x"}, "both give the token"},
		{[]string{"--mcp-token-file", empty}, nil, "holds no token"},
		{[]string{"--mcp-token-file", filepath.Join(dir, "none")}, nil, "--mcp-token-file"},
	} {
		if _, err := parseConfig(c.args, env(c.env), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want %q", c.args, c.env, err, c.want)
		}
	}
}

func TestStripSecretArgs(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(nil, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--port", "5000", "--mcp-token", "a", "-jupyter-token=b", "--mcp-token-file", "/dev/fd/3", "--tui", "--", "--mcp-token", "kept"}
	want := []string{"--port", "5000", "--tui", "--", "--mcp-token", "kept"}
	if got := stripSecretArgs(cfg, args); !slices.Equal(got, want) {
		t.Fatalf("stripSecretArgs = %q, want %q", got, want)
	}
	if !exposedSecrets(cfg, []string{"--mcp-token=x"}) || exposedSecrets(cfg, []string{"--mcp-token-file", "/x"}) {
		t.Error("exposedSecrets reads the command line wrong")
	}
	passed := map[string]passedSecret{"MCP_TOKEN": {Value: "v", From: "flag"}}
	cfg, err = parseConfig(nil, withSecrets(env(nil), passed), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.notePassed(passed)
	if o := cfg.origin(&cfg.MCPToken); cfg.MCPToken != "v" || o.from != "flag" {
		t.Fatalf("passed token %q from %s", cfg.MCPToken, o.from)
	}
}
