package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// E's folder is never inside the folder Jupyter serves: the state
// directory, or a folder of the temporary directory when the server is
// rooted above the state directory (at the home directory, say).
func TestExportsDirIsOutsideTheServedRoot(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("HOME", t.TempDir())
	want := filepath.Join(state, "jupyter-mcp-server", "exports")
	for _, served := range []string{"", t.TempDir()} {
		if got := exportsDir(served); got != want {
			t.Errorf("served %q: exports in %s, want %s", served, got, want)
		}
	}
	for _, served := range []string{state, filepath.Dir(state)} {
		got := exportsDir(served)
		if inside(got, served) {
			t.Errorf("served %s: exports in %s, inside it", served, got)
		}
	}
}

// A failed start reads on stderr as the lines it is made of.
func TestFailedToStartIsLines(t *testing.T) {
	got := failedToStart("no Python found. Tried:\n  --python: /x: missing\nInstall Jupyter with one of:\n  pip: pip install jupyter-server")
	for _, want := range []string{"\nERROR: the managed Jupyter server failed to start:\n", "\n  no Python found. Tried:\n", "\n    --python: /x: missing\n", "\n  Install Jupyter with one of:\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}
