package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/nbfile"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Group commit. Saving a notebook costs the same whether it holds one new
// change or eight: the save lock's round trips, the JSON of every cell, and
// Jupyter's own write and validation of the whole file. So the mutations
// that wait on one notebook while a save runs are not saved one by one:
// when the save ends, one of them (the leader) takes all that are waiting,
// applies them in the order they came, each to the result of the one
// before (as if they had run one after the other), and saves once.
//
//   - Every call answers only after the save that holds its change
//     succeeded: nothing is acknowledged before it is on disk.
//   - A change that fails on its own (an unknown cell id, an index out of
//     range) fails alone: what it did to the working copy is undone before
//     the next change is applied.
//   - A failed save (or lock, or reload) fails every call whose change was
//     in the group. The model is not touched: the working copy is
//     published only after the save succeeded, so readers and later calls
//     see the notebook as it is on disk, and the workbench hears only of
//     changes that were saved.
//   - When the file changed on disk, the group's first step reloads it
//     (syncFromDisk); every change of the group that addressed cells by
//     index is then refused, since all of them were written against the
//     notebook as it was before.
//
// The leader holds writeMu for the group, as a single mutation did before;
// the save lock across processes (engine/nbfile) is taken once per group.
// Config.SerialSaves turns grouping off (one save per call), the baseline
// of make bench.

// pendingMutation is a mutation waiting for the save that will hold it.
type pendingMutation struct {
	ctx     context.Context
	session string
	byIndex bool
	apply   mutation

	// Set by the group's leader (under writeMu) before finished closes.
	err     error
	applied bool
	events  []event.NotebookEvent
	undo    *undoRecord // what reverts it (undo.go), kept once saved

	lead     chan struct{} // closed when this call must lead the next group
	finished chan struct{} // closed once err is final
}

// commitQueue holds a document's mutations waiting for a leader.
type commitQueue struct {
	mu      sync.Mutex
	pending []*pendingMutation
	leading bool // a leader is at work (or has been told to start)
}

// mutate applies a change to the document and saves it before returning.
//
// It holds the notebook's save lock on the Jupyter server (engine/nbfile)
// from before it checks the file until after the save, so that no other
// server process saves in between. Before saving it checks the file's
// last_modified: when someone else wrote the file, the notebook is reloaded
// from disk and the change is applied to what is there now. A change that
// addressed cells by index (byIndex) is refused in that case, since the
// index may now name another cell. Changes waiting at once are saved
// together (group commit, above).
func (e *Engine) mutate(ctx context.Context, d *document, session string, byIndex bool, apply mutation) error {
	p := &pendingMutation{ctx: ctx, session: session, byIndex: byIndex, apply: apply}
	// The save runs to its end whoever goes away, with the caller's
	// values and without its cancellation, detached here once: one
	// caller going away must not fail the changes of the others (a
	// change whose caller went away before it was applied is left out),
	// a save cut short would leave the file in an unknown state, and the
	// wait for the save lock has its own bound.
	saving := context.WithoutCancel(ctx)
	if e.cfg.SerialSaves {
		d.writeMu.Lock()
		defer d.writeMu.Unlock()
		e.commitGroup(saving, d, session, func() []*pendingMutation { return []*pendingMutation{p} })
		return p.err
	}
	p.lead, p.finished = make(chan struct{}), make(chan struct{})
	q := &d.queue
	q.mu.Lock()
	q.pending = append(q.pending, p)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !lead {
		// A change is never abandoned once queued: a group that holds it
		// may already be saving. The caller waits for its outcome.
		select {
		case <-p.finished:
			return p.err
		case <-p.lead:
		}
	}

	// The group is taken as late as possible: after the save lock and the
	// check of the file, just before the changes are applied. The callers
	// the last group answered have sent their next change by then, so it
	// joins this group rather than wait for the next one (taken at once,
	// groups would alternate between k and n-k of n busy callers).
	var group []*pendingMutation
	take := func() []*pendingMutation {
		q.mu.Lock()
		group = append(group, q.pending...)
		q.pending = nil
		q.mu.Unlock()
		return group
	}
	d.writeMu.Lock()
	e.commitGroup(saving, d, session, take)
	d.writeMu.Unlock()

	// Hand over before answering, so that the next group starts while
	// this one's callers get their answers.
	q.mu.Lock()
	if len(q.pending) > 0 {
		close(q.pending[0].lead)
	} else {
		q.leading = false
	}
	q.mu.Unlock()
	for _, m := range group {
		close(m.finished)
	}
	return p.err
}

// commitGroup applies and saves a group of changes, under d.writeMu,
// leaving each one's outcome in its err. take returns the group, with the
// changes that arrived since it was last called; session (the leader's) is
// named on the event of a reload. ctx is not cancelled (mutate detached
// it). A lost or stale save lock saved nothing: the whole group starts
// over.
func (e *Engine) commitGroup(ctx context.Context, d *document, session string, take func() []*pendingMutation) {
	for attempt := 1; ; attempt++ {
		group, err := e.commitOnce(ctx, d, session, take)
		var lost *nbfile.SaveLockLostError
		var stale *nbfile.SaveLockStaleError
		if (errors.As(err, &lost) || errors.As(err, &stale)) && attempt < 5 {
			continue
		}
		switch {
		case err != nil && group == nil:
			// Failed before the group was taken (the lock, the check of
			// the file): so do the changes waiting.
			for _, p := range take() {
				p.err = err
			}
		case err != nil:
			for _, p := range group {
				// A change that failed on its own keeps its own error.
				if p.err == nil {
					p.err = err
				}
			}
		}
		return
	}
}

// commitOnce is one attempt of commitGroup. It returns the group it took
// (nil when it failed before) and the error that fails the group; the
// changes' own errors are left in their err.
func (e *Engine) commitOnce(ctx context.Context, d *document, session string, take func() []*pendingMutation) ([]*pendingMutation, error) {
	lock, err := d.file.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	reloaded, err := e.syncFromDisk(ctx, d, session)
	// A file gone because the server set our last save aside after it
	// answered it (see nbfile.SaveKept) is saved again from d.nb, which
	// holds that save; a file removed by someone is not.
	restore := false
	if gone := (*NotebookFileGoneError)(nil); errors.As(err, &gone) && d.file.MovedAside(ctx, d.nb, d.lastModified) {
		e.log.Warn("the Jupyter server moved the notebook's file aside after our last save (a read elsewhere met it half-written); saving it again",
			"notebook", d.name, "path", d.path)
		err, restore = nil, true
	}
	if err != nil {
		// A file caught mid-save by another holder means the lock
		// was not ours after all.
		if verr := lock.Verify(ctx); verr != nil {
			return nil, verr
		}
		return nil, err
	}
	group := take()
	for _, p := range group {
		p.err, p.applied, p.events, p.undo = nil, false, nil, nil
	}
	cur := d.nb // only writers replace d.nb, and we are the writer
	work := *cur
	work.Cells = slices.Clone(cur.Cells)
	changed := false
	for _, p := range group {
		if err := p.ctx.Err(); err != nil {
			p.err = err // the caller went away before its change was made
			continue
		}
		// An index read before an edit made elsewhere may name another
		// cell now: whether this change found the edit, or a check before
		// it (the watcher, a read) did and the caller has not been told.
		if p.byIndex && (reloaded || e.untoldOutsideEdit(p.session, d.path)) {
			p.err = &NotebookReloadedError{Notebook: d.name}
			continue
		}
		before := work
		before.Cells = slices.Clone(work.Cells)
		events, err := e.applyMutation(d, p, &work)
		if err != nil {
			work = before
			if !errors.Is(err, errUnchanged) {
				p.err = err
			}
			continue
		}
		p.applied, p.events, changed = true, events, true
		p.undo = undoRecordOf(p.ctx, d, before.Cells, work.Cells)
	}
	if !changed && !restore {
		return group, nil
	}
	fail := func(err error) ([]*pendingMutation, error) {
		for _, p := range group {
			p.applied, p.events, p.undo = false, nil, nil
		}
		return group, err
	}
	data, err := work.Marshal()
	if err != nil {
		return fail(fmt.Errorf("writing notebook %q as JSON: %w", d.name, err))
	}
	d.saving.Add(1)
	// The file's time as syncFromDisk found it.
	m, err := d.file.SaveKept(ctx, lock, d.lastModified, &work, data)
	if err != nil {
		d.saving.Add(-1)
		return fail(err)
	}
	d.mu.Lock()
	d.nb = &work
	d.lastModified = m.LastModified
	d.mu.Unlock()
	d.saving.Add(-1)
	for _, p := range group {
		e.keepUndo(p.ctx, p.undo)
		for i := range p.events {
			ev := p.events[i]
			ev.Name, ev.Path, ev.KernelID, ev.Session = d.name, d.path, d.kernel.id, p.session
			e.publish(event.Event{Type: event.EvNotebookChanged, Notebook: &ev})
		}
	}
	return group, nil
}

// applyMutation applies one change of a group to nb. A change that panics
// (a bug) fails alone, as the MCP server fails the one request whose
// handler panicked: the leader runs other calls' changes, and a panic
// carried out of the group would leave the notebook's writer held and the
// group's other calls waiting for ever.
func (e *Engine) applyMutation(d *document, p *pendingMutation, nb *notebook.Notebook) (events []event.NotebookEvent, err error) {
	defer func() {
		if r := recover(); r != nil {
			e.log.Error("panic in a change to a notebook (server bug)", "notebook", d.name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			events, err = nil, fmt.Errorf("internal error while changing notebook %q (a bug; it has been logged); nothing was changed: %v", d.name, r)
		}
	}()
	return p.apply(nb)
}
