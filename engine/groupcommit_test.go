package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/nbfile"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// saveCounter passes every request to the real Jupyter server, counting
// the saves (PUT) of one notebook and answering the next failSaves of them
// with a 503, as a Jupyter server that cannot write would.
type saveCounter struct {
	path      string // escaped URL path suffix: /api/contents/dir/x.ipynb
	saves     atomic.Int32
	failSaves atomic.Int32
}

func (sc *saveCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.HasSuffix(r.URL.EscapedPath(), sc.path) {
		sc.saves.Add(1)
		if sc.failSaves.Load() > 0 {
			sc.failSaves.Add(-1)
			if r.Body != nil {
				r.Body.Close()
			}
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable",
				Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
				Body: http.NoBody}, nil
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// pollUntil polls cond until it holds (30 s at most: a loaded machine is
// slow, and nothing here is timed).
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for %s", what)
		}
	}
}

// testGroupCommit: mutations waiting on one notebook are saved by one save;
// a failed save fails every call of its group and leaves the model as it is
// on disk, with no event for the workbench; a change that fails on its own
// fails alone while the rest of its group is saved; SerialSaves saves each
// on its own.
func testGroupCommit(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "group.ipynb", "create")
	_, a, err := e.InsertCell(ctx, "s", "nb", -1, "code", "a")
	checkNoError(t, "insert", err)
	_, _, err = e.InsertCell(ctx, "s", "nb", -1, "code", "b")
	checkNoError(t, "insert", err)
	d, err := e.lookup("s", "nb")
	checkNoError(t, "lookup", err)
	sc := &saveCounter{path: "/api/contents/" + f.path("group.ipynb")}
	client, err := jupyter.NewClient(f.srv.URL, f.srv.Token, jupyter.Options{HTTPClient: &http.Client{Transport: sc}})
	checkNoError(t, "client", err)
	d.file = nbfile.New(client, d.path, d.name, nil, nbfile.LockTimes{})
	sub := e.Bus().SubscribeTo(256, event.EvNotebookChanged)
	defer sub.Close()

	// group runs the calls at once while the notebook's writer is held, so
	// that they all queue, and returns their errors once they answered.
	group := func(calls ...func() error) []error {
		t.Helper()
		d.writeMu.Lock()
		errs := make([]error, len(calls))
		var wg sync.WaitGroup
		for i, call := range calls {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = call() }()
		}
		pollUntil(t, "the calls to queue", func() bool {
			d.queue.mu.Lock()
			defer d.queue.mu.Unlock()
			return len(d.queue.pending) == len(calls)
		})
		d.writeMu.Unlock()
		wg.Wait()
		return errs
	}
	insert := func(src string) func() error {
		return func() error { _, _, err := e.InsertCell(ctx, "s", "nb", -1, "code", src); return err }
	}
	modelIsDisk := func(want ...string) {
		t.Helper()
		if got := sources(f.disk(t, "group.ipynb")); !equalStrings(got, want) {
			t.Fatalf("on disk %q, want %q", got, want)
		}
		mem, err := d.model().Marshal()
		checkNoError(t, "marshal", err)
		if string(mem) != string(f.file(t, "group.ipynb")) {
			t.Fatal("the model in memory differs from the file on disk")
		}
		_, cells, err := e.ReadNotebook(ctx, "s", "nb", 0, 0)
		checkNoError(t, "read", err)
		if len(cells) != len(want) {
			t.Fatalf("read_notebook shows %d cells, want %d", len(cells), len(want))
		}
	}

	// A failed save fails the whole group; nothing of it stays in memory.
	sc.failSaves.Store(1)
	before := sc.saves.Load()
	errs := group(insert("f1"), insert("f2"), insert("f3"), insert("f4"), insert("f5"), insert("f6"))
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("call %d of a group whose save failed: %v, want the save's error", i, err)
		}
	}
	if n := sc.saves.Load() - before; n != 1 {
		t.Errorf("%d saves for a group of 6, want 1", n)
	}
	modelIsDisk("a", "b")

	// A group where two changes fail on their own: the others are saved,
	// by one save.
	before = sc.saves.Load()
	errs = group(insert("g1"), insert("g2"),
		func() error { _, _, err := e.InsertCell(ctx, "s", "nb", 99, "code", "bad index"); return err },
		insert("g3"),
		func() error {
			_, _, err := e.EditCellSource(ctx, "s", "nb", CellRef{ID: a.ID}, "not there", "x", false)
			return err
		},
		insert("g4"))
	for i, err := range errs {
		switch i {
		case 2:
			wantErrorAs[*CellIndexError](t, err)
		case 4:
			wantErrorAs[*EditError](t, err)
		default:
			checkNoError(t, fmt.Sprintf("insert %d", i), err)
		}
	}
	if n := sc.saves.Load() - before; n != 1 {
		t.Errorf("%d saves for a group of 6, want 1", n)
	}
	got := sources(f.disk(t, "group.ipynb"))
	if g := strings.Join(got, ","); len(got) != 6 || !strings.HasPrefix(g, "a,b,") ||
		!strings.Contains(g, "g1") || !strings.Contains(g, "g2") || !strings.Contains(g, "g3") || !strings.Contains(g, "g4") {
		t.Fatalf("on disk %q, want a, b and g1-g4", got)
	}
	modelIsDisk(got...)

	// The workbench heard of the four saved inserts and of nothing else.
	var inserted []string
	pollUntil(t, "the insert events", func() bool {
		for {
			select {
			case ev := <-sub.C():
				if ev.Notebook.Op != event.OpInsert {
					t.Errorf("event %s", ev.Notebook.Op)
				}
				for _, c := range ev.Notebook.Cells {
					inserted = append(inserted, c.Source)
				}
			default:
				return len(inserted) >= 4
			}
		}
	})
	if strings.Join(inserted, ",") != strings.Join(got[2:], ",") {
		t.Errorf("insert events for %q, want %q (the saved ones, in order)", inserted, got[2:])
	}

	// Without group commit every call saves on its own.
	e.cfg.SerialSaves = true
	before = sc.saves.Load()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); checkNoError(t, "serial insert", insert(fmt.Sprintf("s%d", i))()) }()
	}
	wg.Wait()
	if n := sc.saves.Load() - before; n != 4 {
		t.Errorf("%d saves for 4 inserts with SerialSaves, want 4", n)
	}
}

// TestGroupCommitKeepsAcknowledgedAcrossKill: eight sessions insert into
// one notebook at once and the Jupyter server is killed with SIGKILL in the
// middle of it. Every insert that was answered is in the file, which is a
// valid notebook: read straight from disk, or (when the kill caught
// Jupyter writing it) once a Jupyter server started again on the same root
// has restored its copy from before the write, as Jupyter does.
func TestGroupCommitKeepsAcknowledgedAcrossKill(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Start(t)
	ctx := ctxT(t)
	e, err := New(ctx, Config{JupyterURL: srv.URL, JupyterToken: srv.Token, Logger: testLogger(t)})
	checkNoError(t, "New", err)
	t.Cleanup(func() { e.Close() })
	for i := range 8 {
		// The first session creates the notebook; the others join it.
		if _, err := e.UseNotebook(ctx, UseRequest{Session: fmt.Sprintf("s%d", i), Name: "burst", Path: "burst.ipynb", Mode: "create"}); err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
	}

	var (
		mu    sync.Mutex
		acked = map[string]bool{}
		order = map[int][]string{}
		total atomic.Int32
		wg    sync.WaitGroup
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprintf("s%d", w)
			for i := 0; ; i++ {
				// Big enough that Jupyter takes a moment to write the file.
				src := fmt.Sprintf("w%d-%d\n%s", w, i, strings.Repeat("x = 1\n", 2000))
				if _, _, err := e.InsertCell(ctx, session, "", -1, "code", src); err != nil {
					return // the server is gone
				}
				key, _, _ := strings.Cut(src, "\n")
				mu.Lock()
				acked[key] = true
				order[w] = append(order[w], key)
				mu.Unlock()
				total.Add(1)
			}
		}()
	}
	pollUntil(t, "16 acknowledged inserts", func() bool { return total.Load() >= 16 })
	// At a random moment of the burst: between saves, while a group is
	// applied, while Jupyter writes the file, or after it wrote it and
	// before the answer came back.
	// (A group of eight such cells takes a few hundred ms here.)
	time.Sleep(time.Duration(rand.IntN(1000)) * time.Millisecond)
	p, err := os.FindProcess(srv.Managed.PID())
	if err == nil {
		err = p.Kill() // SIGKILL
	}
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	t.Logf("%d inserts acknowledged before the kill", total.Load())

	file := filepath.Join(srv.RootDir, "burst.ipynb")
	data, err := os.ReadFile(file)
	checkNoError(t, "reading the file", err)
	if _, perr := notebook.Parse(data); perr != nil || !json.Valid(data) {
		// Killed in the middle of its write: Jupyter keeps the file as it
		// was before the write next to it and restores it on reading.
		t.Logf("the kill caught Jupyter writing the file (%v); reading it through a new Jupyter server", perr)
		m, err := jupyter.StartManaged(ctx, jupyter.ManagedOptions{RootDir: srv.RootDir})
		checkNoError(t, "starting Jupyter again", err)
		defer m.Stop()
		c, err := jupyter.NewClient(m.URL, m.Token, jupyter.Options{})
		checkNoError(t, "client", err)
		if _, err := c.Get(ctx, "burst.ipynb", true); err != nil {
			t.Fatalf("the new Jupyter server cannot read the notebook: %v", err)
		}
		if data, err = os.ReadFile(file); err != nil {
			t.Fatal(err)
		}
	}
	nb, err := notebook.Parse(data)
	if err != nil {
		t.Fatalf("the file after the kill is not a notebook: %v", err)
	}
	validateNBFormat(t, file)
	onDisk := map[string]int{}
	for i, c := range nb.Cells {
		key, _, _ := strings.Cut(c.Source, "\n")
		onDisk[key] = i
	}
	for src := range acked {
		if _, ok := onDisk[src]; !ok {
			t.Errorf("acknowledged insert %q is not in the file", src)
		}
	}
	for w, srcs := range order {
		for k := 1; k < len(srcs); k++ {
			if onDisk[srcs[k-1]] > onDisk[srcs[k]] {
				t.Errorf("worker %d: %q after %q in the file", w, srcs[k-1], srcs[k])
			}
		}
	}
	t.Logf("%d cells in the file, %d acknowledged", len(nb.Cells), len(acked))
	if len(nb.Cells) < 16 {
		t.Errorf("only %d cells in the file: the burst did not run", len(nb.Cells))
	}
}

// validateNBFormat checks a notebook file with nbformat itself, which the
// Jupyter install carries.
func validateNBFormat(t *testing.T, file string) {
	t.Helper()
	py, err := jupyter.FindPython("")
	if err != nil {
		t.Fatalf("finding Python: %v", err)
	}
	out, err := exec.CommandContext(context.Background(), py.Path, "-c",
		"import sys, nbformat; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))", file).CombinedOutput()
	if err != nil {
		t.Fatalf("nbformat rejects the file: %v\n%s", err, out)
	}
}

// heldSave passes every request to the real Jupyter server but holds back
// the answer to a save of one notebook until release is closed: Jupyter has
// written the file, we do not know its new last_modified yet.
type heldSave struct {
	path    string
	written chan struct{} // closed once Jupyter answered the save
	release chan struct{}
}

func (h *heldSave) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if r.Method == http.MethodPut && strings.HasSuffix(r.URL.EscapedPath(), h.path) {
		close(h.written)
		<-h.release
	}
	return resp, err
}

// testReadsDuringSave: a read while a save of ours is under way (the file
// already changed on disk, its answer not back) neither waits for the save
// nor shows the change before it is acknowledged.
func testReadsDuringSave(t *testing.T, f *fixture) {
	ctx := ctxT(t)
	e := f.e
	f.use(t, "s", "nb", "reads.ipynb", "create")
	_, _, err := e.InsertCell(ctx, "s", "nb", -1, "code", "a")
	checkNoError(t, "insert", err)
	d, err := e.lookup("s", "nb")
	checkNoError(t, "lookup", err)
	h := &heldSave{path: "/api/contents/" + f.path("reads.ipynb"), written: make(chan struct{}), release: make(chan struct{})}
	client, err := jupyter.NewClient(f.srv.URL, f.srv.Token, jupyter.Options{HTTPClient: &http.Client{Transport: h}})
	checkNoError(t, "client", err)
	d.file = nbfile.New(client, d.path, d.name, nil, nbfile.LockTimes{})

	inserted := make(chan error, 1)
	go func() { _, _, err := e.InsertCell(ctx, "s", "nb", -1, "code", "b"); inserted <- err }()
	<-h.written
	// The next read checks the file anew (its last check is forgotten).
	d.check.mu.Lock()
	d.check.last = nil
	d.check.mu.Unlock()
	type answer struct {
		cells []CellInfo
		err   error
	}
	read := make(chan answer, 1)
	go func() {
		_, cells, err := e.ReadNotebook(ctx, "s", "nb", 0, 0)
		read <- answer{cells, err}
	}()
	select {
	case a := <-read:
		checkNoError(t, "read during the save", a.err)
		if cells := a.cells; len(cells) != 1 || cells[0].Source != "a" {
			t.Errorf("a read during the save shows %d cells, want only the saved one", len(cells))
		}
	case <-time.After(30 * time.Second):
		t.Error("a read waited for a save in progress")
	}
	close(h.release)
	checkNoError(t, "insert", <-inserted)
	_, cells, err := e.ReadNotebook(ctx, "s", "nb", 0, 0)
	checkNoError(t, "read after the save", err)
	if len(cells) != 2 || cells[1].Source != "b" {
		t.Errorf("after the save: %d cells, want a and b", len(cells))
	}
}
