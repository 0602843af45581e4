package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/nbfile"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Use modes.
const (
	modeConnect = "connect"
	modeCreate  = "create"
)

// document is one notebook in use: its in-memory model and the kernel it
// runs on.
//
// The model is copy-on-write. A mutation (holding writeMu) builds a new
// Notebook value whose Cells slice is a fresh copy, replaces the changed
// cells with new *Cell values, saves it, and only then swaps it in under mu.
// So readers take mu for a few pointer copies and never wait for a save, a
// failed save leaves the old model in place (nothing half-applied), and a
// *notebook.Cell once published is never modified.
type document struct {
	name   string
	path   string
	kernel *kernelEntry

	writeMu sync.Mutex   // serializes mutations: freshness check, change, save
	queue   commitQueue  // mutations waiting to be saved together (groupcommit.go)
	saving  atomic.Int32 // a save of ours is under way (freshness.go)
	file    *nbfile.File // the file on the server: its read, save lock and save
	check   freshCheck   // coalesces the readers' checks of the file

	mu           sync.RWMutex // guards nb, lastModified and running
	nb           *notebook.Notebook
	lastModified time.Time
	// running is the latest execution of each cell: only it writes outputs
	// into the cell, so that a run that timed out and is still going does
	// not overwrite the outputs of a newer run of the same cell.
	running map[string]*execution

	// unwatch stops the file's watcher and waits for it (watch.go); nil
	// when watching is off. Set once, before the document is shared.
	unwatch func()
}

// setRunning makes x the execution that owns its cell's outputs.
func (d *document) setRunning(x *execution) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running == nil {
		d.running = map[string]*execution{}
	}
	d.running[x.cellID] = x
}

// owns reports whether x still owns its cell's outputs.
func (d *document) owns(x *execution) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.running[x.cellID] == x
}

// doneRunning forgets x once it has finished.
func (d *document) doneRunning(x *execution) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running[x.cellID] == x {
		delete(d.running, x.cellID)
	}
}

// model returns the current model. Callers must not modify it.
func (d *document) model() *notebook.Notebook {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.nb
}

// UseRequest asks for a notebook to be used (UseNotebook).
type UseRequest struct {
	Session  string // the session that uses it; it becomes its current notebook
	Name     string // the name it is used under
	Path     string // its file, relative to the Jupyter root
	Mode     string // "connect" (the default) opens it, "create" makes it
	KernelID string // the kernel (or a sandbox's) to attach it to; "" finds or starts one
}

// UseNotebook opens (mode "connect") or creates (mode "create") the notebook
// at req.Path under req.Name, attaches a kernel (req.KernelID, or a new one),
// and makes it the session's current notebook.
//
// Using a name again with the same path only makes it current again; a name
// already bound to another path is refused. A path already open under
// another name is opened under this one too, as the reference does: the
// names are two names of one notebook (one model, one lock, one kernel), so
// that an edit through one is never an outside edit to the other. Without
// a kernel id the notebook gets the kernel of an existing Jupyter session for
// its path (the one JupyterLab shows), or a new session is created so that
// JupyterLab users see the same kernel.
func (e *Engine) UseNotebook(ctx context.Context, req UseRequest) (NotebookInfo, error) {
	session, name, nbPath, mode, kernelID := req.Session, req.Name, req.Path, req.Mode, req.KernelID
	name = strings.TrimSpace(name)
	if name == "" {
		return NotebookInfo{}, &RequiredError{Field: FieldNotebookName}
	}
	if err := checkName(name); err != nil {
		return NotebookInfo{}, err
	}
	if strings.TrimSpace(nbPath) == "" {
		return NotebookInfo{}, &RequiredError{Field: FieldNotebookPath}
	}
	p, err := cleanPath(nbPath)
	if err != nil {
		return NotebookInfo{}, err
	}
	if p == "" {
		return NotebookInfo{}, &NotebookPathError{Path: nbPath, Root: true}
	}
	if mode == "" {
		mode = modeConnect
	}
	if mode != modeConnect && mode != modeCreate {
		return NotebookInfo{}, &ModeError{Mode: mode}
	}
	kernelID = strings.TrimSpace(kernelID)
	// The reference lets kernel_id name a sandbox too: a jupyter-server
	// sandbox on this server is a kernel the notebook can attach to.
	if k, ok, err := e.sandboxes.notebookKernel(kernelID, e.JupyterURL()); err != nil {
		return NotebookInfo{}, err
	} else if ok {
		kernelID = k
	}

	e.useMu.Lock()
	defer e.useMu.Unlock()

	e.mu.Lock()
	if d := e.docs[name]; d != nil {
		defer e.mu.Unlock()
		if d.path != p {
			return NotebookInfo{}, &NameInUseError{Name: name, Path: d.path, Want: p}
		}
		if kernelID != "" && kernelID != d.kernel.id {
			return NotebookInfo{}, &KernelMismatchError{Notebook: name, Kernel: d.kernel.id, Want: kernelID}
		}
		e.current[session] = name
		e.lastUsed = name
		return e.infoLocked(d, session), nil
	}
	for _, d := range e.docs {
		if d.path != p {
			continue
		}
		defer e.mu.Unlock()
		if mode == modeCreate {
			return NotebookInfo{}, &NotebookExistsError{Path: p}
		}
		if kernelID != "" && kernelID != d.kernel.id {
			return NotebookInfo{}, &KernelMismatchError{Notebook: d.name, Kernel: d.kernel.id, Want: kernelID}
		}
		e.docs[name] = d
		e.current[session] = name
		e.lastUsed = name
		return e.infoNamedLocked(name, d, session), nil
	}
	client := e.client
	e.mu.Unlock()

	nb, lastModified, upgraded, err := e.loadOrCreate(ctx, client, p, mode)
	if err != nil {
		return NotebookInfo{}, err
	}
	k, err := e.attachKernel(ctx, client, p, kernelID, nb)
	if err != nil {
		if mode == modeCreate {
			// Nothing half-done: the file we just created goes again.
			if derr := client.Delete(context.WithoutCancel(ctx), p); derr != nil {
				e.log.Warn("removing the notebook created for a failed open", "path", p, "err", derr)
			}
		}
		return NotebookInfo{}, err
	}
	d := &document{name: name, path: p, kernel: k, nb: nb, lastModified: lastModified,
		file: nbfile.New(client, p, name, e.log, e.saveLockTimes)}

	e.mu.Lock()
	if e.client != client {
		// connect_to_jupyter switched servers while we loaded.
		e.mu.Unlock()
		e.releaseKernel(k)
		return NotebookInfo{}, &ServerSwitchedError{Path: p}
	}
	e.watch(d)
	e.docs[name] = d
	e.current[session] = name
	e.lastUsed = name
	info := e.infoLocked(d, session)
	e.mu.Unlock()

	e.publish(event.Event{Type: event.EvNotebookOpened, Notebook: &event.NotebookEvent{
		Name: name, Path: p, KernelID: k.id, Session: session, Cells: e.snapshotCells(name, nb.Cells),
	}})
	if upgraded {
		// The cells got ids on loading (nbformat < 4.5, or missing or
		// duplicate ids). Saving them now keeps them stable: ids exist
		// only in memory otherwise, and a reload after someone else's
		// edit would hand out new ones, breaking every id the agent
		// holds. Saved as any change is, under the save lock: another
		// process may be saving the file (mutate reloads it then).
		if err := e.mutate(ctx, d, session, false, func(*notebook.Notebook) ([]event.NotebookEvent, error) { return nil, nil }); err != nil {
			e.log.Warn("saving the cell ids given to a notebook on loading", "path", p, "err", err)
		}
	}
	return info, nil
}

// loadOrCreate reads the notebook at p (connect) or creates an empty one
// there (create), and whether the cells got ids on loading (to be saved).
func (e *Engine) loadOrCreate(ctx context.Context, client *jupyter.Client, p, mode string) (*notebook.Notebook, time.Time, bool, error) {
	if mode == modeCreate {
		if !strings.HasSuffix(strings.ToLower(p), ".ipynb") {
			return nil, time.Time{}, false, &NotebookPathError{Path: p}
		}
		if _, err := client.Get(ctx, p, false); err == nil {
			return nil, time.Time{}, false, &NotebookExistsError{Path: p}
		} else if !jupyter.IsNotFound(err) {
			return nil, time.Time{}, false, err
		}
		nb := notebook.New()
		if e.cfg.CreatedHeading != "" {
			nb.Cells = append(nb.Cells, nb.NewCell(notebook.Markdown, e.cfg.CreatedHeading))
		}
		data, err := nb.Marshal()
		if err != nil {
			return nil, time.Time{}, false, err
		}
		m, err := client.SaveNotebook(context.WithoutCancel(ctx), p, data)
		if err != nil {
			if jupyter.IsNotFound(err) {
				return nil, time.Time{}, false, Userf("cannot create %q: its directory does not exist on the Jupyter server", p)
			}
			return nil, time.Time{}, false, err
		}
		return nb, m.LastModified, false, nil
	}
	m, nb, err := nbfile.Read(ctx, client, p)
	if err != nil {
		if jupyter.IsNotFound(err) {
			return nil, time.Time{}, false, &NoFileError{Path: p}
		}
		var ae *jupyter.APIError
		if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
			// Jupyter answers 400 when it cannot read the file as a
			// notebook: that is the file's fault, not the server's.
			return nil, time.Time{}, false, Userf("%q is not a valid notebook: Jupyter could not read it (%s); fix the file or open it in JupyterLab. Nothing was changed", p, relativePaths(ae.Message, p))
		}
		return nil, time.Time{}, false, err
	}
	if m.Type != "notebook" {
		return nil, time.Time{}, false, Userf("%q is a %s, not a notebook (.ipynb)", p, m.Type)
	}
	if nb == nil {
		if nb, err = notebook.Parse(m.Content); err != nil {
			return nil, time.Time{}, false, Userf("%q is not a valid notebook: %v", p, err)
		}
	}
	return nb, m.LastModified, idsUpgraded(m.Content, nb), nil
}

// idsUpgraded reports whether parsing gave cells ids other than those in
// the file (or raised the format to 4.5).
func idsUpgraded(raw []byte, nb *notebook.Notebook) bool {
	var file struct {
		Minor int `json:"nbformat_minor"`
		Cells []struct {
			ID string `json:"id"`
		} `json:"cells"`
	}
	if json.Unmarshal(raw, &file) != nil || file.Minor != nb.NBFormatMinor || len(file.Cells) != len(nb.Cells) {
		return true
	}
	for i, c := range file.Cells {
		if c.ID != nb.Cells[i].ID {
			return true
		}
	}
	return false
}

// UnuseNotebook releases the notebook for every session, as the reference's
// server-wide unuse does. Every other session that had it as its current
// notebook loses it and is told on its next call (TakeNotices); the answer
// names them. Its kernel is shut down when this process started it and
// nothing else holds it (kernels.go); otherwise only the channel
// closes.
func (e *Engine) UnuseNotebook(ctx context.Context, session, name string) (Released, error) {
	return e.unuse(session, name, true)
}

// unuse is UnuseNotebook; tell leaves the other sessions a notice.
//
// A notebook open under several names is released by each name on its own:
// until the last goes, the others keep it (and its kernel) in use.
func (e *Engine) unuse(session, name string, tell bool) (Released, error) {
	e.useMu.Lock()
	e.mu.Lock()
	d, err := e.lookupLocked(session, name)
	if err != nil {
		e.mu.Unlock()
		e.useMu.Unlock()
		return Released{}, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		name = e.current[session]
	}
	delete(e.docs, name)
	cause := ClosedByUnuse
	if !tell {
		cause = 0
	}
	others := e.dropCurrentLocked(name, d.path, session, cause, "")
	if also := e.namesLocked(d); len(also) > 0 {
		e.mu.Unlock()
		e.useMu.Unlock()
		return Released{Name: name, Path: d.path, KernelID: d.kernel.id, Others: others, AlsoOpenAs: also}, nil
	}
	e.undo.Forget(d)
	e.mu.Unlock()
	e.useMu.Unlock()
	stopWatching(d)
	// The kernel's shutdown may take a while: other sessions' use_notebook
	// need not wait for it (a use of this very kernel waits in
	// acquireKernel).
	shut := e.releaseKernel(d.kernel)
	e.publish(event.Event{Type: event.EvNotebookClosed, Notebook: &event.NotebookEvent{
		Name: d.name, Path: d.path, KernelID: d.kernel.id, Session: session,
	}})
	return Released{Name: name, Path: d.path, KernelID: d.kernel.id, KernelShutDown: shut, Others: others}, nil
}

// namesLocked lists, sorted, the names a notebook is in use under.
func (e *Engine) namesLocked(d *document) []string {
	var names []string
	for n, x := range e.docs {
		if x == d {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// documentsLocked lists each notebook in use once, whatever its names.
func (e *Engine) documentsLocked() []*document {
	seen := map[*document]bool{}
	docs := make([]*document, 0, len(e.docs))
	for _, n := range e.inUseLocked() {
		if d := e.docs[n]; !seen[d] {
			seen[d] = true
			docs = append(docs, d)
		}
	}
	return docs
}

// ListNotebooks lists the notebooks in use, marking the session's current one.
func (e *Engine) ListNotebooks(session string) []NotebookInfo {
	e.mu.RLock()
	defer e.mu.RUnlock()
	infos := make([]NotebookInfo, 0, len(e.docs))
	for n, d := range e.docs {
		infos = append(infos, e.infoNamedLocked(n, d, session))
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	return infos
}

// Notebook resolves a notebook name for a session: name when set, else the
// session's current notebook. The error says how to fix it.
func (e *Engine) Notebook(session, name string) (NotebookInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	d, err := e.lookupLocked(session, name)
	if err != nil {
		return NotebookInfo{}, err
	}
	return e.infoLocked(d, session), nil
}

// NotebookJSON returns the notebook as nbformat JSON (for notebook://name).
func (e *Engine) NotebookJSON(ctx context.Context, name string) ([]byte, error) {
	d, err := e.lookup("", name)
	if err != nil {
		return nil, err
	}
	return d.model().Marshal()
}

// SessionClosed forgets a session's current notebook and sandbox.
func (e *Engine) SessionClosed(session string) {
	e.mu.Lock()
	delete(e.current, session)
	delete(e.sessions, session)
	e.mu.Unlock()
	if e.sandboxes != nil {
		e.sandboxes.sessionClosed(session)
	}
	// The workbench's session count goes down with it.
	e.bus.Publish(event.Event{Type: event.EvSessionClosed, Session: &event.SessionEvent{ID: session}})
}

// lookup resolves a notebook name for a session (see Notebook).
func (e *Engine) lookup(session, name string) (*document, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.lookupLocked(session, name)
}

func (e *Engine) lookupLocked(session, name string) (*document, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = e.current[session]
		if name == "" {
			return nil, &NoNotebookError{InUse: e.inUseLocked(), Closed: e.noticeLocked(session)}
		}
	}
	d := e.docs[name]
	if d == nil {
		err := &NoNotebookError{Name: name, InUse: e.inUseLocked()}
		if n := e.noticeLocked(session); n != nil && n.Notebook == name {
			err.Closed = n
		}
		return nil, err
	}
	return d, nil
}

// inUseLocked lists the names in use, sorted, for error messages.
func (e *Engine) inUseLocked() []string {
	names := make([]string, 0, len(e.docs))
	for n := range e.docs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// infoLocked describes d as the session knows it: under the name it has
// current when that names d (a notebook may have several), else its own.
func (e *Engine) infoLocked(d *document, session string) NotebookInfo {
	name := d.name
	if cur := e.current[session]; cur != "" && e.docs[cur] == d {
		name = cur
	}
	return e.infoNamedLocked(name, d, session)
}

// infoNamedLocked describes d under one of its names.
func (e *Engine) infoNamedLocked(name string, d *document, session string) NotebookInfo {
	return NotebookInfo{
		Name:        name,
		Path:        d.path,
		KernelID:    d.kernel.id,
		KernelState: d.kernel.conn.State(),
		Current:     session != "" && e.current[session] == name,
		Cells:       len(d.model().Cells),
	}
}

func (e *Engine) info(d *document, session string) NotebookInfo {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.infoLocked(d, session)
}

// errUnchanged tells mutate that a change left the notebook as it was, so
// there is nothing to save.
var errUnchanged = errors.New("no change")

// A change edits a working copy of a notebook. It may reorder nb.Cells and
// replace its entries, but must never modify a *notebook.Cell in place (they
// are shared with readers). It returns the events to publish once the change
// is saved; mutate fills in their notebook, path, kernel and session.
type mutation func(nb *notebook.Notebook) ([]event.NotebookEvent, error)

// syncFromDisk reloads the document when its file changed on disk since we
// last read or wrote it. The caller holds d.writeMu.
func (e *Engine) syncFromDisk(ctx context.Context, d *document, session string) (bool, error) {
	m, err := d.file.Client().Get(ctx, d.path, false)
	if err != nil {
		if jupyter.IsNotFound(err) {
			return false, &NotebookFileGoneError{Notebook: d.name, Path: d.path}
		}
		return false, err
	}
	if m.LastModified.Equal(d.lastModified) {
		return false, nil
	}
	full, nb, err := d.file.Read(ctx)
	if err != nil {
		return false, err
	}
	if nb == nil {
		if nb, err = notebook.Parse(full.Content); err != nil {
			return false, Userf("notebook %q was changed on disk and is no longer a valid notebook (%v); nothing was changed", d.name, err)
		}
	}
	d.mu.Lock()
	old := d.nb
	d.nb = nb
	d.lastModified = full.LastModified
	d.mu.Unlock()
	e.log.Info("notebook changed on disk; reloaded", "notebook", d.name, "path", d.path)
	outside := e.noteOutsideEdit(d, old, nb, full.LastModified)
	e.publish(event.Event{Type: event.EvNotebookChanged, Notebook: &event.NotebookEvent{
		Name: d.name, Path: d.path, KernelID: d.kernel.id, Op: event.OpReload, Session: session,
		Cells: e.snapshotCells(d.name, nb.Cells),
	}})
	if outside != nil {
		e.publish(*outside)
	}
	return true, nil
}

// kernelSpecName is the kernelspec name in a notebook's metadata, if any.
func kernelSpecName(nb *notebook.Notebook) string {
	var md struct {
		KernelSpec struct {
			Name string `json:"name"`
		} `json:"kernelspec"`
	}
	if len(nb.Metadata) == 0 || json.Unmarshal(nb.Metadata, &md) != nil {
		return ""
	}
	return md.KernelSpec.Name
}

// relativePaths replaces absolute paths that end in p (the server's file
// path, which tells an agent about the server's disk and nothing useful) in
// msg by p itself.
func relativePaths(msg, p string) string {
	for {
		i := strings.Index(msg, "/"+p)
		if i < 0 || p == "" {
			return msg
		}
		start := i
		for start > 0 && msg[start-1] != ' ' && msg[start-1] != ':' && msg[start-1] != '\'' && msg[start-1] != '"' {
			start--
		}
		if start == i+1 || msg[start] != '/' {
			return msg
		}
		msg = msg[:start] + p + msg[i+1+len(p):]
	}
}

// notebookName is d's name in use, "" for no notebook (d nil).
func (d *document) notebookName() string {
	if d == nil {
		return ""
	}
	return d.name
}
