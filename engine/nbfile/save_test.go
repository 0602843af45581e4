package nbfile

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// race is what a read on jupyter_server's asynchronous contents manager
// that met a save of the notebook half-written leaves of the file (see
// SaveKept), or what someone else does to it during the save.
type race int

const (
	raceNone race = iota
	// The read moved the file aside and put the save's copy back before
	// the save ended: the save answers with the copy's time.
	raceUndone
	// The same, and the server then set aside another file under the same
	// name (someone else's save): NAME.invalid is not ours.
	raceUndoneForeign
	// The save ended between the read's two moves: nothing is left at the
	// path, and the save answers 404 "No such file or directory".
	raceSetAside
	// The read's first move ended just after the save's answer: the save
	// answered as kept, and the file is gone.
	raceSetAsideAfter
	// Someone deleted the file during the save, which answers 404.
	raceDeleted
	// The server wrote the save, and its answer was lost on the way.
	raceAnswerLost
	// The save was lost on the way, after it left: the server never
	// wrote it, and nobody answered.
	raceRequestLost
)

// raceTransport drives those interleavings deterministically against the
// real server: each PUT of the notebook is sent to the server, which
// writes the file; then the file is put, on disk, in the state the race
// leaves it in, and the save is answered as the server's save answers at
// its end, with the server's own answer to a read of the path (which is
// how the save's 404 comes about). One race per PUT, in order; PUTs after
// them, and every other request, go to the server untouched.
type raceTransport struct {
	urlPath string // the notebook's escaped URL path
	disk    string // the notebook on disk

	mu    sync.Mutex
	races []race
}

func (rt *raceTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPut || r.URL.EscapedPath() != rt.urlPath {
		return http.DefaultTransport.RoundTrip(r)
	}
	rt.mu.Lock()
	next := raceNone
	if len(rt.races) > 0 {
		next, rt.races = rt.races[0], rt.races[1:]
	}
	rt.mu.Unlock()
	switch next {
	case raceNone:
		return http.DefaultTransport.RoundTrip(r)
	case raceRequestLost:
		return nil, io.ErrUnexpectedEOF
	case raceAnswerLost:
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	// The copy the server's save takes before writing: its bytes and
	// time (shutil.copy2).
	old, rerr := os.ReadFile(rt.disk)
	st, serr := os.Stat(rt.disk)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	invalid := rt.disk + ".invalid"
	switch next {
	case raceUndone, raceUndoneForeign:
		if rerr != nil || serr != nil {
			return nil, fmt.Errorf("test: no file to copy before the save: %v %v", rerr, serr)
		}
		err = errors.Join(os.Rename(rt.disk, invalid), os.WriteFile(rt.disk, old, 0o644), os.Chtimes(rt.disk, st.ModTime(), st.ModTime()))
		if next == raceUndoneForeign {
			err = errors.Join(err, os.WriteFile(invalid, []byte(`{"cells": [], "somebody": "else"}`), 0o644))
		}
	case raceSetAside, raceSetAsideAfter:
		err = os.Rename(rt.disk, invalid)
	case raceDeleted:
		err = os.Remove(rt.disk)
	}
	if err != nil {
		return nil, fmt.Errorf("test: making the race's state: %w", err)
	}
	if next == raceSetAsideAfter {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// The save's own end: a read of the path, without content.
	get, err := http.NewRequestWithContext(r.Context(), http.MethodGet, r.URL.String()+"?content=0", nil)
	if err != nil {
		return nil, err
	}
	get.Header = r.Header.Clone()
	get.Header.Del("Content-Type")
	return http.DefaultTransport.RoundTrip(get)
}

// raceFixture is a notebook on the shared server, saved through a
// raceTransport.
type raceFixture struct {
	*fixture
	rt        *raceTransport
	file      *File
	p, disk   string
	lastSaved time.Time // the file's time as last read or saved
}

// asyncContents makes a test server use jupyter_server's asynchronous
// contents manager (the default of jupyter_server 2), the one whose reads
// run beside saves.
const asyncContents = "--ServerApp.contents_manager_class=jupyter_server.services.contents.largefilemanager.AsyncLargeFileManager"

// managers are the contents managers the races are driven on: the states
// they leave are the asynchronous one's, and the synchronous one (the
// default of jupyter_server 1) answers a read of a missing file in other
// words.
var managers = []struct {
	name string
	args []string
}{{"async", []string{asyncContents}}, {"sync", nil}}

func newRaceFixture(t *testing.T, args []string, cells int) *raceFixture {
	t.Helper()
	srv := jupytertest.Shared(t)
	if args != nil {
		srv = jupytertest.SharedWith(t, jupytertest.WithArgs(args...))
	}
	f := &fixture{srv: srv, client: srv.Client(), dir: srv.Subdir(t)}
	p := f.path("busy.ipynb")
	rt := &raceTransport{urlPath: "/api/contents/" + p, disk: f.srv.Path(p)}
	client, err := jupyter.NewClient(f.srv.URL, f.srv.Token, jupyter.Options{HTTPClient: &http.Client{Transport: rt}})
	checkNoError(t, "client", err)
	rf := &raceFixture{fixture: f, rt: rt, file: New(client, p, "nb", nil, LockTimes{}), p: p, disk: rt.disk}
	nb := rf.notebook(t, cells)
	data, err := nb.Marshal()
	checkNoError(t, "marshal", err)
	m, err := f.client.SaveNotebook(ctxT(t), p, data)
	checkNoError(t, "the first save", err)
	rf.lastSaved = m.LastModified
	return rf
}

// notebook is a notebook of n cells.
func (rf *raceFixture) notebook(t *testing.T, n int) *notebook.Notebook {
	t.Helper()
	nb := notebook.New()
	for i := range n {
		nb.Cells = append(nb.Cells, nb.NewCell("code", fmt.Sprintf("# cell %d", i)))
	}
	return nb
}

// save saves nb under the save lock, with the given races.
func (rf *raceFixture) save(t *testing.T, nb *notebook.Notebook, races ...race) (*jupyter.Model, error) {
	t.Helper()
	ctx := ctxT(t)
	rf.rt.mu.Lock()
	rf.rt.races = races
	rf.rt.mu.Unlock()
	lock, err := rf.file.Lock(ctx)
	checkNoError(t, "the save lock", err)
	defer lock.Release()
	data, err := nb.Marshal()
	checkNoError(t, "marshal", err)
	m, err := rf.file.SaveKept(ctx, lock, rf.lastSaved, nb, data)
	if err == nil {
		rf.lastSaved = m.LastModified
	}
	return m, err
}

// onDisk is the notebook in the file at disk path p; nil if there is none.
func onDisk(t *testing.T, p string) *notebook.Notebook {
	t.Helper()
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	checkNoError(t, "reading "+p, err)
	nb, err := notebook.Parse(b)
	checkNoError(t, "parsing "+p, err)
	return nb
}

// besides lists the files beside the notebook on disk but the server's
// checkpoints.
func (rf *raceFixture) besides(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(rf.disk))
	checkNoError(t, "listing", err)
	var names []string
	for _, e := range entries {
		if n := e.Name(); n != "busy.ipynb" && n != ".ipynb_checkpoints" && !IsLockFile(n) {
			names = append(names, n)
		}
	}
	return names
}

// TestSaveKeptBesideServerRecovery drives, one by one, the ways the
// server's recovery from a read that met our save half-written can leave
// the file, and a deletion by someone during the save. A save the server
// set aside (no file left, our save answered 404 after it wrote) is made
// again from memory, even after every other attempt was undone, and never
// said to have changed nothing; a copy of our save left as NAME.invalid is
// removed once the file holds it, anything else there is kept; a file
// someone deleted during the save is not made again.
func TestSaveKeptBesideServerRecovery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		races []race
		// want: "kept", "undone" (SaveUndoneError, the file as before),
		// "aside" (SaveGoneError naming NAME.invalid), "gone"
		// (SaveGoneError, no file), or "unanswered" (the file as before,
		// and the error says the change may yet be written).
		want    string
		besides []string // files left beside the notebook
	}{
		{"undone once", []race{raceUndone}, "kept", nil},
		{"set aside", []race{raceSetAside}, "kept", nil},
		// The failing run of TestSavesBesideForeignReads: the last
		// attempt allowed for undone saves is set aside.
		{"undone twice then set aside", []race{raceUndone, raceUndone, raceSetAside}, "kept", nil},
		// Not the server's recovery alone (a save onto no file has no
		// copy to put back): the error says where the change is.
		{"set aside every time", []race{raceSetAside, raceSetAside, raceSetAside}, "aside", []string{"busy.ipynb.invalid"}},
		{"undone every time", []race{raceUndone, raceUndone, raceUndone}, "undone", []string{"busy.ipynb.invalid"}},
		{"not ours beside", []race{raceUndoneForeign}, "kept", []string{"busy.ipynb.invalid"}},
		{"deleted during the save", []race{raceDeleted}, "gone", nil},
		// What the undone save left is kept: the change was not.
		{"undone then deleted", []race{raceUndone, raceDeleted}, "gone", []string{"busy.ipynb.invalid"}},
		{"set aside then deleted", []race{raceSetAside, raceDeleted}, "gone", []string{"busy.ipynb.invalid"}},
		// No answer: the file tells whether the save was written.
		{"answer lost", []race{raceAnswerLost}, "kept", nil},
		{"request lost", []race{raceRequestLost}, "unanswered", nil},
	} {
		for _, cm := range managers {
			t.Run(cm.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				rf := newRaceFixture(t, cm.args, 3)
				before := onDisk(t, rf.disk)
				nb := rf.notebook(t, 4)
				m, err := rf.save(t, nb, tc.races...)
				disk := onDisk(t, rf.disk)
				var undone *SaveUndoneError
				var gone *SaveGoneError
				switch tc.want {
				case "kept":
					if err != nil {
						t.Fatalf("save: %v, want it kept", err)
					}
					if disk == nil || !sameNotebook(disk, nb) {
						t.Fatalf("the save was answered as kept, but the file holds %v", disk)
					}
					if st, err := os.Stat(rf.disk); err != nil || st.ModTime().Sub(m.LastModified).Abs() > time.Microsecond {
						t.Errorf("the save answered the time %s; the file's is %v (%v)", m.LastModified, st.ModTime(), err)
					}
				case "undone":
					if !errors.As(err, &undone) || undone.Attempts != saveAttempts {
						t.Fatalf("save: %v, want a SaveUndoneError after %d attempts", err, saveAttempts)
					}
					if disk == nil || !sameNotebook(disk, before) {
						t.Fatalf("every save was undone, but the file holds %v, not the notebook as before", disk)
					}
				case "aside":
					if !errors.As(err, &gone) || gone.Aside != rf.p+".invalid" || !strings.Contains(err.Error(), gone.Aside) {
						t.Fatalf("save: %v (%T), want a SaveGoneError naming %s.invalid", err, err, rf.p)
					}
					if aside := onDisk(t, rf.disk+".invalid"); disk != nil || aside == nil || !sameNotebook(aside, nb) {
						t.Errorf("the file is %v and NAME.invalid %v; want none, and the change", disk, aside)
					}
				case "unanswered":
					if err == nil || !strings.Contains(err.Error(), "may still write it") {
						t.Fatalf("save: %v, want an error saying the change may still be written", err)
					}
					if disk == nil || !sameNotebook(disk, before) {
						t.Fatalf("a save the server never had, but the file holds %v, not the notebook as before", disk)
					}
				case "gone":
					if !errors.As(err, &gone) || gone.Aside != "" {
						t.Fatalf("save: %v (%T), want a SaveGoneError", err, err)
					}
					if disk != nil {
						t.Errorf("a file someone deleted during the save was made again")
					}
				}
				if err != nil && strings.Contains(err.Error(), "nothing was changed") && tc.want != "undone" {
					t.Errorf("the save may have written, yet it says %q", err)
				}
				if got := rf.besides(t); strings.Join(got, " ") != strings.Join(tc.besides, " ") {
					t.Errorf("beside the notebook: %q, want %q", got, tc.besides)
				}
				if tc.name == "not ours beside" {
					if b, err := os.ReadFile(rf.disk + ".invalid"); err != nil || !strings.Contains(string(b), "somebody") {
						t.Errorf("the file someone else had set aside was not left as it was: %q, %v", b, err)
					}
				}
			})
		}
	}
}

// TestMovedAsideAfterTheAnswer: the server's read may move the file aside
// a moment after our save was answered as kept. The save cannot know;
// MovedAside, asked by whoever next finds the file missing, tells that
// apart from a file someone removed (and from an old NAME.invalid, or one
// that is not our save), and the save made again removes NAME.invalid.
func TestMovedAsideAfterTheAnswer(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	rf := newRaceFixture(t, []string{asyncContents}, 3)
	nb := rf.notebook(t, 4)
	m, err := rf.save(t, nb, raceSetAsideAfter)
	checkNoError(t, "the save", err)
	if onDisk(t, rf.disk) != nil {
		t.Fatal("the race left the file in place")
	}
	if rf.file.MovedAside(ctx, rf.notebook(t, 5), m.LastModified) {
		t.Error("a NAME.invalid that is not the notebook in memory was taken for our save")
	}
	if rf.file.MovedAside(ctx, nb, m.LastModified.Add(time.Second)) {
		t.Error("a NAME.invalid older than our save was taken for it")
	}
	if !rf.file.MovedAside(ctx, nb, m.LastModified) {
		t.Fatal("our save, set aside by the server after it answered, was not recognised")
	}
	// Saved again from memory, as the engine does.
	if _, err := rf.save(t, nb); err != nil {
		t.Fatalf("saving again: %v", err)
	}
	if disk := onDisk(t, rf.disk); disk == nil || !sameNotebook(disk, nb) {
		t.Fatalf("saved again, the file holds %v", disk)
	}
	if got := rf.besides(t); len(got) != 0 {
		t.Errorf("beside the notebook after saving again: %q", got)
	}

	// Removed by someone: no trace, or only an old one.
	checkNoError(t, "an old copy set aside", os.WriteFile(rf.disk+".invalid", mustMarshal(t, nb), 0o644))
	old := rf.lastSaved.Add(-time.Minute)
	checkNoError(t, "its time", os.Chtimes(rf.disk+".invalid", old, old))
	checkNoError(t, "the removal", os.Remove(rf.disk))
	if rf.file.MovedAside(ctx, nb, rf.lastSaved) {
		t.Error("a file someone removed, with an old NAME.invalid beside it, was taken for one the server set aside")
	}
	checkNoError(t, "removing NAME.invalid", os.Remove(rf.disk+".invalid"))
	if rf.file.MovedAside(ctx, nb, rf.lastSaved) {
		t.Error("a file someone removed was taken for one the server set aside")
	}
}

func mustMarshal(t *testing.T, nb *notebook.Notebook) []byte {
	t.Helper()
	b, err := nb.Marshal()
	checkNoError(t, "marshal", err)
	return b
}
