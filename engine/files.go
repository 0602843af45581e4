package engine

import (
	"context"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/nbfile"
)

// maxListDepth is the deepest list_files goes below its starting directory.
const maxListDepth = 3

// listConcurrency bounds the directory listings in flight during a walk.
const listConcurrency = 4

// ListFiles walks the server's files from path down to maxDepth (0..3),
// keeping paths matching pattern (glob, "" = all).
//
// Depth follows the reference server: max_depth 0 lists the entries of path
// itself, 1 also lists the entries of its subdirectories, and so on. A
// directory is walked whether or not it matches the pattern; only the
// listing is filtered. The pattern is a doublestar glob matched against the
// path relative to the Jupyter root ("data/**/*.csv"); a pattern without a
// slash also matches the base name ("*.ipynb" finds notebooks at any depth).
// A path naming a file lists that file. Results are sorted by path.
func (e *Engine) ListFiles(ctx context.Context, dir string, maxDepth int, pattern string) ([]FileEntry, error) {
	if maxDepth < 0 || maxDepth > maxListDepth {
		return nil, &DepthError{Depth: maxDepth, Max: maxListDepth}
	}
	if pattern != "" && !doublestar.ValidatePattern(pattern) {
		return nil, &PatternError{Pattern: pattern}
	}
	p, err := cleanPath(dir)
	if err != nil {
		return nil, err
	}
	client := e.jupyterClient()
	match := func(m *jupyter.Model) bool {
		if pattern == "" {
			return true
		}
		if ok, _ := doublestar.Match(pattern, m.Path); ok {
			return true
		}
		if !strings.Contains(pattern, "/") {
			ok, _ := doublestar.Match(pattern, path.Base(m.Path))
			return ok
		}
		return false
	}
	entry := func(m *jupyter.Model) FileEntry {
		return FileEntry{Path: m.Path, Type: m.Type, Size: m.Size, LastModified: m.LastModified}
	}

	if p != "" {
		m, err := client.Get(ctx, p, false)
		if err != nil {
			if jupyter.IsNotFound(err) {
				return nil, &NoFileError{Path: p}
			}
			return nil, err
		}
		if m.Type != "directory" {
			if match(m) {
				return []FileEntry{entry(m)}, nil
			}
			return []FileEntry{}, nil
		}
	}

	var (
		mu      sync.Mutex
		entries = []FileEntry{}
		maybe   []FileEntry // named like a visible save lock: read to tell
		first   error
		wg      sync.WaitGroup
		slots   = make(chan struct{}, listConcurrency)
	)
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		defer wg.Done()
		slots <- struct{}{}
		models, err := client.List(ctx, dir)
		<-slots
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if first == nil {
				first = err
			}
			return
		}
		for i := range models {
			m := &models[i]
			if m.Path == "" {
				m.Path = path.Join(dir, m.Name)
			}
			// Save lock files (engine/nbfile) are ours, not the user's.
			switch {
			case !match(m) || m.Type == "file" && nbfile.IsLockFile(m.Name):
			case m.Type == "file" && nbfile.IsVisibleLockName(m.Name):
				maybe = append(maybe, entry(m))
			default:
				entries = append(entries, entry(m))
			}
			if m.Type == "directory" && depth < maxDepth {
				wg.Add(1)
				go walk(m.Path, depth+1)
			}
		}
	}
	wg.Add(1)
	walk(p, 0)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	for _, m := range maybe {
		if !nbfile.IsOurLockFile(ctx, client, m.Path) {
			entries = append(entries, m)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	return entries, nil
}
