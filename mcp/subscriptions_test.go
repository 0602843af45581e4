package mcp

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// watchingHarness is newHarness with notebooks in use checked every 100 ms
// for changes made elsewhere.
func watchingHarness(t *testing.T) *harness {
	t.Helper()
	srv := jupytertest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := engine.New(ctx, engine.Config{JupyterURL: srv.URL, JupyterToken: srv.Token, MaxOutputBytes: 2000,
		WatchInterval: 100 * time.Millisecond, Logger: testLog(t)})
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	h := &harness{t: t, srv: srv, e: e, dir: srv.Subdir(t)}
	h.s = New(e, Options{Version: "test", Images: true, Logger: testLog(t)})
	t.Cleanup(func() { e.Close() })
	return h
}

// writeOutside rewrites a notebook file on disk, as an editor or git
// checkout would, after changing its JSON with edit.
func (h *harness) writeOutside(rel string, edit func(nb map[string]any)) {
	h.t.Helper()
	var nb map[string]any
	if err := json.Unmarshal(h.file(rel), &nb); err != nil {
		h.t.Fatal(err)
	}
	edit(nb)
	data, err := json.MarshalIndent(nb, "", " ")
	if err != nil {
		h.t.Fatal(err)
	}
	// The file's mtime must move past the one saved last.
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(h.srv.Path(rel), data, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// An edit made on disk is found by the watcher and the agent's next
// result on the notebook says which cells changed, in its text and in
// _meta; our own saves are never reported.
func TestOutsideEditNoticeInNextResult(t *testing.T) {
	t.Parallel()
	h := watchingHarness(t)
	cs := h.connect()
	rel := h.writeNotebook("outside.ipynb", "a = 1", "b = 2")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "outside", "notebook_path": rel})
	// Our own changes, with the watcher running: none is an outside edit.
	for _, src := range []string{"c = 3", "d = 4"} {
		_, _, res := ok(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": src})
		if strings.Contains(textOf(res), "changed outside") {
			t.Fatalf("our own insert was reported as an outside edit: %s", textOf(res))
		}
	}
	sub := h.e.Bus().SubscribeTo(16, event.EvNotebookOutsideEdit)
	defer sub.Close()
	h.writeOutside(rel, func(nb map[string]any) {
		cells := nb["cells"].([]any)
		cells[1].(map[string]any)["source"] = "b = 'from the editor'"
		nb["cells"] = cells[1:] // cell-0 removed
	})
	select {
	case ev := <-sub.C():
		if ev.Notebook == nil || len(ev.Notebook.ChangedCells) != 2 {
			t.Fatalf("outside edit event %+v", ev.Notebook)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the watcher did not report the outside edit within 60 s")
	}
	_, _, res := ok(t, cs, "read_cell", map[string]any{"cell_id": "cell-1"})
	text := textOf(res)
	want := "Note: notebook 'outside' (" + rel + ") was changed outside this server at "
	if !strings.Contains(text, want) || !strings.Contains(text, "cell 0 (cell-1) edited, cell 0 (cell-0) removed") {
		t.Fatalf("read_cell after an outside edit: %q lacks %q", text, want)
	}
	if notes, _ := res.Meta[metaNotices].([]any); len(notes) != 1 || !strings.Contains(notes[0].(string), "(cell-0) removed") {
		t.Errorf("_meta notices = %v", res.Meta[metaNotices])
	}
	// Told once.
	if _, _, res := ok(t, cs, "read_cell", map[string]any{"cell_id": "cell-1"}); strings.Contains(textOf(res), "changed outside") {
		t.Errorf("the notice came twice: %s", textOf(res))
	}
}

// updates collects the URIs of resources/updated notifications.
type updates chan string

func (u updates) options() *sdk.ClientOptions {
	return &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
		u <- req.Params.URI
	}}
}

// next waits for the next notification about uri, returning the others
// that came first.
func (u updates) next(t *testing.T, uri string) []string {
	t.Helper()
	var before []string
	deadline := time.After(60 * time.Second)
	for {
		select {
		case got := <-u:
			if got == uri {
				return before
			}
			before = append(before, got)
		case <-deadline:
			t.Fatalf("no resources/updated for %s within 60 s (got %q)", uri, before)
			return nil
		}
	}
}

func TestResourceSubscriptions(t *testing.T) {
	t.Parallel()
	h := watchingHarness(t)
	u := make(updates, 64)
	cs := h.connectWith(u.options())
	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("resources.subscribe is not advertised: %+v", caps.Resources)
	}
	rel := h.writeNotebook("subs.ipynb", "a = 1", "b = 2")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "subs", "notebook_path": rel})
	ctx := context.Background()
	const nbURI, cellA, cellB = "notebook://subs", "notebook://subs/cells/cell-0", "notebook://subs/cells/cell-1"
	for _, uri := range []string{nbURI, cellA, cellB} {
		if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://watched-resource"}); err == nil || !strings.Contains(err.Error(), `cannot subscribe to "test://watched-resource"`) {
		t.Errorf("subscribing to a resource this server does not serve: %v", err)
	}

	// An agent's edits of cell a: the notebook and cell a, not cell b. A
	// wrong update of b would come in the first edit's burst, so before
	// the second edit's update of a.
	var before []string
	for _, src := range []string{"a = 10", "a = 11"} {
		ok(t, cs, "overwrite_cell_source", map[string]any{"cell_id": "cell-0", "cell_source": src})
		before = append(before, u.next(t, cellA)...)
	}
	if strings.Contains(strings.Join(before, " "), cellB) || !strings.Contains(strings.Join(before, " "), nbURI) {
		t.Errorf("updates with cell a's: %q, want the notebook's and not cell b's", before)
	}
	// An edit made on disk, found by the watcher: everything of the
	// notebook.
	h.writeOutside(rel, func(nb map[string]any) {
		nb["cells"].([]any)[1].(map[string]any)["source"] = "b = 20"
	})
	// It tells both cells, in either order; cell a's must be in before the
	// unsubscribe, or it would be taken for an update after it.
	if before := u.next(t, cellB); !slices.Contains(before, cellA) {
		u.next(t, cellA)
	}
	// Unsubscribed: the notebook's updates keep coming, the cell's stop.
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: cellA}); err != nil {
		t.Fatal(err)
	}
	for len(u) > 0 {
		<-u
	}
	ok(t, cs, "overwrite_cell_source", map[string]any{"cell_id": "cell-0", "cell_source": "a = 12"})
	ok(t, cs, "insert_cell", map[string]any{"cell_index": 0, "cell_type": "markdown", "cell_source": "# top"})
	// The insert moves every cell: cell b hears of it; a, unsubscribed,
	// hears of neither change.
	if before := u.next(t, cellB); strings.Contains(strings.Join(before, " "), cellA) {
		t.Errorf("an unsubscribed cell was told: %q", before)
	}
}

// subscribed reports what the server keeps: the URIs subscribed with their
// number of sessions, and whether it follows the engine's events.
func (s *Server) subscribed() (map[string]int, bool) {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	uris := map[string]int{}
	for u, su := range s.subs.uris {
		uris[u] = len(su.sessions)
	}
	return uris, s.subs.sub != nil
}

// A session that ends takes its subscriptions with it; the last one gone
// stops following the engine. Nothing is kept for sessions that left.
func TestSubscriptionsEndWithTheSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	a, b := h.connect(), h.connect()
	for _, uri := range []string{"notebook://x", "notebook://x/cells/c1"} {
		if err := a.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Subscribe(ctx, &sdk.SubscribeParams{URI: "notebook://x"}); err != nil {
		t.Fatal(err)
	}
	if uris, following := h.s.subscribed(); uris["notebook://x"] != 2 || uris["notebook://x/cells/c1"] != 1 || !following {
		t.Fatalf("subscribed %v, following %v", uris, following)
	}
	// Ending a session is told to the server asynchronously: wait for it.
	waitSubscribed := func(want map[string]int, wantFollowing bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			uris, following := h.s.subscribed()
			if reflect.DeepEqual(uris, want) && following == wantFollowing {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("subscribed %v, following %v; want %v, %v", uris, following, want, wantFollowing)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	a.Close()
	waitSubscribed(map[string]int{"notebook://x": 1}, true)
	b.Close()
	waitSubscribed(map[string]int{}, false)
}
