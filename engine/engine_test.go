package engine

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// The integration tests share one real Jupyter server, started by TestMain
// and stopped once they all finish; the few that need it configured
// otherwise share one per configuration (jupytertest.SharedWith), and only
// a test that kills its server has one of its own. Each test works in its
// own directory; the subtests of TestJupyter that do not kill or restart
// their kernel share one kernel to keep the suite fast.

func TestMain(m *testing.M) { os.Exit(jupytertest.StartMain(m)) }

// fixture is one subtest's view of the shared server.
type fixture struct {
	srv    *jupytertest.Server
	client *jupyter.Client
	e      *Engine
	dir    string // the test's directory, relative to the server root
	shared *sharedKernel
}

// sharedKernel is a kernel started on first use and shared by subtests.
type sharedKernel struct {
	once sync.Once
	id   string
	err  error
}

func (s *sharedKernel) get(t *testing.T, c *jupyter.Client) string {
	t.Helper()
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		k, err := c.StartKernel(ctx, "")
		if err != nil {
			s.err = err
			return
		}
		s.id = k.ID
	})
	if s.err != nil {
		t.Fatalf("starting the shared kernel: %v", s.err)
	}
	return s.id
}

func newFixture(t *testing.T, srv *jupytertest.Server, shared *sharedKernel, caps ...Capability) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := New(ctx, Config{JupyterURL: srv.URL, JupyterToken: srv.Token, Capabilities: caps, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return &fixture{srv: srv, client: srv.Client(), e: e, dir: srv.Subdir(t), shared: shared}
}

// testLogger sends the engine's log to the test's output.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// path is a contents path inside the test's directory.
func (f *fixture) path(name string) string { return f.dir + "/" + name }

// use opens (or creates) a notebook on the shared kernel.
func (f *fixture) use(t *testing.T, session, name, file, mode string) NotebookInfo {
	t.Helper()
	info, err := f.e.UseNotebook(ctxT(t), UseRequest{Session: session, Name: name, Path: f.path(file), Mode: mode, KernelID: f.shared.get(t, f.client)})
	if err != nil {
		t.Fatalf("UseNotebook(%s, %s): %v", name, file, err)
	}
	return info
}

// useOwnKernel opens a notebook on a kernel of its own, shut down when the
// test ends.
func (f *fixture) useOwnKernel(t *testing.T, session, name, file, mode string) NotebookInfo {
	t.Helper()
	info, err := f.e.UseNotebook(ctxT(t), UseRequest{Session: session, Name: name, Path: f.path(file), Mode: mode})
	if err != nil {
		t.Fatalf("UseNotebook(%s, %s): %v", name, file, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if ss, err := f.client.ListSessions(ctx); err == nil {
			for _, s := range ss {
				if s.Kernel.ID == info.KernelID {
					f.client.DeleteSession(ctx, s.ID)
				}
			}
		}
		f.client.ShutdownKernel(ctx, info.KernelID)
	})
	return info
}

// file reads a file of the test's directory straight from disk.
func (f *fixture) file(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(f.srv.Path(f.path(name)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// disk parses a notebook of the test's directory from disk.
func (f *fixture) disk(t *testing.T, name string) *notebook.Notebook {
	t.Helper()
	nb, err := notebook.Parse(f.file(t, name))
	if err != nil {
		t.Fatalf("parsing %s from disk: %v", name, err)
	}
	return nb
}

// writeBehind writes a notebook through the Contents API, as another
// client (JupyterLab) would.
func (f *fixture) writeBehind(t *testing.T, name string, nb *notebook.Notebook) {
	t.Helper()
	data, err := nb.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// The file's mtime must move past the one we saved at; filesystems
	// with coarse timestamps need a moment.
	time.Sleep(20 * time.Millisecond)
	if _, err := f.client.SaveNotebook(ctxT(t), f.path(name), data); err != nil {
		t.Fatal(err)
	}
}

// sources lists the cell sources of a notebook.
func sources(nb *notebook.Notebook) []string {
	out := make([]string, len(nb.Cells))
	for i, c := range nb.Cells {
		out[i] = c.Source
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// wantErrorAs checks that err is (or wraps) a T that IsUserError knows, and
// returns it.
func wantErrorAs[T error](t *testing.T, err error) T {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("want a %T, got %T: %v", target, err, err)
	}
	if !IsUserError(err) {
		t.Fatalf("%T is not a user error", target)
	}
	return target
}

func wantUserError(t *testing.T, err error, contains ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a user error containing %q, got nil", contains)
	}
	if !IsUserError(err) {
		t.Fatalf("want a *UserError, got %T: %v", err, err)
	}
	for _, c := range contains {
		if !strings.Contains(err.Error(), c) {
			t.Errorf("error %q does not contain %q", err.Error(), c)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestJupyter(t *testing.T) {
	srv := jupytertest.Shared(t)
	shared := &sharedKernel{}
	run := func(name string, f func(t *testing.T, fx *fixture), caps ...Capability) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, newFixture(t, srv, shared, caps...))
		})
	}
	run("UseNotebook", testUseNotebook)
	run("CellOps", testCellOps)
	run("UpgradeIDs", testUpgradeIDs)
	run("BadInputsLeaveFileUnchanged", testBadInputs)
	run("ExternalEdit", testExternalEdit)
	run("OutsideEditWatched", testOutsideEditWatched)
	run("OutsideEditBeforeCall", testOutsideEditBeforeCall)
	run("OutsideEditResaved", testOutsideEditResaved)
	run("WatcherStops", testWatcherStops)
	run("IndexEditAfterWatchedReload", testIndexEditAfterWatchedReload)
	run("ConcurrentInserts", testConcurrentInserts)
	run("GroupCommit", testGroupCommit)
	run("GroupCommitEdges", testGroupCommitEdges)
	run("ReadsDuringSave", testReadsDuringSave)
	run("SaveLock", testSaveLock)
	run("SaveLockNotOurs", testSaveLockNotOurs)
	run("ListFiles", testListFiles)
	run("ListKernels", testListKernels)
	run("ConnectJupyter", testConnectJupyter)
	run("Events", testEvents)
	run("ExecuteOutputs", testExecuteOutputs)
	run("ExecuteImage", testExecuteImage)
	run("OutputViews", testOutputViews)
	run("ExecuteTimeout", testExecuteTimeout)
	run("ExecuteRerunWhileRunning", testExecuteRerun)
	run("ExecuteCancel", testExecuteCancel)
	run("ExecuteCancelQueued", testExecuteCancelQueued)
	run("ExecuteCancelQueuedSparesTheNext", testExecuteCancelQueuedSparesTheNext)
	run("ExecuteInput", testExecuteInput)
	run("ExecuteBigOutput", testExecuteBigOutput)
	run("ExecuteCode", testExecuteCode)
	run("KernelDeath", testKernelDeath)
	run("KernelAutoRestart", testKernelAutoRestart, Capability{Name: CapKernelAutoRestart, Enabled: true, Source: "flag"})
	run("RestartNotebook", testRestartNotebook)
	run("Previews", testPreviews)
	run("PreviewRestart", testPreviewRestart)
	run("PreviewIsTheCall", testPreviewIsTheCall)
	run("Undo", testUndo)
	run("PersonInterrupt", testPersonInterrupt)             // person_interrupt_test.go
	run("JupyterHealth", testJupyterHealth)                 // jupyter_health_test.go
	run("RefusedTokenAskedLess", testRefusedTokenAskedLess) // jupyter_health_test.go
}

func testUseNotebook(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	kid := f.shared.get(t, f.client)

	info := f.use(t, "s1", "nb", "a.ipynb", "create")
	if !info.Current || info.Cells != 0 || info.KernelID != kid || info.Path != f.path("a.ipynb") {
		t.Fatalf("created notebook info: %+v", info)
	}
	if nb := f.disk(t, "a.ipynb"); len(nb.Cells) != 0 || nb.NBFormat != 4 {
		t.Fatalf("created file: %+v", nb)
	}
	before := f.file(t, "a.ipynb")

	// Create over an existing file, connect to a missing one.
	f.writeBehind(t, "exists.ipynb", notebook.New())
	_, err := e.UseNotebook(ctx, UseRequest{Session: "s1", Name: "other", Path: f.path("exists.ipynb"), Mode: "create", KernelID: kid})
	wantErrorAs[*NotebookExistsError](t, err)
	_, err = e.UseNotebook(ctx, UseRequest{Session: "s1", Name: "missing", Path: f.path("nope.ipynb"), Mode: "connect", KernelID: kid})
	wantErrorAs[*NoFileError](t, err)
	_, err = e.UseNotebook(ctx, UseRequest{Session: "s1", Name: "x", Path: f.path("x.ipynb"), Mode: "open", KernelID: kid})
	if m := wantErrorAs[*ModeError](t, err); m.Mode != "open" {
		t.Errorf("ModeError.Mode = %q, want open", m.Mode)
	}
	_, err = e.UseNotebook(ctx, UseRequest{Session: "s1", Name: "x", Path: f.path("x.ipynb"), Mode: "create", KernelID: "no-such-kernel"})
	wantUserError(t, err, "not found on the Jupyter server")
	if _, err := os.Stat(f.srv.Path(f.path("x.ipynb"))); !os.IsNotExist(err) {
		t.Errorf("a failed create left the file behind: %v", err)
	}
	// A name is bound to one path; a path may have several names, which
	// are one notebook on one kernel (as in the reference).
	_, err = e.UseNotebook(ctx, UseRequest{Session: "s1", Name: "nb", Path: f.path("b.ipynb"), Mode: "create", KernelID: kid})
	if n := wantErrorAs[*NameInUseError](t, err); n.Name != "nb" || n.Path != f.path("a.ipynb") {
		t.Errorf("NameInUseError = %+v", n)
	}
	_, err = e.UseNotebook(ctx, UseRequest{Session: "s1", Name: "nb2", Path: f.path("a.ipynb"), Mode: "connect", KernelID: "other-kernel"})
	if m := wantErrorAs[*KernelMismatchError](t, err); m.Notebook != "nb" || m.Kernel != kid {
		t.Errorf("KernelMismatchError = %+v", m)
	}
	_, err = e.UseNotebook(ctx, UseRequest{Session: "s1", Name: "nb2", Path: f.path("a.ipynb"), Mode: "create"})
	wantErrorAs[*NotebookExistsError](t, err)
	if !bytes.Equal(before, f.file(t, "a.ipynb")) {
		t.Fatal("failed use_notebook calls changed the file")
	}
	alias, err := e.UseNotebook(ctx, UseRequest{Session: "s1", Name: "nb2", Path: f.path("a.ipynb"), Mode: "connect", KernelID: kid})
	checkNoError(t, "a second name", err)
	if alias.Name != "nb2" || alias.KernelID != kid || !alias.Current {
		t.Errorf("second name = %+v", alias)
	}
	released, err := e.UnuseNotebook(ctx, "s1", "nb2")
	checkNoError(t, "releasing the second name", err)
	if len(released.AlsoOpenAs) != 1 || released.AlsoOpenAs[0] != "nb" || released.KernelShutDown {
		t.Errorf("unuse of the second name = %+v", released)
	}
	_, err = e.UseNotebook(ctx, UseRequest{Session: "s1", Name: "nb", Path: f.path("a.ipynb"), Mode: "connect"})
	checkNoError(t, "nb again", err)

	// Current notebook is per session.
	if _, err := e.Notebook("s2", ""); err == nil {
		t.Fatal("session s2 has no current notebook, want an error")
	} else {
		if n := wantErrorAs[*NoNotebookError](t, err); n.Name != "" || !slices.Equal(n.InUse, []string{"nb"}) {
			t.Errorf("NoNotebookError = %+v, want no name and [nb] in use", n)
		}
	}
	if got, err := e.Notebook("s1", ""); err != nil || got.Name != "nb" {
		t.Fatalf("Notebook(s1) = %+v, %v", got, err)
	}
	_, err = e.Notebook("s1", "zzz")
	wantUserError(t, err, `no notebook named "zzz"`, "in use: nb")

	// A second notebook becomes current for s2 only; re-using the same
	// name and path is idempotent.
	f.use(t, "s2", "nb2", "b.ipynb", "create")
	if got, _ := e.Notebook("s1", ""); got.Name != "nb" {
		t.Fatalf("s1 current = %q, want nb", got.Name)
	}
	again, err := e.UseNotebook(ctx, UseRequest{Session: "s1", Name: "nb2", Path: f.path("b.ipynb"), Mode: "connect"})
	if err != nil || !again.Current {
		t.Fatalf("re-using nb2: %+v, %v", again, err)
	}
	list := e.ListNotebooks("s1")
	if len(list) != 2 || list[0].Name != "nb" || list[1].Name != "nb2" || list[0].Current || !list[1].Current {
		t.Fatalf("ListNotebooks = %+v", list)
	}

	// A new session starts on the notebook most recently activated (nb2,
	// by s1), then keeps its own.
	e.SessionOpened("s4", "late-client")
	if got, err := e.Notebook("s4", ""); err != nil || got.Name != "nb2" {
		t.Fatalf("a new session starts on %+v (%v), want nb2", got, err)
	}
	f.use(t, "s1", "nb", "a.ipynb", "connect")
	if got, _ := e.Notebook("s4", ""); got.Name != "nb2" {
		t.Fatalf("s4 followed s1 to %q", got.Name)
	}
	// A caller without a session keeps no pointer of its own: its current
	// notebook is the server's most recently activated, whoever moved it,
	// and its own use moves the server's.
	e.SessionlessOpened("@agent 1", "agent 1")
	if got, err := e.Notebook("@agent 1", ""); err != nil || got.Name != "nb" || !got.Current {
		t.Fatalf("a sessionless caller is on %+v (%v), want nb", got, err)
	}
	f.use(t, "@agent 1", "nb2", "b.ipynb", "connect")
	if got, _ := e.Notebook("s4", ""); got.Name != "nb2" {
		t.Fatalf("s4 is on %q", got.Name)
	}
	f.use(t, "s1", "nb", "a.ipynb", "connect")
	if got, _ := e.Notebook("@agent 1", ""); got.Name != "nb" {
		t.Fatalf("the sessionless caller did not follow s1: on %q", got.Name)
	}
	f.use(t, "s1", "nb2", "b.ipynb", "connect")
	if got, _ := e.Notebook("@agent 1", ""); got.Name != "nb2" {
		t.Fatalf("the sessionless caller did not follow s1: on %q", got.Name)
	}

	// Unuse clears it as current everywhere, names the other sessions
	// that had it, and leaves them a notice.
	u, err := e.UnuseNotebook(ctx, "s1", "nb2")
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Others) != 2 || u.Others[0].ID != "s2" || u.Others[1] != (SessionRef{ID: "s4", Client: "late-client"}) {
		t.Fatalf("Unused.Others = %+v, want [s2 s4]", u.Others)
	}
	// The server's pointer went with it: the sessionless caller has no
	// current notebook, and no notice (it had no pointer to lose).
	if _, err := e.Notebook("@agent 1", ""); err == nil || e.TakeNotices("@agent 1", "").Closed != nil {
		t.Fatalf("the sessionless caller after the unuse: %v", err)
	}
	e.SessionClosed("@agent 1")
	_, err = e.Notebook("s2", "")
	if n := wantErrorAs[*NoNotebookError](t, err); n.Closed == nil || n.Closed.Notebook != "nb2" || n.Closed.By.ID != "s1" || n.Closed.Cause != ClosedByUnuse {
		t.Fatalf("s2 after the unuse: %+v", n)
	}
	if n := e.TakeNotices("s2", "").Closed; n == nil || n.Notebook != "nb2" {
		t.Fatalf("TakeNotice(s2) = %+v", n)
	}
	if n := e.TakeNotices("s2", "").Closed; n != nil || e.TakeNotices("s1", "").Closed != nil {
		t.Fatalf("a notice is given once, and never to the session that unused: %+v", n)
	}
	_, err = e.UnuseNotebook(ctx, "s1", "nb2")
	wantUserError(t, err, `no notebook named "nb2"`)

	// Connect reads an existing notebook; without a kernel id it gets a
	// Jupyter session of its own, which a second use reuses.
	f.writeBehind(t, "c.ipynb", func() *notebook.Notebook {
		nb := notebook.New()
		nb.Cells = append(nb.Cells, nb.NewCell(notebook.Markdown, "# hi"))
		return nb
	}())
	c := f.useOwnKernel(t, "s3", "c", "c.ipynb", "connect")
	if c.Cells != 1 || c.KernelID == "" || c.KernelID == kid {
		t.Fatalf("connected notebook: %+v", c)
	}
	sessions, err := f.client.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range sessions {
		if s.Path == f.path("c.ipynb") && s.Kernel.ID == c.KernelID {
			found = true
		}
	}
	if !found {
		t.Fatalf("no Jupyter session binds %s to kernel %s: %+v", f.path("c.ipynb"), c.KernelID, sessions)
	}
	// The kernel use_notebook started is shut down with its notebook's
	// release (kernels.go); using the notebook again starts another.
	u, err = e.UnuseNotebook(ctx, "s3", "c")
	if err != nil {
		t.Fatal(err)
	}
	if !u.KernelShutDown || u.KernelID != c.KernelID {
		t.Fatalf("unuse of a notebook on a kernel the engine started: %+v, want kernel %s shut down", u, c.KernelID)
	}
	if _, err := f.client.GetKernel(ctx, c.KernelID); !jupyter.IsNotFound(err) {
		t.Fatalf("kernel %s after its release: %v, want not found", c.KernelID, err)
	}
	c2, err := e.UseNotebook(ctx, UseRequest{Session: "s3", Name: "c", Path: f.path("c.ipynb"), Mode: "connect"})
	if err != nil || c2.KernelID == "" || c2.KernelID == c.KernelID {
		t.Fatalf("re-connect got kernel %s (%v), want a fresh one", c2.KernelID, err)
	}
	if got := e.ListNotebooks("s3"); len(got) != 2 {
		t.Fatalf("ListNotebooks: %+v", got)
	}

	// SessionClosed forgets the session's pointer only.
	e.SessionClosed("s3")
	if _, err := e.Notebook("s3", ""); err == nil {
		t.Fatal("closed session still has a current notebook")
	}
	if _, err := e.Notebook("s3", "c"); err != nil {
		t.Fatalf("the notebook itself stays in use: %v", err)
	}
}

func testListKernels(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	info := f.use(t, "s", "nb", "k.ipynb", "create")
	ks, err := f.e.ListKernels(ctx)
	checkNoError(t, "list kernels", err)
	for _, k := range ks {
		if k.ID == info.KernelID {
			if k.Name != "python3" || k.DisplayName == "" || k.DisplayName == "python3" || len(k.Notebooks) != 1 || k.Notebooks[0] != "nb" {
				t.Fatalf("kernel: %+v", k)
			}
			return
		}
	}
	t.Fatalf("kernel %s not listed: %+v", info.KernelID, ks)
}

func testConnectJupyter(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "cj.ipynb", "create")
	own := f.useOwnKernel(t, "s2", "own", "cj-own.ipynb", "create")
	_, err := e.ConnectJupyter(ctx, "s", "http://127.0.0.1:1/", "")
	wantUserError(t, err, "nothing changed")
	_, err = e.ConnectJupyter(ctx, "s", f.srv.URL, "wrong-token")
	wantUserError(t, err, "nothing changed")
	if _, err := e.Notebook("s", ""); err != nil {
		t.Fatalf("a failed connect changed the notebooks: %v", err)
	}
	// The server in use, with its token: nothing changes.
	sw, err := e.ConnectJupyter(ctx, "s", f.srv.URL, f.srv.Token)
	checkNoError(t, "connect to the same server", err)
	if !sw.Same || len(sw.Closed) != 0 || !slices.Equal(sw.InUse, []string{"nb", "own"}) {
		t.Fatalf("same server: %+v", sw)
	}
	if got, err := e.Notebook("s2", ""); err != nil || got.Name != "own" {
		t.Fatalf("a connect to the same server changed another session's notebook: %+v, %v", got, err)
	}
	// Another URL (the same Jupyter under another name): a switch. The
	// kernel this engine started goes; the shared one it attached to stays.
	other := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)
	if other == f.srv.URL {
		t.Fatalf("test server URL %s is not on 127.0.0.1", f.srv.URL)
	}
	sw, err = e.ConnectJupyter(ctx, "s", other, f.srv.Token)
	checkNoError(t, "connect", err)
	if sw.Same || len(sw.Closed) != 2 {
		t.Fatalf("switch: %+v", sw)
	}
	for _, c := range sw.Closed {
		switch c.Name {
		case "nb":
			if !c.Caller || len(c.Others) != 0 || !c.Kernel.Attached || c.Kernel.ShutDown {
				t.Errorf("closed nb: %+v", c)
			}
		case "own":
			if c.Caller || len(c.Others) != 1 || c.Others[0].ID != "s2" || !c.Kernel.ShutDown || c.Kernel.Err != nil {
				t.Errorf("closed own: %+v", c)
			}
		}
	}
	if _, err := f.client.GetKernel(ctx, own.KernelID); !jupyter.IsNotFound(err) {
		t.Errorf("the kernel this engine started is still running after the switch: %v", err)
	}
	if _, err := f.client.GetKernel(ctx, f.shared.get(t, f.client)); err != nil {
		t.Errorf("the kernel the notebook was attached to is gone: %v", err)
	}
	if got := e.ListNotebooks("s"); len(got) != 0 {
		t.Fatalf("notebooks survive a server switch: %+v", got)
	}
	if n := e.TakeNotices("s2", "").Closed; n == nil || n.Cause != ClosedBySwitch || n.Notebook != "own" || n.By.ID != "s" {
		t.Fatalf("s2's notice: %+v", n)
	}
	if e.JupyterURL() != other {
		t.Fatalf("JupyterURL = %s", e.JupyterURL())
	}
	// The notebook can be used again on the new server.
	f.use(t, "s", "nb", "cj.ipynb", "connect")
}

func testEvents(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	sub := e.Bus().Subscribe(256)
	defer sub.Close()
	f.use(t, "s", "nb", "ev.ipynb", "create")
	_, c, err := e.InsertCell(ctx, "s", "", -1, "markdown", "hello")
	checkNoError(t, "insert", err)
	_, _, err = e.EditCellSource(ctx, "s", "", CellRef{ID: c.ID}, "hello", "bye", false)
	checkNoError(t, "edit", err)
	want := []event.NotebookOp{"open", event.OpInsert, event.OpEdit}
	var got []event.NotebookOp
	timeout := time.After(10 * time.Second)
	for len(got) < len(want) {
		select {
		case ev := <-sub.C():
			switch ev.Type {
			case event.EvNotebookOpened:
				got = append(got, "open")
			case event.EvNotebookChanged:
				got = append(got, ev.Notebook.Op)
				if ev.Notebook.Name != "nb" || ev.Notebook.Session != "s" || len(ev.Notebook.Cells) != 1 || ev.Notebook.Cells[0].ID != c.ID {
					t.Errorf("event: %+v", ev.Notebook)
				}
				if ev.Notebook.Op == event.OpEdit && ev.Notebook.Cells[0].Source != "bye" {
					t.Errorf("edit event source %q", ev.Notebook.Cells[0].Source)
				}
			}
		case <-timeout:
			t.Fatalf("events so far %v, want %v", got, want)
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
}

func testUpgradeIDs(t *testing.T, f *fixture) {
	// An nbformat 4.4 notebook has no cell ids: they are given on loading
	// and saved at once, so that they survive a reload.
	old := `{"nbformat": 4, "nbformat_minor": 4, "metadata": {"custom": {"keep": true}},
 "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# old"]},
           {"cell_type": "code", "metadata": {}, "execution_count": null, "outputs": [], "source": "1"}]}`
	if err := os.WriteFile(f.srv.Path(f.path("old.ipynb")), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	f.use(t, "s", "nb", "old.ipynb", "connect")
	_, cells, err := f.e.ReadNotebook(ctxT(t), "s", "", 0, 0)
	checkNoError(t, "read", err)
	disk := f.disk(t, "old.ipynb")
	if disk.NBFormatMinor != 5 || len(disk.Cells) != 2 {
		t.Fatalf("on disk: minor %d, %d cells", disk.NBFormatMinor, len(disk.Cells))
	}
	for i, c := range cells {
		if c.ID == "" || disk.Cells[i].ID != c.ID {
			t.Fatalf("cell %d: id %q in memory, %q on disk", i, c.ID, disk.Cells[i].ID)
		}
	}
	if !strings.Contains(string(f.file(t, "old.ipynb")), `"keep": true`) {
		t.Fatal("notebook metadata was not kept")
	}
}
