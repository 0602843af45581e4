package nbfile

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path"
	"regexp"
	"sync"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// The save lock keeps two server processes (two agents' hosts, each with
// its own jupyter-mcp-server, on one Jupyter server) from losing each
// other's changes. Within one process document.writeMu serializes the
// read-modify-save of a notebook; across processes the only thing the
// writers share is the Jupyter server, so the lock lives there, as a file
// next to the notebook:
//
//   - acquire: write our token to a file of our own (".x.ipynb.lock.TOKEN"),
//     then rename it to the lock name (".x.ipynb.lock"). The Contents API
//     refuses a rename onto an existing file with 409, so one process wins.
//   - the holder reloads the notebook if the file changed, applies its
//     change, reads the lock back (our token must be in it), saves, and
//     deletes the lock.
//   - a holder that crashed leaves its lock behind: a waiter that sees the
//     same lock content for the TTL (10 s) of its own clock (no clock is
//     compared across machines) moves it aside and takes the lock. A live
//     holder rewrites its lock every 2.5 s while it holds it, so it
//     is never taken as stale. A rewrite that fails (a timeout, a 5xx) is
//     tried again on the next tick; a holder whose lock was last rewritten
//     half a TTL ago or more does not save (it could be taken over during
//     the save) but starts over with a fresh lock.
//
// The rename is exclusive on jupyter_server's synchronous file manager (the
// default of jupyter_server 1.x): the existence check and the move run in
// one step of its event loop. The asynchronous manager (the default of 2.x)
// checks, then moves in a worker thread, so two renames can both succeed:
// the last one's content stays. Reading the lock back before the save
// makes the loser of that race see another token and start over.
//
// Lock names start with a dot, which Jupyter hides from listings; a server
// that refuses hidden files (allow_hidden false, the default) gets the same
// names without the dot, which list_files filters out.

// LockTimes are the lock's times; the zero value means the defaults
// (tests shorten them).
type LockTimes struct {
	TTL  time.Duration // a lock unchanged this long is stale; a holder rewrites it every TTL/4
	Wait time.Duration // how long a save waits for the lock
	Look time.Duration // how often a waiter reads the lock
}

var defaultLockTimes = LockTimes{TTL: 10 * time.Second, Wait: 30 * time.Second, Look: 500 * time.Millisecond}

func (t LockTimes) orDefault() LockTimes {
	if t.TTL == 0 {
		return defaultLockTimes
	}
	return t
}

// lockFileName matches the lock names listings leave out: the hidden lock
// and the temporary and stale forms, which carry a token of ours. A visible
// "x.ipynb.lock" may be a user's own file (foreign.go): it is listed
// unless it reads as ours.
var lockFileName = regexp.MustCompile(`^\..*\.ipynb\.lock$|\.ipynb\.lock\.(stale\.)?[0-9a-f]{32}$`)

// IsLockFile reports whether a file name is one of our save lock files.
func IsLockFile(name string) bool { return lockFileName.MatchString(path.Base(name)) }

// SaveLockError says a change was not saved because the notebook's save lock
// could not be taken: another process held it the whole time, or the Jupyter
// server failed while we tried.
type SaveLockError struct {
	Notebook, Path string
	LockPath       string        // the lock file on the Jupyter server
	Holder         string        // who held the lock, as its lock file says ("" if unknown)
	Waited         time.Duration // how long we waited
	Err            error         // the Jupyter error that stopped us, if any
}

func (e *SaveLockError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("notebook %q (%s) was not saved: taking its save lock failed: %v", e.Notebook, e.Path, e.Err)
	}
	holder := "another process"
	if e.Holder != "" {
		holder = e.Holder
	}
	return fmt.Sprintf("notebook %q (%s) was not saved: %s held its save lock for the %s we waited", e.Notebook, e.Path, holder, e.Waited.Round(time.Second))
}

func (e *SaveLockError) Unwrap() error { return e.Err }

// CallerCanFix: a lock held by another process is the caller's to retry; a
// Jupyter failure is not.
func (e *SaveLockError) CallerCanFix() bool { return e.Err == nil }

// SaveLockLostError says that the save lock was no longer ours when we were
// about to save (another process took it as stale): the change was not saved.
type SaveLockLostError struct {
	Notebook, Path string
	Holder         string // who holds it now, if known
}

func (e *SaveLockLostError) Error() string {
	return fmt.Sprintf("notebook %q (%s) was not saved: its save lock was taken over by %s before the save", e.Notebook, e.Path, orUnknown(e.Holder))
}

// CallerCanFix: nothing was saved; the caller can read and retry.
func (*SaveLockLostError) CallerCanFix() bool { return true }

// SaveLockStaleError says that the save lock was still ours when we were
// about to save, but had not been rewritten for so long (the Jupyter server
// failed our refreshes) that another process could take it over as stale
// before the save ends: the change was not saved.
type SaveLockStaleError struct {
	Notebook, Path string
	LockPath       string
	Age            time.Duration // since our last successful write of the lock
	Err            error         // why the last refresh failed, if one did
}

func (e *SaveLockStaleError) Error() string {
	why := ""
	if e.Err != nil {
		why = fmt.Sprintf(" (refreshing it failed: %v)", e.Err)
	}
	return fmt.Sprintf("notebook %q (%s) was not saved: its save lock was last refreshed %s ago%s, so another process could take it over during the save",
		e.Notebook, e.Path, e.Age.Round(100*time.Millisecond), why)
}

func (e *SaveLockStaleError) Unwrap() error { return e.Err }

// CallerCanFix: the Jupyter server is failing, not the call.
func (*SaveLockStaleError) CallerCanFix() bool { return false }

func orUnknown(s string) string {
	if s == "" {
		return "another process"
	}
	return s
}

// lockContent is what a lock file holds.
type lockContent struct {
	Owner string `json:"owner"` // host and pid, for people and messages
	Token string `json:"token"` // unique to one holding
	Seq   int    `json:"seq"`   // bumped by every refresh
	Note  string `json:"note"`
}

// lockOwner names this process in lock files.
var lockOwner = func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("jupyter-mcp-server pid %d on %s", os.Getpid(), host)
}()

func newToken() string {
	var b [16]byte
	_, _ = cryptorand(b[:])
	return hex.EncodeToString(b[:])
}

var cryptorand = crand.Read

// lockNames are the lock file names of one notebook.
type lockNames struct{ lock, dir, base string }

func namesFor(nbPath string, hidden bool) lockNames {
	dir, base := path.Split(nbPath)
	if hidden {
		base = "." + base
	}
	return lockNames{lock: dir + base + ".lock", dir: dir, base: base}
}

// Lock is a held save lock.
type Lock struct {
	client *jupyter.Client
	log    *slog.Logger
	path   string // the lock file
	token  string

	notebook, nbPath string // the notebook's name in use and path, for errors

	ttl time.Duration

	mu         sync.Mutex
	seq        int
	lost       error     // set when a refresh found the lock gone or not ours
	fresh      time.Time // when our last successful write of the lock was sent
	refreshErr error     // why the last refresh failed; nil once one succeeds

	stop chan struct{}
	done chan struct{}
}

// Lock takes the save lock of f's notebook, waiting up to LockTimes.Wait
// for another holder to release it. ctx must not be cancelled while the
// lock is taken or held (the caller detaches it, as the group commit's
// leader does): the wait has its own bound, and a request of the lock
// cut short would leave a lock file behind.
func (f *File) Lock(ctx context.Context) (*Lock, error) {
	start := time.Now()
	times := f.times.orDefault()
	var names lockNames
	fail := func(holder string, err error) error {
		return &SaveLockError{Notebook: f.name, Path: f.path, LockPath: names.lock, Holder: holder, Waited: time.Since(start), Err: err}
	}
	token := newToken()
	content := func(seq int) string {
		b, _ := json.Marshal(lockContent{Owner: lockOwner, Token: token, Seq: seq,
			Note: "jupyter-mcp-server holds this file while it saves " + path.Base(f.path) + "; it is stale 10 s after its last change"})
		return string(b)
	}
	// The file we rename into place; a server refusing hidden names
	// (400) makes us use visible ones from then on.
	var tmp string
	for {
		hidden := f.lockMode.Load() != 2
		names = namesFor(f.path, hidden)
		tmp = names.lock + "." + token
		_, err := f.client.SaveText(ctx, tmp, content(0))
		if err == nil {
			if hidden {
				f.lockMode.Store(1)
			}
			break
		}
		var ae *jupyter.APIError
		if hidden && errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
			f.lockMode.Store(2)
			continue
		}
		return nil, fail("", err)
	}
	dropTmp := func() {
		if err := f.client.Delete(ctx, tmp); err != nil && !jupyter.IsNotFound(err) {
			f.log.Warn("removing a save lock file", "path", tmp, "err", err)
		}
	}

	var (
		seen      []byte    // the lock content we last saw held by someone else
		seenSince time.Time // since when, on our clock
		lastLook  time.Time
		holder    string
		backoff   = 4 * time.Millisecond
	)
	for {
		// Nobody can take the lock as stale sooner than a TTL after its
		// content appears, which is after this instant.
		sent := time.Now()
		_, err := f.client.Rename(ctx, tmp, names.lock)
		if err == nil {
			return f.hold(f.client, names.lock, token, times.TTL, sent, content), nil
		}
		if !isConflict(err) {
			dropTmp()
			return nil, fail("", err)
		}
		// Someone holds it. Now and then look at what they wrote, to name
		// them and to notice a lock nobody refreshes (the same content
		// seen a TTL apart: every holding has its own token, every
		// refresh its own seq). Only now and then: the Jupyter server
		// serves the holder too.
		if time.Since(lastLook) >= times.Look {
			lastLook = time.Now()
			m, gerr := f.client.Get(ctx, names.lock, true)
			switch {
			case gerr == nil:
				var s string
				_ = json.Unmarshal(m.Content, &s)
				if !isOurLock(s) {
					dropTmp()
					return nil, &SaveLockInTheWayError{Notebook: f.name, Path: f.path, LockPath: names.lock}
				}
				var lc lockContent
				if json.Unmarshal([]byte(s), &lc) == nil && lc.Owner != "" {
					holder = lc.Owner
				}
				if !bytes.Equal([]byte(s), seen) {
					seen, seenSince = []byte(s), time.Now()
				} else if time.Since(seenSince) >= times.TTL {
					f.breakStaleLock(ctx, names, token, s)
					seen = nil
					continue
				}
			case jupyter.IsNotFound(gerr):
				continue // released meanwhile: try again at once
			default:
				dropTmp()
				return nil, fail(holder, gerr)
			}
		}
		if time.Since(start) >= times.Wait {
			dropTmp()
			return nil, fail(holder, nil)
		}
		// Jittered backoff, so that waiters do not march in step.
		time.Sleep(backoff/2 + rand.N(backoff))
		backoff = min(backoff*2, 40*time.Millisecond)
	}
}

// breakStaleLock moves a lock whose content did not change for the TTL
// out of the way: renamed to a name of our own (so that of several waiters
// only one moves it), checked to be the stale one, and deleted. Had another
// waiter meanwhile broken it and taken a fresh lock, what we moved is that
// fresh lock: it goes back.
func (f *File) breakStaleLock(ctx context.Context, names lockNames, token, stale string) {
	client := f.client
	aside := names.lock + ".stale." + token
	if _, err := client.Rename(ctx, names.lock, aside); err != nil {
		return // gone already, or someone else moved it
	}
	m, err := client.Get(ctx, aside, true)
	var s string
	if err == nil {
		_ = json.Unmarshal(m.Content, &s)
	}
	if err == nil && s != stale {
		if _, err := client.Rename(ctx, aside, names.lock); err == nil {
			return
		}
	}
	f.log.Warn("removed a stale save lock", "path", names.lock, "content", stale)
	if err := client.Delete(ctx, aside); err != nil && !jupyter.IsNotFound(err) {
		f.log.Warn("removing a stale save lock", "path", aside, "err", err)
	}
}

// isConflict reports a 409 from the Contents API (the rename target exists).
func isConflict(err error) bool {
	var ae *jupyter.APIError
	return errors.As(err, &ae) && ae.Status == http.StatusConflict
}

// hold starts holding a lock file that holds our token, written (or
// renamed into place) through client by a request sent at sent, and its
// refresher.
func (f *File) hold(client *jupyter.Client, lockPath, token string, ttl time.Duration, sent time.Time, content func(int) string) *Lock {
	l := &Lock{client: client, log: f.log, path: lockPath, token: token, notebook: f.name, nbPath: f.path, ttl: ttl, fresh: sent,
		stop: make(chan struct{}), done: make(chan struct{})}
	go l.refresh(ttl/4, content)
	return l
}

// refresh rewrites the lock every so often while it is held, so that a
// long save is never taken for a crashed one. It first reads the lock back:
// a lock that is no longer ours is left alone (and we know we lost it). A
// failed read or write (a timeout, a 5xx, a dropped connection) is tried
// again on the next tick: giving up would let the lock go stale under a
// save that is still running.
func (l *Lock) refresh(every time.Duration, content func(int) string) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	failed := func(what string, err error) {
		l.mu.Lock()
		l.refreshErr = err
		l.mu.Unlock()
		l.log.Warn(what+" a save lock; trying again", "path", l.path, "err", err)
	}
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if _, err := l.check(context.Background()); errors.Is(err, errNotOurs) {
			return
		} else if err != nil {
			failed("reading back", err)
			continue
		}
		l.mu.Lock()
		l.seq++
		seq := l.seq
		l.mu.Unlock()
		sent := time.Now()
		if _, err := l.client.SaveText(context.Background(), l.path, content(seq)); err != nil {
			failed("refreshing", err)
			continue
		}
		l.mu.Lock()
		l.fresh, l.refreshErr = sent, nil
		l.mu.Unlock()
	}
}

// errNotOurs says the lock file holds another holding's token.
var errNotOurs = errors.New("the save lock is not ours")

// check reads the lock back: nil when it holds our token, else errNotOurs
// (with the holder it names) or the Jupyter error. Not ours is remembered.
func (l *Lock) check(ctx context.Context) (string, error) {
	m, err := l.client.Get(ctx, l.path, true)
	if err != nil && !jupyter.IsNotFound(err) {
		return "", err
	}
	var lc lockContent
	if err == nil {
		var s string
		_ = json.Unmarshal(m.Content, &s)
		_ = json.Unmarshal([]byte(s), &lc)
	}
	if err != nil || lc.Token != l.token {
		l.mu.Lock()
		l.lost = errNotOurs
		l.mu.Unlock()
		return lc.Owner, errNotOurs
	}
	return "", nil
}

// Verify reads the lock back before a save: it must still hold our token,
// and have been rewritten less than half a TTL ago. The token alone says
// nobody took the lock over before now; the age says nobody can during a
// save of up to half a TTL (others take it no sooner than a TTL after our
// last write). Refreshes keep it young while the server answers them.
func (l *Lock) Verify(ctx context.Context) error {
	holder, err := l.check(ctx)
	switch {
	case errors.Is(err, errNotOurs):
		return &SaveLockLostError{Notebook: l.notebook, Path: l.nbPath, Holder: holder}
	case err != nil:
		return &SaveLockError{Notebook: l.notebook, Path: l.nbPath, LockPath: l.path, Err: err}
	}
	l.mu.Lock()
	age, rerr := time.Since(l.fresh), l.refreshErr
	l.mu.Unlock()
	if age >= l.ttl/2 {
		return &SaveLockStaleError{Notebook: l.notebook, Path: l.nbPath, LockPath: l.path, Age: age, Err: rerr}
	}
	return nil
}

// Release stops the refresher and deletes the lock, unless it turned out
// not to be ours.
func (l *Lock) Release() {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	lost := l.lost != nil
	l.mu.Unlock()
	if lost {
		return
	}
	if err := l.client.Delete(context.Background(), l.path); err != nil && !jupyter.IsNotFound(err) {
		l.log.Warn("releasing a save lock", "path", l.path, "err", err)
	}
}

// LockName is the name f's save lock goes by on the server, hidden or
// visible as the server takes names: known once a lock was taken.
func (f *File) LockName() string {
	return namesFor(f.path, f.lockMode.Load() != 2).lock
}
