package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// exportsDir is the folder the workbench's E writes its exports to: one of
// our own, never inside served (the folder the Jupyter server serves), so
// that an export, which holds every result shown, is not a file an agent
// then finds with list_files. It is the user's state directory
// ($XDG_STATE_HOME or ~/.local/state, ~/Library/Application Support on
// macOS, %LocalAppData% on Windows) under jupyter-mcp-server/exports, or,
// when that lies inside served (a server rooted at the home directory), a
// folder of the temporary directory named for the user.
func exportsDir(served string) string {
	candidates := []string{}
	if d := stateDir(); d != "" {
		candidates = append(candidates, filepath.Join(d, "jupyter-mcp-server", "exports"))
	}
	candidates = append(candidates, filepath.Join(os.TempDir(), "jupyter-mcp-server-exports-"+strconv.Itoa(os.Getuid())))
	for _, c := range candidates {
		if served == "" || !inside(c, served) {
			return c
		}
	}
	return candidates[len(candidates)-1]
}

// stateDir is where this user's programs keep their state, "" when it
// cannot be told.
func stateDir() string {
	switch runtime.GOOS {
	case "windows":
		return os.Getenv("LocalAppData")
	case "darwin":
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, "Library", "Application Support")
		}
		return ""
	}
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state")
	}
	return ""
}

// inside reports whether path is dir or lies under it.
func inside(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	if ep, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(ep, filepath.Base(p))
	}
	if ed, err := filepath.EvalSymlinks(d); err == nil {
		d = ed
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// servedRoot is the folder the managed Jupyter serves (--root-dir, else
// the working directory); "" with --jupyter-url, whose root is not ours
// to know.
func servedRoot(cfg *config) string {
	if cfg.JupyterURL != "" {
		return ""
	}
	if cfg.RootDir != "" {
		return cfg.RootDir
	}
	wd, _ := os.Getwd()
	return wd
}
