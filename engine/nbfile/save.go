// Package nbfile is a notebook's file on a Jupyter server, as the engine
// reads and saves it beside other writers: the read that never meets a
// save half-written (read.go), the save lock that spans processes
// (savelock.go), and the save that checks the server kept it. It knows
// the Contents API and the notebook model, and is given a logger; it
// knows nothing of notebooks in use, sessions or calls.
package nbfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// File is one notebook's file: where it is, the name the notebook is in
// use under (for errors), and what the save lock learned of the server.
type File struct {
	client *jupyter.Client
	path   string // the contents path
	name   string // the notebook's name in use
	log    *slog.Logger
	times  LockTimes

	// lockMode remembers whether the server takes hidden lock names:
	// 0 unknown, 1 hidden, 2 visible.
	lockMode atomic.Int32
}

// New returns the file at path on client's server, of the notebook in use
// as name. times are the save lock's (zero: the defaults).
func New(client *jupyter.Client, path, name string, log *slog.Logger, times LockTimes) *File {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &File{client: client, path: path, name: name, log: log, times: times}
}

// Read reads the file (see the function Read).
func (f *File) Read(ctx context.Context) (*jupyter.Model, *notebook.Notebook, error) {
	return Read(ctx, f.client, f.path)
}

// saveAttempts bounds the saves of one group that the server undid.
const saveAttempts = 3

// SaveKept saves data, the notebook nb, as f's file under lock, and makes
// sure the file kept it; before is the file's modification time as the
// holder of the lock last read it. As for Lock, ctx is not cancelled: a
// save cut short would leave the file in an unknown state. On
// jupyter_server's asynchronous contents manager a notebook read by anyone
// (JupyterLab opening the notebook, another tool) that meets our save
// half-written makes the server move the file aside and put back the copy
// it took before writing (jupyter-server/jupyter_server#1416). It then
// still answers the save as a success, with the restored copy's
// modification time, which it copied to the nanosecond from the file as it
// was before the save; or, when the swap caught the save between its
// steps, fails it with "No such file or directory". Either save is made
// again, under the same lock. A time that did not move on a file system
// that keeps whole seconds (or one that went back) is told apart by
// reading the file.
func (f *File) SaveKept(ctx context.Context, lock *Lock, before time.Time, nb *notebook.Notebook, data []byte) (*jupyter.Model, error) {
	for attempt := 1; ; attempt++ {
		// The lock must still be ours: a process that found it
		// unchanged for saveLockTTL may have taken it over.
		if err := lock.Verify(ctx); err != nil {
			return nil, err
		}
		m, err := f.client.SaveNotebook(ctx, f.path, data)
		var ae *jupyter.APIError
		switch {
		case err != nil && (attempt == saveAttempts || !errors.As(err, &ae) || !ae.NoDirectory()):
			return nil, fmt.Errorf("saving notebook %q (%s); nothing was changed: %w", f.name, f.path, err)
		case err != nil:
			// A directory really gone fails every attempt alike.
		case m.LastModified.After(before):
			return m, nil
		case m.LastModified.Equal(before) && before.Nanosecond() != 0:
			// The restored copy's time, to the nanosecond.
		case f.holds(ctx, nb):
			return m, nil
		}
		if err == nil && attempt == saveAttempts {
			return nil, &SaveUndoneError{Notebook: f.name, Path: f.path, Attempts: attempt}
		}
		f.log.Warn("the Jupyter server put the notebook's previous copy back during our save (a read elsewhere met it half-written); saving again",
			"notebook", f.name, "path", f.path, "attempt", attempt, "err", err)
		time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
	}
}

// holds reports whether f's file, read now, is nb. Both are compared
// as canonical JSON: the server writes a notebook in its own layout.
func (f *File) holds(ctx context.Context, nb *notebook.Notebook) bool {
	_, disk, err := Read(ctx, f.client, f.path)
	if err != nil || disk == nil {
		return false
	}
	a, aerr := canonicalJSON(disk)
	b, berr := canonicalJSON(nb)
	return aerr == nil && berr == nil && bytes.Equal(a, b)
}

// canonicalJSON is nb as JSON with every object's keys sorted and no
// insignificant space.
func canonicalJSON(nb *notebook.Notebook) ([]byte, error) {
	data, err := nb.Marshal()
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// SaveUndoneError reports that every save of a change was undone by the
// server before it answered (see saveKept).
type SaveUndoneError struct {
	Notebook, Path string
	Attempts       int
}

func (e *SaveUndoneError) Error() string {
	return fmt.Sprintf("saving notebook %q (%s): %d times the Jupyter server put the file's previous copy back as it saved, because something else read the notebook while it was being written; nothing was changed. Try again; if it keeps happening, close the notebook where it is being read (JupyterLab) until the agent is done",
		e.Notebook, e.Path, e.Attempts)
}

// Client is the REST client of the server the file is on.
func (f *File) Client() *jupyter.Client { return f.client }
