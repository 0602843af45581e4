package engine

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// Sessions. Each MCP session has its own current notebook (e.current). A
// session starts on the notebook most recently activated on the server, so
// that a client written for a server-wide pointer (a reconnect, a client
// that opens one session per call) finds the notebook it was using; from
// then on only its own use and unuse change it. When another session's
// action closes a session's current notebook for everyone (unuse, or a
// switch of Jupyter server), the session keeps a notice of it until its next
// call, which says so.

// SessionRef names a session in texts another session reads: the first
// characters of its id (the whole id, with the bearer token, would let the
// reader speak as that session) and the client it introduced itself as.
type SessionRef struct {
	ID     string
	Client string
}

// String is "4MVH2K1X (agent-b 1)", or the short id alone.
func (r SessionRef) String() string {
	if r.Client == "" {
		return r.ID
	}
	return r.ID + " (" + r.Client + ")"
}

// ClosedCause says how another session closed a session's current notebook.
type ClosedCause int

const (
	// ClosedByUnuse: another session released the notebook.
	ClosedByUnuse ClosedCause = iota + 1
	// ClosedBySwitch: another session switched Jupyter servers.
	ClosedBySwitch
)

// ClosedNotice tells a session that its current notebook was closed by
// another session, and by which.
type ClosedNotice struct {
	Notebook string
	Path     string
	By       SessionRef
	Cause    ClosedCause
	Server   string // ClosedBySwitch: the server switched to
	At       time.Time
}

// sessionState is what the engine keeps of a session besides its current
// notebook. Guarded by Engine.mu.
type sessionState struct {
	client string
	notice *ClosedNotice           // for its next call
	notes  map[string]*noticeQueue // notebook notices by path (notices.go)
}

// sessionStarted registers a session and puts it on the notebook most
// recently activated on the server, if that is still in use.
func (e *Engine) sessionStarted(id, client string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.sessionLocked(id)
	st.client = client
	if _, has := e.current[id]; !has && e.lastUsed != "" && e.docs[e.lastUsed] != nil {
		e.current[id] = e.lastUsed
	}
}

// sessionLocked returns the state of session id, made on first sight.
func (e *Engine) sessionLocked(id string) *sessionState {
	st := e.sessions[id]
	if st == nil {
		if e.sessions == nil { // an Engine built without New, in tests
			e.sessions = map[string]*sessionState{}
		}
		st = &sessionState{}
		e.sessions[id] = st
	}
	return st
}

// refLocked names session id for another session's eyes.
func (e *Engine) refLocked(id string) SessionRef {
	r := SessionRef{ID: id}
	if len(r.ID) > 8 {
		r.ID = r.ID[:8]
	}
	if st := e.sessions[id]; st != nil {
		r.Client = st.client
	}
	return r
}

// clientOf is the name the session's client introduced itself with ("" when
// unknown).
func (e *Engine) clientOf(session string) string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if st := e.sessions[session]; st != nil {
		return st.client
	}
	return ""
}

// noticeLocked is the session's pending notice, left in place.
func (e *Engine) noticeLocked(session string) *ClosedNotice {
	if st := e.sessions[session]; st != nil {
		return st.notice
	}
	return nil
}

// dropCurrentLocked clears notebook name as the current notebook of every
// session that has it, leaving a notice for each session other than by
// (when cause is set), and returns those others, sorted.
func (e *Engine) dropCurrentLocked(name, path, by string, cause ClosedCause, server string) []SessionRef {
	var others []SessionRef
	now := time.Now()
	for s, n := range e.current {
		if n != name {
			continue
		}
		delete(e.current, s)
		if s == by || cause == 0 {
			continue
		}
		e.sessionLocked(s).notice = &ClosedNotice{
			Notebook: name, Path: path, By: e.refLocked(by), Cause: cause, Server: server, At: now,
		}
		others = append(others, e.refLocked(s))
	}
	slices.SortFunc(others, func(a, b SessionRef) int { return strings.Compare(a.ID, b.ID) })
	if e.lastUsed == name {
		e.lastUsed = ""
	}
	return others
}

// Released is the answer of UnuseNotebook: the notebook released and the
// other sessions that had it as their current notebook (each is told on
// its next call).
type Released struct {
	Name     string
	Path     string
	KernelID string
	// KernelShutDown: this process had started the kernel and nothing
	// else held it, so it was shut down (kernels.go). Otherwise it
	// keeps running.
	KernelShutDown bool
	Others         []SessionRef
	// AlsoOpenAs are the other names the notebook is still in use under:
	// it, and its kernel, stay in use through them.
	AlsoOpenAs []string
}

// ServerSwitch is the answer of ConnectJupyter.
type ServerSwitch struct {
	// Same: the server and token are the ones in use; nothing changed.
	Same     bool
	URL      string // the server in use now
	Previous string // the server before the switch
	InUse    []string
	Closed   []ClosedInSwitch // the notebooks closed by the switch
}

// ClosedInSwitch is a notebook a server switch closed, whose current
// notebook it was, and what became of its kernel.
type ClosedInSwitch struct {
	Name     string
	Path     string
	KernelID string
	Caller   bool         // the calling session's current notebook
	Others   []SessionRef // other sessions whose current notebook it was
	Kernel   KernelFate
}

// KernelFate is what a server switch did with a notebook's kernel.
type KernelFate struct {
	ShutDown bool
	// Attached: the kernel was running before this server opened the
	// notebook on it (a kernel id given, or a Jupyter session that
	// already had the path), so it is not this server's to stop.
	Attached bool
	// Kept: this server started it, and --keep-kernels keeps it.
	Kept bool
	// InUse: this server started it, but another client (JupyterLab,
	// another server) is connected to it, so it is left running.
	InUse bool
	Err   error // the shutdown failed

	gone bool // the server no longer knew the kernel
}

// ConnectJupyter switches to another Jupyter server, checking it first; on
// failure nothing changes. The server and token in use already are no
// switch: nothing changes and the answer says so.
//
// On a switch every notebook in use is closed (their files and kernels live
// on the old server; each gets EvNotebookClosed), every session's current
// notebook is cleared (the others are told on their next call), and the
// kernels this process started for those notebooks are shut down.
// Executions still running on the old server lose their channel and end
// with what they had collected.
func (e *Engine) ConnectJupyter(ctx context.Context, session, url, token string) (ServerSwitch, error) {
	url = strings.TrimSpace(url)
	if url == "" {
		return ServerSwitch{}, &RequiredError{Field: FieldJupyterURL}
	}
	client, err := jupyter.NewClient(url, token, jupyter.Options{})
	if err != nil {
		return ServerSwitch{}, Userf("%q is not a usable Jupyter URL (%v); nothing changed", url, err)
	}
	e.useMu.Lock()
	defer e.useMu.Unlock()
	e.mu.RLock()
	old := e.client
	same := old.SameServer(client)
	inUse := e.inUseLocked()
	e.mu.RUnlock()
	if same {
		return ServerSwitch{Same: true, URL: old.BaseURL(), Previous: old.BaseURL(), InUse: inUse}, nil
	}
	if _, err := client.Status(ctx); err != nil {
		return ServerSwitch{}, Userf("could not use the Jupyter server at %s: %v; nothing changed", client.BaseURL(), err)
	}

	sw := ServerSwitch{URL: client.BaseURL(), Previous: old.BaseURL()}
	e.mu.Lock()
	docs, kernels := e.docs, e.kernels
	callerHad := e.current[session]
	for _, name := range e.inUseLocked() {
		d := docs[name]
		c := ClosedInSwitch{Name: name, Path: d.path, KernelID: d.kernel.id, Caller: callerHad == name}
		c.Others = e.dropCurrentLocked(name, d.path, session, ClosedBySwitch, client.BaseURL())
		sw.Closed = append(sw.Closed, c)
	}
	closing := e.documentsLocked()
	started := e.started
	e.client = client
	e.docs = map[string]*document{}
	e.current = map[string]string{}
	e.kernels = map[string]*kernelEntry{}
	e.started = map[string]bool{}
	e.lastUsed = ""
	e.mu.Unlock()
	for _, d := range closing {
		stopWatching(d)
		e.undo.Forget(d)
	}

	// Every channel closes (runs still going on the old server end with
	// what they had collected), and the kernels this process started go
	// with them, as a release would take them (kernels.go): not one
	// another client is connected to. The old server may be gone, so the
	// tries are bounded, and made at once.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	fates := map[string]KernelFate{}
	var fmu sync.Mutex
	var wg sync.WaitGroup
	for id, k := range kernels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := e.retire(sctx, k, started[id])
			if f.gone {
				f.ShutDown = true
			}
			fmu.Lock()
			fates[id] = f
			fmu.Unlock()
		}()
	}
	wg.Wait()
	for i := range sw.Closed {
		c := &sw.Closed[i]
		c.Kernel = fates[c.KernelID]
	}
	old.CloseIdleConnections()
	for _, c := range sw.Closed {
		e.publish(event.Event{Type: event.EvNotebookClosed, Notebook: &event.NotebookEvent{Name: c.Name, Path: c.Path, KernelID: c.KernelID, Session: session}})
	}
	// The header shows the server in use, with the pause and approval
	// state the call registry keeps.
	e.calls.PublishState()
	return sw, nil
}

// SessionOpened puts the session on the notebook most recently activated
// and publishes EvSessionOpened.
func (e *Engine) SessionOpened(id, client string) {
	e.sessionStarted(id, client)
	e.bus.Publish(event.Event{Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: id, Client: client}})
}
