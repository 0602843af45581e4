package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckBigFiles runs scripts/check-big-files.sh (the CI check that keeps
// big files out of git) on a scratch repository: a file one byte over the
// limit fails the check and is named; files at the limit, with spaces in
// their names, or empty pass.
func TestCheckBigFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	script, err := filepath.Abs("scripts/check-big-files.sh")
	if err != nil {
		t.Fatal(err)
	}
	const limit = 1 << 20
	files := map[string]int{"small file.txt": 10, "at-limit.bin": limit, "empty": 0}

	run := func(t *testing.T, dir string) (string, error) {
		t.Helper()
		cmd := exec.Command("bash", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "MAX_TRACKED_BYTES=") // the default limit
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	repo := func(t *testing.T, files map[string]int) string {
		t.Helper()
		dir := t.TempDir()
		for name, size := range files {
			path := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, args := range [][]string{{"init", "-q"}, {"add", "."}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		return dir
	}

	t.Run("under the limit", func(t *testing.T) {
		out, err := run(t, repo(t, files))
		if err != nil {
			t.Fatalf("check failed on files within the limit: %v\n%s", err, out)
		}
		if !strings.Contains(out, "3 files checked") {
			t.Errorf("output does not count the 3 files:\n%s", out)
		}
	})
	t.Run("one byte over", func(t *testing.T) {
		over := map[string]int{"data/recording.bin": limit + 1}
		for name, size := range files {
			over[name] = size
		}
		out, err := run(t, repo(t, over))
		if err == nil {
			t.Fatalf("check passed with a file over the limit:\n%s", out)
		}
		if !strings.Contains(out, "data/recording.bin (1048577 bytes)") {
			t.Errorf("output does not name the big file:\n%s", out)
		}
		if strings.Contains(out, "at-limit.bin") {
			t.Errorf("output names a file at the limit:\n%s", out)
		}
	})
}
