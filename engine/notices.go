package engine

import "strconv"

// Notebook notices: one-line facts an agent is told on its next result on a
// notebook, because something it relies on changed without a call of its
// own (a person reverted one of its changes at the workbench; the file was
// edited outside, in JupyterLab, an editor or by git). They are kept per
// session and notebook path until that session's next result on that
// notebook takes them. A session that never looks at the notebook again
// keeps at most maxNotices of them; older ones are counted, not kept.

// maxNotices bounds the notices kept for one session on one notebook.
const maxNotices = 20

// noticeQueue is what one session has not yet been told about one notebook.
type noticeQueue struct {
	lines   []string
	dropped int
	// outside: an edit made elsewhere is among what the session has not
	// been told. The cell indices it last read may name other cells now,
	// so its changes by index are refused until it is told (groupcommit.go).
	outside bool
}

func (q *noticeQueue) add(text string) {
	if len(q.lines) == maxNotices {
		q.lines = append(q.lines[:0], q.lines[1:]...)
		q.dropped++
	}
	q.lines = append(q.lines, text)
}

// Notify queues text for the next result on the notebook at path: for
// session alone when it is not "", else for every session the engine knows.
func (e *Engine) Notify(session, path, text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if session != "" {
		e.sessionLocked(session).queue(path).add(text)
		return
	}
	for _, st := range e.sessions {
		st.queue(path).add(text)
	}
}

// notifyOutsideEdit is Notify("", path, text) for an edit made elsewhere:
// every session is also marked as not knowing the notebook's indices.
func (e *Engine) notifyOutsideEdit(path, text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, st := range e.sessions {
		q := st.queue(path)
		q.add(text)
		q.outside = true
	}
}

// untoldOutsideEdit says whether session has not yet been told of an edit
// made elsewhere to the notebook at path (its next result on the notebook
// tells it, TakeNotices).
func (e *Engine) untoldOutsideEdit(session, path string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	st := e.sessions[session]
	if st == nil {
		return false
	}
	q := st.notes[path]
	return q != nil && q.outside
}

// queue returns the session's notices for the notebook at path, made on
// first use. Called under Engine.mu.
func (st *sessionState) queue(path string) *noticeQueue {
	if st.notes == nil {
		st.notes = map[string]*noticeQueue{}
	}
	q := st.notes[path]
	if q == nil {
		q = &noticeQueue{}
		st.notes[path] = q
	}
	return q
}

// Notices is what a session has not yet been told, taken once with the
// result of one of its calls.
type Notices struct {
	// Closed: another session closed this session's current notebook.
	Closed *ClosedNotice
	// Lines are about the notebook the result acted on, oldest first;
	// when some were dropped for space, the first line says how many.
	Lines []string
}

// TakeNotices returns, once, what session has not yet been told: that
// another session closed its current notebook, and the lines about
// notebook (its name in use; "" takes none: they wait for a result on
// that notebook).
func (e *Engine) TakeNotices(session, notebook string) Notices {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.sessions[session]
	if st == nil {
		return Notices{}
	}
	n := Notices{Closed: st.notice}
	st.notice = nil
	d := e.docs[notebook]
	if notebook == "" || d == nil {
		return n
	}
	q := st.notes[d.path]
	if q == nil {
		return n
	}
	delete(st.notes, d.path)
	n.Lines = q.lines
	if q.dropped > 0 {
		n.Lines = append([]string{pluralNotices(q.dropped)}, n.Lines...)
	}
	return n
}

func pluralNotices(n int) string {
	if n == 1 {
		return "(1 earlier notice about this notebook was dropped)"
	}
	return "(" + strconv.Itoa(n) + " earlier notices about this notebook were dropped)"
}
