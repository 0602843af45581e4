package nbfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
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
// hands over untouched, and parsed here.

// A text that is not whole JSON is most likely a save under way, and is
// read again until it parses. It is a file at rest, for the server to
// judge, once the file's modification time is old by the server's own
// clock: a save changes that time as it writes, but not while the file is
// empty (from the moment the save opens the file until nbformat has checked
// and serialised the notebook, seconds for a big one). A file that stays
// broken is given up after notebookSettle.
const (
	notebookSettle    = 5 * time.Second
	brokenAtRest      = 2 * time.Second
	emptyAtRest       = time.Minute
	notebookMaxReread = 100 * time.Millisecond
)

// UnsettledError reports that a notebook's file was empty or not whole JSON at
// every read for notebookSettle, and changed too recently to be taken as a
// broken file at rest: most likely something is saving it.
type UnsettledError struct {
	Path   string
	Empty  bool
	Waited time.Duration
}

func (e *UnsettledError) Error() string {
	what := "half-written"
	if e.Empty {
		what = "empty"
	}
	return fmt.Sprintf("the file %q was %s at every read for %s, and it was changed moments ago: most likely something is saving it right now. Nothing was changed; try again in a moment (a file that stays %s is not a notebook: fix or delete it)",
		e.Path, what, e.Waited.Round(100*time.Millisecond), what)
}

func (*UnsettledError) CallerCanFix() bool { return true }

// Read reads the notebook at p. On success nb is the parsed
// notebook and m.Content the file's text. What the text read cannot settle
// goes to the server's notebook read, whose model (m.Content the server's
// JSON, nb nil) or error stands, as before: a path that is not .ipynb, a
// file the text read refuses (400: not UTF-8, a directory), valid JSON that
// is not nbformat 4 (the server converts older formats), a broken file at
// rest (the server names it, or recovers it from its backup).
func Read(ctx context.Context, client *jupyter.Client, p string) (*jupyter.Model, *notebook.Notebook, error) {
	if !strings.HasSuffix(strings.ToLower(p), ".ipynb") {
		return readByServer(ctx, client, p)
	}
	start := time.Now()
	delay := 10 * time.Millisecond
	for {
		m, err := client.GetText(ctx, p)
		if err != nil {
			var ae *jupyter.APIError
			if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
				return readByServer(ctx, client, p)
			}
			return nil, nil, err
		}
		if nb, perr := notebook.Parse(m.Content); perr == nil {
			m.Type = "notebook"
			return m, nb, nil
		}
		if json.Valid(m.Content) {
			return readByServer(ctx, client, p)
		}
		rest := brokenAtRest
		if len(m.Content) == 0 {
			rest = emptyAtRest
		}
		if !m.Served.IsZero() && m.Served.Sub(m.LastModified) >= rest {
			return readByServer(ctx, client, p)
		}
		if waited := time.Since(start); waited >= notebookSettle {
			return nil, nil, &UnsettledError{Path: p, Empty: len(m.Content) == 0, Waited: waited}
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		delay = min(2*delay, notebookMaxReread)
	}
}

// readByServer is the server's own notebook read.
func readByServer(ctx context.Context, client *jupyter.Client, p string) (*jupyter.Model, *notebook.Notebook, error) {
	m, err := client.Get(ctx, p, true)
	return m, nil, err
}
