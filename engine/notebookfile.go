package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Reading a notebook's file.
//
// The server's own notebook read (type=notebook) is not safe beside a save:
// on jupyter_server's asynchronous contents manager both run at once, a read
// that meets the file half-written takes it for corrupt, moves it aside and
// puts the save's backup in its place, and the save (already answered as a
// success) is lost or fails. Another process of ours saving the notebook,
// or JupyterLab, is that save. So the file is read as text, which the server
// hands over untouched, and parsed here; a text that is not whole JSON is
// most likely a save under way (the file is empty from the moment the save
// opens it until nbformat has serialised the notebook), and is read again.

// A text that is not whole JSON is read again until it parses, for up to
// notebookSettle; the same broken (non-empty) text for notebookAtRest is a
// file at rest (truncated by a crash, or never a notebook), for the server
// to judge.
const (
	notebookSettle = 5 * time.Second
	notebookAtRest = 300 * time.Millisecond
)

// NotebookUnsettledError: a notebook's file was half-written at every read
// for notebookSettle: someone keeps saving it.
type NotebookUnsettledError struct {
	Path   string
	Waited time.Duration
}

func (e *NotebookUnsettledError) Error() string {
	return fmt.Sprintf("the file %q was being rewritten at every read for %s (someone else keeps saving it); nothing was changed, try again", e.Path, e.Waited.Round(100*time.Millisecond))
}

func (*NotebookUnsettledError) CallerCanFix() bool { return true }

// readNotebookFile reads the notebook at p. On success nb is the parsed
// notebook and m.Content the file's text. When the text read cannot settle
// it (a file that is not UTF-8, valid JSON but not nbformat 4, broken at
// rest, not a file at all), the server's notebook read answers instead: its
// model (m.Content the server's JSON, nb nil) or its error stands, as it
// did before, so that older formats are converted and broken files are
// named by Jupyter.
func readNotebookFile(ctx context.Context, client *jupyter.Client, p string) (*jupyter.Model, *notebook.Notebook, error) {
	start := time.Now()
	var (
		last      []byte
		lastSince time.Time
		delay     = 10 * time.Millisecond
	)
	for {
		m, err := client.GetText(ctx, p)
		if err != nil {
			break
		}
		if nb, perr := notebook.Parse(m.Content); perr == nil {
			m.Type = "notebook"
			return m, nb, nil
		}
		if json.Valid(m.Content) {
			break
		}
		waited := time.Since(start)
		switch {
		case len(m.Content) == 0:
			// A save empties the file first and fills it once the
			// server has checked and serialised the notebook, which
			// takes a second or more for a big one. Empty for the
			// whole of notebookSettle is a file left empty (a server
			// killed in a save), which the server's read recovers
			// from the save's backup.
			if waited >= notebookSettle {
				return readByServer(ctx, client, p)
			}
		case last == nil || !bytes.Equal(m.Content, last):
			last, lastSince = m.Content, time.Now()
		case time.Since(lastSince) >= notebookAtRest:
			return readByServer(ctx, client, p)
		}
		if waited >= notebookSettle {
			return nil, nil, &NotebookUnsettledError{Path: p, Waited: waited}
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
	return readByServer(ctx, client, p)
}

// readByServer is the server's own notebook read.
func readByServer(ctx context.Context, client *jupyter.Client, p string) (*jupyter.Model, *notebook.Notebook, error) {
	m, err := client.Get(ctx, p, true)
	return m, nil, err
}
