package engine

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// The integration tests share one real Jupyter server: they are subtests of
// TestJupyter (rather than using a TestMain, which the engine package's
// other test files may want), so the server stops once they all finish.
// Each subtest works in its own directory; tests that do not kill or
// restart their kernel share one kernel to keep the suite fast.

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
	info, err := f.e.UseNotebook(ctxT(t), session, name, f.path(file), mode, f.shared.get(t, f.client))
	if err != nil {
		t.Fatalf("UseNotebook(%s, %s): %v", name, file, err)
	}
	return info
}

// useOwnKernel opens a notebook on a kernel of its own, shut down when the
// test ends.
func (f *fixture) useOwnKernel(t *testing.T, session, name, file, mode string) NotebookInfo {
	t.Helper()
	info, err := f.e.UseNotebook(ctxT(t), session, name, f.path(file), mode, "")
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
	srv := jupytertest.Start(t)
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
	run("ConcurrentInserts", testConcurrentInserts)
	run("ListFiles", testListFiles)
	run("ListKernels", testListKernels)
	run("ConnectJupyter", testConnectJupyter)
	run("Events", testEvents)
	run("ExecuteOutputs", testExecuteOutputs)
	run("ExecuteImage", testExecuteImage)
	run("ExecuteTimeout", testExecuteTimeout)
	run("ExecuteCancel", testExecuteCancel)
	run("ExecuteInput", testExecuteInput)
	run("ExecuteBigOutput", testExecuteBigOutput)
	run("ExecuteCode", testExecuteCode)
	run("KernelDeath", testKernelDeath)
	run("KernelAutoRestart", testKernelAutoRestart, Capability{Name: CapKernelAutoRestart, Enabled: true, Source: "flag"})
	run("RestartNotebook", testRestartNotebook)
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
	_, err := e.UseNotebook(ctx, "s1", "other", f.path("exists.ipynb"), "create", kid)
	wantUserError(t, err, "already exists", "connect")
	_, err = e.UseNotebook(ctx, "s1", "missing", f.path("nope.ipynb"), "connect", kid)
	wantUserError(t, err, "no file", "create")
	_, err = e.UseNotebook(ctx, "s1", "x", f.path("x.ipynb"), "open", kid)
	wantUserError(t, err, `mode "open"`)
	_, err = e.UseNotebook(ctx, "s1", "x", f.path("x.ipynb"), "create", "no-such-kernel")
	wantUserError(t, err, "no kernel with id")
	if _, err := os.Stat(f.srv.Path(f.path("x.ipynb"))); !os.IsNotExist(err) {
		t.Errorf("a failed create left the file behind: %v", err)
	}
	// The name and the path are each bound once.
	_, err = e.UseNotebook(ctx, "s1", "nb", f.path("b.ipynb"), "create", kid)
	wantUserError(t, err, "already in use")
	_, err = e.UseNotebook(ctx, "s1", "nb2", f.path("a.ipynb"), "connect", kid)
	wantUserError(t, err, `as notebook "nb"`)
	if !bytes.Equal(before, f.file(t, "a.ipynb")) {
		t.Fatal("failed use_notebook calls changed the file")
	}

	// Current notebook is per session.
	if _, err := e.Notebook("s2", ""); err == nil {
		t.Fatal("session s2 has no current notebook, want an error")
	} else {
		wantUserError(t, err, "notebook_name is required", "use_notebook", "in use: nb")
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
	again, err := e.UseNotebook(ctx, "s1", "nb2", f.path("b.ipynb"), "connect", "")
	if err != nil || !again.Current {
		t.Fatalf("re-using nb2: %+v, %v", again, err)
	}
	list := e.ListNotebooks("s1")
	if len(list) != 2 || list[0].Name != "nb" || list[1].Name != "nb2" || list[0].Current || !list[1].Current {
		t.Fatalf("ListNotebooks = %+v", list)
	}

	// Unuse clears it as current everywhere.
	if err := e.UnuseNotebook(ctx, "s1", "nb2"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Notebook("s2", ""); err == nil {
		t.Fatal("s2 still has a current notebook after unuse")
	}
	wantUserError(t, e.UnuseNotebook(ctx, "s1", "nb2"), `no notebook named "nb2"`)

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
	if err := e.UnuseNotebook(ctx, "s3", "c"); err != nil {
		t.Fatal(err)
	}
	c2, err := e.UseNotebook(ctx, "s3", "c", f.path("c.ipynb"), "connect", "")
	if err != nil || c2.KernelID != c.KernelID {
		t.Fatalf("re-connect got kernel %s (%v), want the session's %s", c2.KernelID, err, c.KernelID)
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

// checkNoError fails on err.
func checkNoError(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func testCellOps(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "ops.ipynb", "create")

	_, c0, err := e.InsertCell(ctx, "s", "", -1, "code", "x = 1\ny = 2\n")
	checkNoError(t, "insert", err)
	_, c1, err := e.InsertCell(ctx, "s", "", 0, "markdown", "# Title")
	checkNoError(t, "insert", err)
	_, c2, err := e.InsertCell(ctx, "s", "nb", 2, "raw", "raw text")
	checkNoError(t, "insert", err)
	if c0.Index != 0 || c1.Index != 0 || c2.Index != 2 || c0.ID == "" || c0.ID == c1.ID {
		t.Fatalf("inserted cells: %+v %+v %+v", c0, c1, c2)
	}
	if got := sources(f.disk(t, "ops.ipynb")); !equalStrings(got, []string{"# Title", "x = 1\ny = 2\n", "raw text"}) {
		t.Fatalf("on disk after inserts: %q", got)
	}

	info, cells, err := e.ReadNotebook(ctx, "s", "", 1, 1)
	checkNoError(t, "read notebook", err)
	if info.Cells != 3 || len(cells) != 1 || cells[0].ID != c0.ID || cells[0].Index != 1 {
		t.Fatalf("ReadNotebook(1,1) = %+v %+v", info, cells)
	}
	_, all, err := e.ReadNotebook(ctx, "s", "", 0, 0)
	checkNoError(t, "read notebook", err)
	if len(all) != 3 {
		t.Fatalf("ReadNotebook(0,0) returned %d cells", len(all))
	}
	_, byID, err := e.ReadCell(ctx, "s", "", CellRef{ID: c0.ID, Index: ptr(0)})
	checkNoError(t, "read cell", err)
	if byID.Index != 1 || byID.Source != "x = 1\ny = 2\n" || byID.Type != "code" {
		t.Fatalf("ReadCell by id (id wins over index) = %+v", byID)
	}

	// Edit: a literal, single replacement, with a diff.
	_, sc, err := e.EditCellSource(ctx, "s", "", CellRef{ID: c0.ID}, "y = 2", "y = 3", false)
	checkNoError(t, "edit", err)
	if sc.Cell.Source != "x = 1\ny = 3\n" || sc.OldSource != "x = 1\ny = 2\n" || sc.Replacements != 1 ||
		!strings.Contains(sc.Diff, "-y = 2") || !strings.Contains(sc.Diff, "+y = 3") || !strings.Contains(sc.Diff, "a/cell[1]") {
		t.Fatalf("edit change: %+v", sc)
	}
	_, sc, err = e.EditCellSource(ctx, "s", "", CellRef{Index: ptr(1)}, " = ", "=", true)
	checkNoError(t, "edit all", err)
	if sc.Cell.Source != "x=1\ny=3\n" || sc.Replacements != 2 {
		t.Fatalf("replace_all change: %+v", sc)
	}
	_, sc, err = e.OverwriteCellSource(ctx, "s", "", CellRef{Index: ptr(0)}, "# New title")
	checkNoError(t, "overwrite", err)
	if sc.OldSource != "# Title" || !strings.Contains(sc.Diff, "+# New title") {
		t.Fatalf("overwrite change: %+v", sc)
	}

	// Move [T, X, R] -> move T to 2 -> [X, R, T]; then R to where X is.
	_, mc, from, err := e.MoveCell(ctx, "s", "", CellRef{Index: ptr(0)}, CellRef{Index: ptr(2)})
	checkNoError(t, "move", err)
	if from != 0 || mc.Index != 2 || mc.ID != c1.ID {
		t.Fatalf("move: from %d, %+v", from, mc)
	}
	_, mc, from, err = e.MoveCell(ctx, "s", "", CellRef{ID: c2.ID}, CellRef{ID: c0.ID})
	checkNoError(t, "move by id", err)
	if from != 1 || mc.Index != 0 {
		t.Fatalf("move by id: from %d, %+v", from, mc)
	}
	if got := sources(f.disk(t, "ops.ipynb")); !equalStrings(got, []string{"raw text", "x=1\ny=3\n", "# New title"}) {
		t.Fatalf("on disk after moves: %q", got)
	}

	// Clear output of a code cell that has outputs (written from outside
	// the engine's execute path: set them on disk and reload).
	nb := f.disk(t, "ops.ipynb")
	n := 7
	nb.Cells[1].ExecutionCount = &n
	nb.Cells[1].Outputs = []notebook.Output{{OutputType: notebook.Stream, Name: "stdout", Text: "hi\n"}}
	f.writeBehind(t, "ops.ipynb", nb)
	_, cleared, err := e.ClearCellOutput(ctx, "s", "", CellRef{ID: c0.ID})
	checkNoError(t, "clear output", err)
	if len(cleared.Outputs) != 0 || cleared.ExecutionCount != nil {
		t.Fatalf("cleared cell: %+v", cleared)
	}
	if c := f.disk(t, "ops.ipynb").Cells[1]; len(c.Outputs) != 0 || c.ExecutionCount != nil {
		t.Fatalf("cleared cell on disk: %+v", c)
	}

	// Delete by ids returns the cells in the order given.
	_, deleted, err := e.DeleteCells(ctx, "s", "", nil, []string{c1.ID, c2.ID})
	checkNoError(t, "delete", err)
	if len(deleted) != 2 || deleted[0].ID != c1.ID || deleted[0].Index != 2 || deleted[1].ID != c2.ID || deleted[1].Index != 0 {
		t.Fatalf("deleted: %+v", deleted)
	}
	if got := sources(f.disk(t, "ops.ipynb")); !equalStrings(got, []string{"x=1\ny=3\n"}) {
		t.Fatalf("on disk after delete: %q", got)
	}
	_, deleted, err = e.DeleteCells(ctx, "s", "", []int{0}, nil)
	checkNoError(t, "delete by index", err)
	if len(deleted) != 1 || deleted[0].ID != c0.ID {
		t.Fatalf("deleted: %+v", deleted)
	}
	if got := f.disk(t, "ops.ipynb"); len(got.Cells) != 0 {
		t.Fatalf("cells left: %d", len(got.Cells))
	}

	// The resource accessors.
	_, c3, err := e.InsertCell(ctx, "s", "", -1, "code", "print(1)")
	checkNoError(t, "insert", err)
	js, err := e.NotebookJSON(ctx, "nb")
	checkNoError(t, "notebook json", err)
	if parsed, err := notebook.Parse(js); err != nil || len(parsed.Cells) != 1 || parsed.Cells[0].ID != c3.ID {
		t.Fatalf("NotebookJSON: %v", err)
	}
	_, err = e.CellOutput(ctx, "nb", c3.ID, 0)
	wantUserError(t, err, "no outputs")
	_, err = e.CellOutput(ctx, "nb", "nope", 0)
	wantUserError(t, err, `no cell with id "nope"`)
}

func testBadInputs(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "bad.ipynb", "create")
	var ids []string
	for _, src := range []string{"a = 1", "# md", "b = a + a\nb"} {
		typ := "code"
		if strings.HasPrefix(src, "#") {
			typ = "markdown"
		}
		_, c, err := e.InsertCell(ctx, "s", "", -1, typ, src)
		checkNoError(t, "insert", err)
		ids = append(ids, c.ID)
	}
	before := f.file(t, "bad.ipynb")

	cases := []struct {
		name string
		call func() error
		want []string
	}{
		{"read index out of range", func() error {
			_, _, err := e.ReadCell(ctx, "s", "", CellRef{Index: ptr(12)})
			return err
		}, []string{"cell index 12 is out of range", "3 cells", "0-2"}},
		{"read negative index", func() error {
			_, _, err := e.ReadCell(ctx, "s", "", CellRef{Index: ptr(-1)})
			return err
		}, []string{"out of range"}},
		{"read no ref", func() error {
			_, _, err := e.ReadCell(ctx, "s", "", CellRef{})
			return err
		}, []string{"cell_index", "cell_id"}},
		{"read unknown id", func() error {
			_, _, err := e.ReadCell(ctx, "s", "", CellRef{ID: "abc", Index: ptr(0)})
			return err
		}, []string{`no cell with id "abc"`}},
		{"unknown notebook", func() error {
			_, _, err := e.ReadCell(ctx, "s", "x", CellRef{Index: ptr(0)})
			return err
		}, []string{`no notebook named "x"`, "in use: nb"}},
		{"no current notebook", func() error {
			_, _, err := e.InsertCell(ctx, "other", "", -1, "code", "1")
			return err
		}, []string{"this session has no current notebook"}},
		{"read notebook past end", func() error {
			_, _, err := e.ReadNotebook(ctx, "s", "", 5, 0)
			return err
		}, []string{"start_index 5"}},
		{"insert out of range", func() error {
			_, _, err := e.InsertCell(ctx, "s", "", 4, "code", "1")
			return err
		}, []string{"cell index 4 is out of range", "valid 0-3"}},
		{"insert below -1", func() error {
			_, _, err := e.InsertCell(ctx, "s", "", -2, "code", "1")
			return err
		}, []string{"out of range"}},
		{"insert invalid type", func() error {
			_, _, err := e.InsertCell(ctx, "s", "", -1, "python", "1")
			return err
		}, []string{`cell_type "python"`, "markdown"}},
		{"overwrite unknown id", func() error {
			_, _, err := e.OverwriteCellSource(ctx, "s", "", CellRef{ID: "zz"}, "x")
			return err
		}, []string{`no cell with id "zz"`}},
		{"edit ambiguous", func() error {
			_, _, err := e.EditCellSource(ctx, "s", "", CellRef{ID: ids[2]}, "a", "c", false)
			return err
		}, []string{"occurs 2 times", "replace_all"}},
		{"edit not found", func() error {
			_, _, err := e.EditCellSource(ctx, "s", "", CellRef{Index: ptr(0)}, "zzz", "c", false)
			return err
		}, []string{"not found", "a = 1"}},
		{"edit empty old", func() error {
			_, _, err := e.EditCellSource(ctx, "s", "", CellRef{Index: ptr(0)}, "", "c", false)
			return err
		}, []string{"old_string is empty"}},
		{"edit index out of range", func() error {
			_, _, err := e.EditCellSource(ctx, "s", "", CellRef{Index: ptr(3)}, "a", "c", false)
			return err
		}, []string{"cell index 3 is out of range"}},
		{"delete one bad id among good", func() error {
			_, _, err := e.DeleteCells(ctx, "s", "", nil, []string{ids[0], "nope"})
			return err
		}, []string{`"nope"`, "nothing was deleted"}},
		{"delete duplicate ids", func() error {
			_, _, err := e.DeleteCells(ctx, "s", "", nil, []string{ids[0], ids[0]})
			return err
		}, []string{"twice"}},
		{"delete bad index among good", func() error {
			_, _, err := e.DeleteCells(ctx, "s", "", []int{0, 9}, nil)
			return err
		}, []string{"cell index 9", "nothing was deleted"}},
		{"delete duplicate indices", func() error {
			_, _, err := e.DeleteCells(ctx, "s", "", []int{1, 1}, nil)
			return err
		}, []string{"twice"}},
		{"delete nothing named", func() error {
			_, _, err := e.DeleteCells(ctx, "s", "", nil, nil)
			return err
		}, []string{"cell_indices"}},
		{"move source out of range", func() error {
			_, _, _, err := e.MoveCell(ctx, "s", "", CellRef{Index: ptr(3)}, CellRef{Index: ptr(0)})
			return err
		}, []string{"cell index 3"}},
		{"move target out of range", func() error {
			_, _, _, err := e.MoveCell(ctx, "s", "", CellRef{Index: ptr(0)}, CellRef{Index: ptr(3)})
			return err
		}, []string{"cell index 3"}},
		{"move no target", func() error {
			_, _, _, err := e.MoveCell(ctx, "s", "", CellRef{Index: ptr(0)}, CellRef{})
			return err
		}, []string{"target_index", "target_cell_id"}},
		{"clear markdown", func() error {
			_, _, err := e.ClearCellOutput(ctx, "s", "", CellRef{ID: ids[1]})
			return err
		}, []string{"markdown cell"}},
		{"execute markdown", func() error {
			_, err := e.ExecuteCell(ctx, "s", "", CellRef{Index: ptr(1)}, ExecOptions{})
			return err
		}, []string{"markdown cell", "only code cells"}},
		{"execute out of range", func() error {
			_, err := e.ExecuteCell(ctx, "s", "", CellRef{Index: ptr(7)}, ExecOptions{})
			return err
		}, []string{"cell index 7"}},
		{"insert-execute out of range", func() error {
			_, err := e.InsertExecuteCell(ctx, "s", "", 9, "1", ExecOptions{})
			return err
		}, []string{"cell index 9"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantUserError(t, tc.call(), tc.want...)
			if !bytes.Equal(before, f.file(t, "bad.ipynb")) {
				t.Fatal("the notebook file changed")
			}
		})
	}
}

func testExternalEdit(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "ext.ipynb", "create")
	_, a, err := e.InsertCell(ctx, "s", "", -1, "code", "a = 1")
	checkNoError(t, "insert", err)
	_, b, err := e.InsertCell(ctx, "s", "", -1, "code", "b = 2")
	checkNoError(t, "insert", err)

	// Someone else inserts a cell at the top and edits cell b.
	nb := f.disk(t, "ext.ipynb")
	nb.Cells = append([]*notebook.Cell{nb.NewCell(notebook.Markdown, "# added outside")}, nb.Cells...)
	nb.Cells[2].Source = "b = 20"
	f.writeBehind(t, "ext.ipynb", nb)
	external := f.file(t, "ext.ipynb")

	// By index: refused, nothing written.
	_, _, err = e.OverwriteCellSource(ctx, "s", "", CellRef{Index: ptr(0)}, "clobber")
	wantUserError(t, err, "changed on disk", "read_notebook")
	if !bytes.Equal(external, f.file(t, "ext.ipynb")) {
		t.Fatal("an index-addressed edit against a changed notebook wrote the file")
	}
	// The refusal reloaded the notebook: reads now show the outside edit.
	if _, c, _ := e.ReadCell(ctx, "s", "", CellRef{Index: ptr(0)}); c.Source != "# added outside" {
		t.Fatalf("after reload, cell 0 = %q", c.Source)
	}

	// Another outside write, then an edit by id: both changes survive.
	nb = f.disk(t, "ext.ipynb")
	nb.Cells = append(nb.Cells, nb.NewCell(notebook.Code, "c = 3"))
	f.writeBehind(t, "ext.ipynb", nb)
	_, sc, err := e.EditCellSource(ctx, "s", "", CellRef{ID: a.ID}, "a = 1", "a = 10", false)
	checkNoError(t, "edit by id", err)
	if sc.Cell.Index != 1 {
		t.Fatalf("edited cell is at %d, want 1", sc.Cell.Index)
	}
	got := sources(f.disk(t, "ext.ipynb"))
	if want := []string{"# added outside", "a = 10", "b = 20", "c = 3"}; !equalStrings(got, want) {
		t.Fatalf("on disk: %q, want %q", got, want)
	}
	_ = b
}

func testConcurrentInserts(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "conc.ipynb", "create")
	const workers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				src := "w" + string(rune('0'+w)) + "-" + string(rune('0'+i))
				if _, _, err := e.InsertCell(ctx, "s", "nb", -1, "code", src); err != nil {
					errs <- err
				}
				// Readers run alongside the writers.
				if _, _, err := e.ReadNotebook(ctx, "s", "nb", 0, 0); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	nb := f.disk(t, "conc.ipynb")
	if len(nb.Cells) != workers*each {
		t.Fatalf("%d cells on disk, want %d", len(nb.Cells), workers*each)
	}
	seen := map[string]bool{}
	last := map[byte]int{}
	for _, c := range nb.Cells {
		seen[c.Source] = true
		// Each worker's cells appear in its own order.
		w, i := c.Source[1], int(c.Source[3]-'0')
		if prev, ok := last[w]; ok && prev > i {
			t.Errorf("worker %c: cell %d after %d", w, i, prev)
		}
		last[w] = i
	}
	if len(seen) != workers*each {
		t.Fatalf("%d distinct cells, want %d", len(seen), workers*each)
	}
	info, _ := e.Notebook("s", "nb")
	if info.Cells != workers*each {
		t.Fatalf("in memory: %d cells", info.Cells)
	}
}

func testListFiles(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	for _, p := range []string{"top.txt", "nb.ipynb", "sub/mid.csv", "sub/deep/low.csv", "sub/deep/deeper/bottom.ipynb"} {
		abs := f.srv.Path(f.path(p))
		if err := os.MkdirAll(abs[:strings.LastIndex(abs, "/")], 0o755); err != nil {
			t.Fatal(err)
		}
		content := "x"
		if strings.HasSuffix(p, ".ipynb") {
			data, _ := notebook.New().Marshal()
			content = string(data)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths := func(es []FileEntry) []string {
		out := make([]string, len(es))
		for i, x := range es {
			out[i] = strings.TrimPrefix(x.Path, f.dir+"/")
		}
		return out
	}
	cases := []struct {
		depth   int
		pattern string
		want    []string
	}{
		{0, "", []string{"nb.ipynb", "sub", "top.txt"}},
		{1, "", []string{"nb.ipynb", "sub", "sub/deep", "sub/mid.csv", "top.txt"}},
		{3, "", []string{"nb.ipynb", "sub", "sub/deep", "sub/deep/deeper", "sub/deep/deeper/bottom.ipynb", "sub/deep/low.csv", "sub/mid.csv", "top.txt"}},
		{3, "*.ipynb", []string{"nb.ipynb", "sub/deep/deeper/bottom.ipynb"}},
		{3, f.dir + "/sub/**/*.csv", []string{"sub/deep/low.csv", "sub/mid.csv"}},
		{1, "*.csv", []string{"sub/mid.csv"}},
	}
	for _, tc := range cases {
		got, err := e.ListFiles(ctx, f.dir, tc.depth, tc.pattern)
		checkNoError(t, "list files", err)
		if !equalStrings(paths(got), tc.want) {
			t.Errorf("ListFiles(depth %d, %q) = %q, want %q", tc.depth, tc.pattern, paths(got), tc.want)
		}
	}
	got, err := e.ListFiles(ctx, f.path("top.txt"), 1, "")
	checkNoError(t, "list a file", err)
	if len(got) != 1 || got[0].Type != "file" || got[0].Size == nil || *got[0].Size != 1 {
		t.Fatalf("ListFiles(file) = %+v", got)
	}
	if got[0].LastModified.IsZero() {
		t.Error("no last_modified")
	}
	_, err = e.ListFiles(ctx, f.path("nope"), 1, "")
	wantUserError(t, err, `"`+f.path("nope")+`"`)
	_, err = e.ListFiles(ctx, f.dir, 4, "")
	wantUserError(t, err, "max_depth 4")
	_, err = e.ListFiles(ctx, f.dir, 1, "[")
	wantUserError(t, err, "not a valid glob")
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
	err := e.ConnectJupyter(ctx, "http://127.0.0.1:1/", "")
	wantUserError(t, err, "nothing changed")
	err = e.ConnectJupyter(ctx, f.srv.URL, "wrong-token")
	wantUserError(t, err, "nothing changed")
	if _, err := e.Notebook("s", ""); err != nil {
		t.Fatalf("a failed connect changed the notebooks: %v", err)
	}
	checkNoError(t, "connect", e.ConnectJupyter(ctx, f.srv.URL, f.srv.Token))
	if got := e.ListNotebooks("s"); len(got) != 0 {
		t.Fatalf("notebooks survive a server switch: %+v", got)
	}
	if e.JupyterURL() != f.srv.URL {
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
	want := []NotebookOp{"open", OpInsert, OpEdit}
	var got []NotebookOp
	timeout := time.After(10 * time.Second)
	for len(got) < len(want) {
		select {
		case ev := <-sub.C():
			switch ev.Type {
			case EvNotebookOpened:
				got = append(got, "open")
			case EvNotebookChanged:
				got = append(got, ev.Notebook.Op)
				if ev.Notebook.Name != "nb" || ev.Notebook.Session != "s" || len(ev.Notebook.Cells) != 1 || ev.Notebook.Cells[0].ID != c.ID {
					t.Errorf("event: %+v", ev.Notebook)
				}
				if ev.Notebook.Op == OpEdit && ev.Notebook.Cells[0].Source != "bye" {
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
