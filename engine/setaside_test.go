package engine

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// heardHandler passes records on, and tells on want when one's message
// holds a given text.
type heardHandler struct {
	slog.Handler
	text string
	want chan struct{}
}

func (h *heardHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.text) {
		select {
		case h.want <- struct{}{}:
		default:
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h *heardHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &heardHandler{Handler: h.Handler.WithAttrs(as), text: h.text, want: h.want}
}

func (h *heardHandler) WithGroup(name string) slog.Handler {
	return &heardHandler{Handler: h.Handler.WithGroup(name), text: h.text, want: h.want}
}

// TestNotebookSetAsideAfterItsSave: a read on the asynchronous contents
// manager that met our save half-written can finish moving the file aside
// (to NAME.invalid) a moment after the save was answered as kept, and put
// nothing back (see nbfile.SaveKept). The state is made here on disk, by
// the same move. The next change saves the notebook again from memory,
// with every change acknowledged; so does the watcher, with no call at
// all; the copy the server set aside goes. A file a person removes (even
// with an old NAME.invalid of ours beside it) is not made again, by a
// change or by the watcher.
func TestNotebookSetAsideAfterItsSave(t *testing.T) {
	t.Parallel()
	srv := jupytertest.SharedWith(t, jupytertest.WithArgs(asyncContents))
	f := newFixture(t, srv, &sharedKernel{})
	heard := &heardHandler{Handler: testLogger(t).Handler(), text: "checking a notebook in use for changes made elsewhere", want: make(chan struct{}, 1)}
	ctx := ctxT(t)
	e, err := New(ctx, Config{JupyterURL: srv.URL, JupyterToken: srv.Token, WatchInterval: 50 * time.Millisecond, Logger: slog.New(heard)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	f.e = e
	nb := notebook.New()
	nb.Cells = append(nb.Cells, nb.NewCell("code", "# first"))
	data, err := nb.Marshal()
	checkNoError(t, "marshal", err)
	if _, err := f.client.SaveNotebook(ctx, f.path("busy.ipynb"), data); err != nil {
		t.Fatal(err)
	}
	f.use(t, "s", "nb", "busy.ipynb", "connect")
	disk := srv.Path(f.path("busy.ipynb"))
	invalid := disk + ".invalid"
	insert := func(src string) error {
		_, _, err := f.e.InsertCell(ctx, "s", "", -1, "code", src)
		return err
	}
	var acked []string
	holdsAcked := func() error {
		b, err := os.ReadFile(disk)
		if err != nil {
			return err
		}
		nb, err := notebook.Parse(b)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, c := range nb.Cells {
			have[c.Source] = true
		}
		for _, src := range acked {
			if !have[src] {
				return errors.New(src + " was answered as saved but is not in the file")
			}
		}
		if _, err := os.Stat(invalid); err == nil {
			return errors.New("the copy the server set aside is still beside the notebook")
		}
		return nil
	}
	for _, src := range []string{"# a", "# b"} {
		checkNoError(t, "insert "+src, insert(src))
		acked = append(acked, src)
	}

	// The next change makes the save again.
	checkNoError(t, "the race", os.Rename(disk, invalid))
	checkNoError(t, "insert after the file was set aside", insert("# c"))
	acked = append(acked, "# c")
	checkNoError(t, "the file after the insert", holdsAcked())

	// So does the watcher, unasked.
	checkNoError(t, "the race", os.Rename(disk, invalid))
	for deadline := time.Now().Add(30 * time.Second); holdsAcked() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the watcher did not save the notebook again: %v", holdsAcked())
		}
	}

	// Removed by a person, with an old copy of ours set aside beside it:
	// refused, and left removed.
	b, err := os.ReadFile(disk)
	checkNoError(t, "reading the file", err)
	checkNoError(t, "an old copy set aside", os.WriteFile(invalid, b, 0o644))
	old := time.Now().Add(-time.Hour)
	checkNoError(t, "its time", os.Chtimes(invalid, old, old))
	select {
	case <-heard.want:
	default:
	}
	checkNoError(t, "removing the file", os.Remove(disk))
	var gone *NotebookFileGoneError
	if err := insert("# d"); !errors.As(err, &gone) {
		t.Errorf("insert into a removed notebook: %v, want NotebookFileGoneError", err)
	}
	select {
	case <-heard.want:
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not report the file gone")
	}
	if _, err := os.Stat(disk); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file a person removed was made again: %v", err)
	}
}
