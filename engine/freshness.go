package engine

import (
	"context"
	"sync"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// What the agent reads must reflect the file: another process, JupyterLab
// or a person may have changed or deleted it since we last read or wrote
// it. Before serving cells a reader checks the file's last_modified (a GET
// without content, cheap) and reloads the notebook when it changed.
//
// Readers coalesce: one that arrives while a check is in flight waits for
// that check instead of starting its own, so a burst of reads costs one
// request per round trip, not one per read. The answer then reflects the
// file as it was at most one round trip before the read arrived.

// freshCheck is the check in flight for one document.
type freshCheck struct {
	mu  sync.Mutex
	cur *flight
}

type flight struct {
	done chan struct{}
	err  error
}

// ensureFresh makes d's model reflect its file (see above). It fails when
// the file is gone or no longer a notebook.
func (e *Engine) ensureFresh(ctx context.Context, d *document, session string) error {
	d.check.mu.Lock()
	f := d.check.cur
	if f == nil {
		f = &flight{done: make(chan struct{})}
		d.check.cur = f
		go func() {
			// Detached from this reader: others may be waiting on it.
			f.err = e.checkFile(context.WithoutCancel(ctx), d, session)
			d.check.mu.Lock()
			d.check.cur = nil
			d.check.mu.Unlock()
			close(f.done)
		}()
	}
	d.check.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkFile compares the file's last_modified with ours and reloads the
// notebook when they differ.
func (e *Engine) checkFile(ctx context.Context, d *document, session string) error {
	m, err := d.client.Get(ctx, d.path, false)
	if err != nil {
		if jupyter.IsNotFound(err) {
			return &NotebookFileGoneError{Notebook: d.name, Path: d.path}
		}
		return err
	}
	d.mu.RLock()
	same := m.LastModified.Equal(d.lastModified)
	d.mu.RUnlock()
	if same {
		return nil
	}
	// Changed: reload under the write lock, so that a save of ours in
	// progress (whose new last_modified we do not know yet) finishes first.
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	_, err = e.syncFromDisk(ctx, d, session)
	return err
}
