package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// What the agent reads must reflect the file: another process, JupyterLab
// or a person may have changed or deleted it since we last read or wrote
// it. Before serving cells a reader checks the file's last_modified (a GET
// without content, cheap) and reloads the notebook when it changed.
//
// Readers coalesce, so that a busy notebook costs the Jupyter server a few
// requests a second, not one per read, and reads rarely wait for one:
//   - a check's answer serves the reads of the next freshWindow as it is;
//   - up to staleWindow after the start of the last check, a read starts a
//     new check (or lets the one in flight run) and serves without waiting
//     for it, when the last check found nothing wrong;
//   - later (a notebook nobody read for a while), a read waits for a check,
//     joining the one in flight if there is one.
// What a read serves is so the file as it was at most staleWindow before
// the read. Our own saves are always seen at once.
//
// Reads never wait for our own saves: a mutation publishes its new model
// (copy-on-write, documents.go) only once its save succeeded, so a read
// serves the last saved state, never a change that may yet fail to save,
// and after a failed save it still serves what is on disk.

const (
	freshWindow = 50 * time.Millisecond
	staleWindow = 2 * freshWindow
)

// freshCheck is the check in flight for one document, and the last one.
type freshCheck struct {
	mu   sync.Mutex
	cur  *flight // in flight
	last *flight // the last finished
}

type flight struct {
	started time.Time
	done    chan struct{}
	err     error
}

// ensureFresh makes d's model reflect its file (see above). It fails when
// the file is gone or no longer a notebook.
func (e *Engine) ensureFresh(ctx context.Context, d *document, session string) error {
	d.check.mu.Lock()
	l := d.check.last
	if l != nil && time.Since(l.started) < freshWindow {
		d.check.mu.Unlock()
		return l.err
	}
	f := d.check.cur
	if f == nil {
		f = &flight{started: time.Now(), done: make(chan struct{})}
		d.check.cur = f
		check := func() {
			// Detached from this reader: others may be waiting on it.
			f.err = e.checkFile(context.WithoutCancel(ctx), d, session)
			d.check.mu.Lock()
			d.check.cur, d.check.last = nil, f
			d.check.mu.Unlock()
			close(f.done)
		}
		if !e.checks.start(check) {
			// The engine is closing: Close waits for no more checks.
			f.err = errClosing
			d.check.cur = nil
			close(f.done)
		}
	}
	d.check.mu.Unlock()
	if l != nil && l.err == nil && time.Since(l.started) < staleWindow {
		return nil
	}
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
	m, err := d.file.Client().Get(ctx, d.path, false)
	if err != nil {
		if jupyter.IsNotFound(err) {
			return e.restoreSetAside(ctx, d, session)
		}
		return err
	}
	d.mu.RLock()
	same := m.LastModified.Equal(d.lastModified)
	d.mu.RUnlock()
	if same {
		return nil
	}
	// A save of ours under way changes the file before we learn its new
	// last_modified: the difference is most likely that save, and waiting
	// for it would make reads wait on writes. Serve the model as it is (the
	// last saved state); the next check compares again. A save that just
	// ended has set lastModified before it stops counting as under way.
	if d.saving.Load() > 0 {
		return nil
	}
	d.mu.RLock()
	same = m.LastModified.Equal(d.lastModified)
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

// restoreSetAside answers a check that found d's file missing. When the
// server set our last save aside after answering it (nbfile.MovedAside),
// the save is made again from d.nb, as the next change would make it, so
// that neither a read nor the watcher reports the notebook gone while it
// holds every acknowledged change. A file removed by someone stays
// removed.
func (e *Engine) restoreSetAside(ctx context.Context, d *document, session string) error {
	gone := &NotebookFileGoneError{Notebook: d.name, Path: d.path}
	d.mu.RLock()
	nb, saved := d.nb, d.lastModified
	d.mu.RUnlock()
	if !d.file.MovedAside(ctx, nb, saved) {
		return gone
	}
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	// Checked again under the save lock; a save is never cut short.
	_, err := e.commitOnce(context.WithoutCancel(ctx), d, session, func() []*pendingMutation { return nil })
	return err
}

// errClosing refuses work the engine would start while it closes.
var errClosing = errors.New("the server is shutting down")

// background runs goroutines of the engine's own that Close waits for
// (the freshness checks, which another reader may wait on and which may
// save a reload), and starts none once Close began.
type background struct {
	mu      sync.Mutex
	closing bool
	wg      sync.WaitGroup
}

// start runs f on a goroutine of its own, reporting false (not running
// it) once the engine is closing.
func (b *background) start(f func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return false
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f()
	}()
	return true
}

// close starts no more and returns a channel closed once those running
// have returned.
func (b *background) close() <-chan struct{} {
	b.mu.Lock()
	b.closing = true
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	return done
}
