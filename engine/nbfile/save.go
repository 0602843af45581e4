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
	"net"
	"net/http"
	"sync"
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
	// asideMu guards asideNB: a save of ours that the server set aside
	// as NAME.invalid after answering it (see MovedAside), for the next
	// kept save to remove.
	asideMu sync.Mutex
	asideNB *notebook.Notebook
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

// saveAttempts bounds the saves of one group that the server undid, and
// apart from them those during which it moved the file aside for good.
const saveAttempts = 3

// saveOutcome is what one save request did to the file.
type saveOutcome int

const (
	saveKept     saveOutcome = iota // the file holds what we saved
	saveUndone                      // the server put the file's previous copy back
	saveSetAside                    // the server moved the file aside and put nothing back
	saveFailed                      // the save failed, with the error it returns
)

// SaveKept saves data, the notebook nb, as f's file under lock, and makes
// sure the file kept it; before is the file's modification time as the
// holder of the lock last read it. As for Lock, ctx is not cancelled: a
// save cut short would leave the file in an unknown state.
//
// On jupyter_server's asynchronous contents manager a notebook read by
// anyone (JupyterLab opening the notebook, another tool) that meets our
// save half-written takes the file for corrupt: it moves it aside to
// NAME.invalid, then puts back the copy the save took before writing,
// .~NAME (jupyter-server/jupyter_server#1416). It awaits between the two
// moves, and the save goes on writing into the file it moved aside. So:
//
//   - the copy is back before the save ends: the server answers the save
//     as a success, with the copy's modification time, which the save had
//     copied to the nanosecond from the file as it was before. The save
//     was undone.
//   - the save ends between the two moves: it removes the copy, the read
//     fails to put it back, and no file is left at the path; our save
//     answers 404 "No such file or directory" (it ends with a read of the
//     path), or 500 with the same words when it met the gap earlier. What
//     we wrote is whole in NAME.invalid, and the notebook is gone.
//
// Either save is made again from nb, under the same lock: a notebook
// without a file to copy is written with no copy beside it, which no read
// can put back, so a save set aside is made again at once. A file gone
// without the server's trace (no NAME.invalid written since before) was
// removed by someone: it is not made again (SaveGoneError), and no
// answer that may follow a write says that nothing was changed. A time
// that did not move on a file system that keeps whole seconds (or one
// that went back) is told apart by reading the file. Once the file holds
// nb, a NAME.invalid the server left that is exactly nb is removed (see
// dropSetAside).
func (f *File) SaveKept(ctx context.Context, lock *Lock, before time.Time, nb *notebook.Notebook, data []byte) (*jupyter.Model, error) {
	undone, setAside := 0, 0
	raced := false // the server may have left nb as NAME.invalid
	// A NAME.invalid the server sets aside during this save is one
	// written since before, and since the last one an undone save left.
	aside := asideMark{since: before}
	for {
		// The lock must still be ours: a process that found it
		// unchanged for saveLockTTL may have taken it over.
		if err := lock.Verify(ctx); err != nil {
			return nil, err
		}
		m, err := f.client.SaveNotebook(ctx, f.path, data)
		outcome, m, err := f.judge(ctx, before, aside, nb, m, err)
		switch outcome {
		case saveKept:
			f.asideMu.Lock()
			prior := f.asideNB
			f.asideNB = nil
			f.asideMu.Unlock()
			if raced || prior != nil {
				f.dropSetAside(ctx, nb, prior)
			}
			return m, nil
		case saveFailed:
			return nil, err
		case saveUndone:
			raced = true
			if undone++; undone == saveAttempts {
				return nil, &SaveUndoneError{Notebook: f.name, Path: f.path, Attempts: undone}
			}
			if m, ok := f.setAside(ctx, aside); ok {
				aside = asideMark{since: m.LastModified, seen: true}
			}
			f.log.Warn("the Jupyter server put the notebook's previous copy back during our save (a read elsewhere met it half-written); saving again",
				"notebook", f.name, "path", f.path, "attempt", undone, "err", err)
			time.Sleep(time.Duration(undone) * 50 * time.Millisecond)
		case saveSetAside:
			raced = true
			aside = asideMark{since: m.LastModified, seen: true}
			if setAside++; setAside == saveAttempts {
				return nil, &SaveGoneError{Notebook: f.name, Path: f.path, Aside: f.invalidPath(), Err: err}
			}
			f.log.Warn("the Jupyter server moved the notebook's file aside during our save (a read elsewhere met it half-written) and put nothing back; saving it again",
				"notebook", f.name, "path", f.path, "aside", f.invalidPath(), "err", err)
		}
	}
}

// judge tells what the save request that answered m or err did, reading
// the file where the answer does not say. A failed save's error is the one
// to return; a kept save's model is the file's, a save set aside's that
// of NAME.invalid.
func (f *File) judge(ctx context.Context, before time.Time, aside asideMark, nb *notebook.Notebook, m *jupyter.Model, err error) (saveOutcome, *jupyter.Model, error) {
	var ae *jupyter.APIError
	switch {
	case err != nil && !errors.As(err, &ae) && !notSent(err):
		return f.judgeUnanswered(ctx, nb, err)
	case err != nil && (ae == nil || !ae.NoDirectory() && ae.Status != http.StatusNotFound):
		// Refused before it wrote, or never sent: the server's atomic
		// save puts the file back when its write fails.
		return saveFailed, nil, fmt.Errorf("saving notebook %q (%s); nothing was changed: %w", f.name, f.path, err)
	case err != nil:
		// The save's last step reads the file: a 404 may follow its write.
		return f.judgeMissing(ctx, aside, nb, err)
	case m.LastModified.After(before):
		return saveKept, m, nil
	case m.LastModified.Equal(before) && before.Nanosecond() != 0:
		// The restored copy's time, to the nanosecond.
		return saveUndone, nil, nil
	case f.holds(ctx, nb):
		return saveKept, m, nil
	}
	return saveUndone, nil, nil
}

// judgeMissing judges a save that failed for want of a file or directory
// (saveErr), which may follow its write.
func (f *File) judgeMissing(ctx context.Context, aside asideMark, nb *notebook.Notebook, saveErr error) (saveOutcome, *jupyter.Model, error) {
	m, err := f.client.Get(ctx, f.path, false)
	switch {
	case err == nil && f.holds(ctx, nb):
		return saveKept, m, nil
	case err == nil:
		// A copy is back where the file was.
		return saveUndone, nil, saveErr
	case !jupyter.IsNotFound(err):
		return saveFailed, nil, fmt.Errorf("saving notebook %q (%s): the Jupyter server failed the save (%v), and then reading the file failed, so the change may or may not be in it. Read the notebook before making the change again, so that it is not made twice: %w",
			f.name, f.path, saveErr, err)
	}
	if m, ok := f.setAside(ctx, aside); ok {
		return saveSetAside, m, saveErr
	}
	return saveFailed, nil, &SaveGoneError{Notebook: f.name, Path: f.path, Err: saveErr}
}

// judgeUnanswered judges a save sent to the server that got no answer it
// could read (saveErr: the connection dropped, no answer in time, a body
// that is not JSON), which may have been written, or may be yet. A file
// that holds nb kept it; otherwise the error says that the change may
// still reach the file.
func (f *File) judgeUnanswered(ctx context.Context, nb *notebook.Notebook, saveErr error) (saveOutcome, *jupyter.Model, error) {
	m, disk, err := Read(ctx, f.client, f.path)
	switch {
	case err == nil && disk != nil && sameNotebook(disk, nb):
		f.log.Warn("the Jupyter server did not answer our save, but the file holds it", "notebook", f.name, "path", f.path, "err", saveErr)
		return saveKept, m, nil
	case err != nil:
		return saveFailed, nil, fmt.Errorf("saving notebook %q (%s): the Jupyter server did not answer the save (%v), and reading the file failed too (%v), so whether the change is in it is not known. Read the notebook once the server answers, before making the change again, so that it is not made twice: %w",
			f.name, f.path, saveErr, err, saveErr)
	}
	return saveFailed, nil, fmt.Errorf("saving notebook %q (%s): the Jupyter server did not answer the save, and the file does not hold the change as of now, but the server may still write it. Read the notebook before making the change again, so that it is not made twice: %w",
		f.name, f.path, saveErr)
}

// notSent reports whether err, a save's error that is no answer of the
// server's, is one of a request that never reached it: the server was
// known to be down, or the connection could not be made.
func notSent(err error) bool {
	var ue *jupyter.UnreachableError
	if !errors.As(err, &ue) {
		return false
	}
	var op *net.OpError
	return ue.Err == jupyter.ErrUnreachable || errors.As(ue.Err, &op) && op.Op == "dial"
}

// invalidPath is where the server moves f's file when a read of it finds
// it unreadable (jupyter_server's path_to_invalid).
func (f *File) invalidPath() string { return f.path + ".invalid" }

// asideMark tells a NAME.invalid the server set aside lately by its
// modification time, which the move keeps: one written at or after since,
// or after it once a NAME.invalid of that time was seen.
type asideMark struct {
	since time.Time
	seen  bool
}

func (a asideMark) fresh(t time.Time) bool {
	if a.seen {
		return t.After(a.since)
	}
	return !t.Before(a.since)
}

// setAside reports whether the server's recovery from an unreadable read
// lately moved a file to f's NAME.invalid (see asideMark): the model of
// NAME.invalid, without content.
func (f *File) setAside(ctx context.Context, aside asideMark) (*jupyter.Model, bool) {
	m, err := f.client.Get(ctx, f.invalidPath(), false)
	if err != nil || m.Type == "directory" || !aside.fresh(m.LastModified) {
		return nil, false
	}
	return m, true
}

// MovedAside reports whether f's file, found missing by the caller, is
// nb set aside by the server after it answered our save as kept: its
// NAME.invalid is exactly nb, last written at or after saved (our save's
// time, which a move keeps). The read that moves the file aside can
// finish the move a moment after the save's answer (see SaveKept); the
// file is then gone although the save was acknowledged. The caller saves
// nb again, and that save removes NAME.invalid. A file removed by someone
// leaves no such trace, and is not made again.
func (f *File) MovedAside(ctx context.Context, nb *notebook.Notebook, saved time.Time) bool {
	if _, ok := f.setAside(ctx, asideMark{since: saved}); !ok {
		return false
	}
	if !f.holdsAt(ctx, f.invalidPath(), nb, nil) {
		return false
	}
	f.asideMu.Lock()
	f.asideNB = nb
	f.asideMu.Unlock()
	return true
}

// dropSetAside removes f's NAME.invalid when it is exactly nb, which f's
// file now holds, or prior (nil: none), the save of ours that nb follows.
// A copy of a save of ours that the server set aside holds nothing that
// this save did not keep or replace, as a save in place replaces the
// file it overwrites; left there it would show up in listings as a
// broken notebook. Anything else there (a file the server set aside as
// unreadable, someone else's save) is left alone. It is first moved to a
// name of our own, so that what is removed is what was compared: the
// server may set another file aside meanwhile, under the same name.
func (f *File) dropSetAside(ctx context.Context, nb, prior *notebook.Notebook) {
	invalid := f.invalidPath()
	mine := invalid + "." + newToken()
	if _, err := f.client.Rename(ctx, invalid, mine); err != nil {
		if !jupyter.IsNotFound(err) {
			f.log.Warn("moving aside the copy of our save the Jupyter server set aside", "path", invalid, "err", err)
		}
		return
	}
	if !f.holdsAt(ctx, mine, nb, prior) {
		if _, err := f.client.Rename(ctx, mine, invalid); err != nil {
			f.log.Warn("putting back a file the Jupyter server set aside beside the notebook (it is not our save)", "path", invalid, "now", mine, "err", err)
		}
		return
	}
	if err := f.client.Delete(ctx, mine); err != nil && !jupyter.IsNotFound(err) {
		f.log.Warn("removing the copy of our save the Jupyter server set aside", "path", mine, "err", err)
		return
	}
	f.log.Info("removed the copy of our save the Jupyter server had set aside (the notebook holds it)", "notebook", f.name, "path", invalid)
}

// holds reports whether f's file, read now, is nb.
func (f *File) holds(ctx context.Context, nb *notebook.Notebook) bool {
	_, disk, err := Read(ctx, f.client, f.path)
	return err == nil && disk != nil && sameNotebook(disk, nb)
}

// holdsAt reports whether the file at p (not a path the server reads as a
// notebook), read now as text, is nb or (when not nil) other.
func (f *File) holdsAt(ctx context.Context, p string, nb, other *notebook.Notebook) bool {
	m, err := f.client.GetText(ctx, p)
	if err != nil {
		return false
	}
	disk, err := notebook.Parse(m.Content)
	return err == nil && (sameNotebook(disk, nb) || other != nil && sameNotebook(disk, other))
}

// sameNotebook reports whether a and b are the same notebook, compared as
// canonical JSON: the server writes a notebook in its own layout.
func sameNotebook(a, b *notebook.Notebook) bool {
	ca, aerr := canonicalJSON(a)
	cb, berr := canonicalJSON(b)
	return aerr == nil && berr == nil && bytes.Equal(ca, cb)
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
// server before it answered (see SaveKept).
type SaveUndoneError struct {
	Notebook, Path string
	Attempts       int
}

func (e *SaveUndoneError) Error() string {
	return fmt.Sprintf("saving notebook %q (%s): %d times the Jupyter server put the file's previous copy back as it saved, because something else read the notebook while it was being written; nothing was changed. Try again; if it keeps happening, close the notebook where it is being read (JupyterLab) until the agent is done",
		e.Notebook, e.Path, e.Attempts)
}

// SaveGoneError reports that the notebook's file was removed while a change
// was being saved, and not by the server's recovery from a read that met
// the save half-written (see SaveKept): whatever the save wrote went with
// the file (or was set aside by an earlier attempt), so the change is not
// in the notebook, and the file is not made again.
// Or, with Aside set, that the server did set the file aside, at Aside,
// at every save of the change (a save made onto no file cannot be set
// aside by that recovery, so something else is at work).
type SaveGoneError struct {
	Notebook, Path string
	Aside          string // where the server set the file aside, holding the change
	Err            error  // how the save failed
}

func (e *SaveGoneError) Error() string {
	if e.Aside != "" {
		return fmt.Sprintf("saving notebook %q (%s): at every save of this change the Jupyter server moved the file aside as %q (it holds the notebook with this change) and left nothing at the notebook's path. Rename %q back to %q, and close the notebook where else it is open (JupyterLab) until the agent is done",
			e.Notebook, e.Path, e.Aside, e.Aside, e.Path)
	}
	return fmt.Sprintf("saving notebook %q (%s): the file was removed from the Jupyter server while this change was being saved, so the change was not saved to the notebook (the notebook in use is as it was before it). If the file was removed on purpose, stop using the notebook; otherwise put the file back and try again",
		e.Notebook, e.Path)
}

func (e *SaveGoneError) Unwrap() error { return e.Err }

// CallerCanFix: the file is the caller's to put back, or to let go.
func (*SaveGoneError) CallerCanFix() bool { return true }

// Client is the REST client of the server the file is on.
func (f *File) Client() *jupyter.Client { return f.client }
