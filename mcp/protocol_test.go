package mcp

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// completion/complete, notebooks in resources/list and list_changed, over
// go-sdk clients pinned to 2025-11-25 and a real Jupyter.

func complete(t *testing.T, cs *sdk.ClientSession, ref *sdk.CompleteReference, arg, typed string, known map[string]string) sdk.CompletionResultDetails {
	t.Helper()
	p := &sdk.CompleteParams{Ref: ref, Argument: sdk.CompleteParamsArgument{Name: arg, Value: typed}}
	if known != nil {
		p.Context = &sdk.CompleteContext{Arguments: known}
	}
	res, err := cs.Complete(context.Background(), p)
	if err != nil {
		t.Fatalf("complete %s %q (%v): %v", arg, typed, known, err)
	}
	return res.Completion
}

func wantCompletion(t *testing.T, what string, got sdk.CompletionResultDetails, values []string, total int, more bool) {
	t.Helper()
	if !reflect.DeepEqual(got.Values, values) || got.Total != total || got.HasMore != more {
		t.Errorf("%s: got values %q total %d hasMore %v, want %q total %d hasMore %v", what, got.Values, got.Total, got.HasMore, values, total, more)
	}
}

func TestCompletions(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	if caps := cs.InitializeResult().Capabilities; caps.Completions == nil {
		t.Fatalf("completions capability not advertised: %+v", caps)
	}
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("x = %d", i)
	}
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "beta", "notebook_path": h.writeNotebook("beta.ipynb", many...)})
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "alpha", "notebook_path": h.writeNotebook("alpha.ipynb",
		"x = 1", "from IPython.display import display\ndisplay(1)\ndisplay(2)\nprint('three')")})
	ok(t, cs, "execute_cell", map[string]any{"cell_index": 1})
	_, cells, err := h.e.ReadNotebook(context.Background(), "", "alpha", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{cells[0].ID, cells[1].ID}
	if n := len(cells[1].Outputs); n != 3 {
		t.Fatalf("the cell has %d outputs, want 3", n)
	}

	nbRef := &sdk.CompleteReference{Type: "ref/resource", URI: "notebook://{name}"}
	cellRef := &sdk.CompleteReference{Type: "ref/resource", URI: "notebook://{name}/cells/{cell_id}"}
	outRef := &sdk.CompleteReference{Type: "ref/resource", URI: "notebook://{name}/cells/{cell_id}/outputs/{index}"}
	cite := &sdk.CompleteReference{Type: "ref/prompt", Name: "jupyter_cite"}

	wantCompletion(t, "name, nothing typed", complete(t, cs, nbRef, "name", "", nil), []string{"alpha", "beta"}, 2, false)
	wantCompletion(t, "name 'al'", complete(t, cs, nbRef, "name", "al", nil), []string{"alpha"}, 1, false)
	wantCompletion(t, "name 'BE' (case ignored)", complete(t, cs, cellRef, "name", "BE", nil), []string{"beta"}, 1, false)
	wantCompletion(t, "name 'zz'", complete(t, cs, outRef, "name", "zz", nil), []string{}, 0, false)

	wantCompletion(t, "cell_id of alpha", complete(t, cs, cellRef, "cell_id", "", map[string]string{"name": "alpha"}), ids, 2, false)
	wantCompletion(t, "cell_id of alpha, typed", complete(t, cs, outRef, "cell_id", ids[1], map[string]string{"name": "alpha"}), ids[1:], 1, false)
	wantCompletion(t, "cell_id without a name", complete(t, cs, cellRef, "cell_id", "", nil), []string{}, 0, false)
	wantCompletion(t, "cell_id of a notebook not in use", complete(t, cs, cellRef, "cell_id", "", map[string]string{"name": "nope"}), []string{}, 0, false)

	wantCompletion(t, "output index", complete(t, cs, outRef, "index", "", map[string]string{"name": "alpha", "cell_id": ids[1]}), []string{"0", "1", "2"}, 3, false)
	wantCompletion(t, "output index of a cell without outputs", complete(t, cs, outRef, "index", "", map[string]string{"name": "alpha", "cell_id": ids[0]}), []string{}, 0, false)
	wantCompletion(t, "output index of an unknown cell", complete(t, cs, outRef, "index", "", map[string]string{"name": "alpha", "cell_id": "nope"}), []string{}, 0, false)

	wantCompletion(t, "notebook_name", complete(t, cs, cite, "notebook_name", "b", nil), []string{"beta"}, 1, false)
	wantCompletion(t, "cell_indices of the current notebook", complete(t, cs, cite, "cell_indices", "0-", nil), []string{"0-0", "0-1"}, 2, false)
	// 150 cells: at most 100 values, the true total, and hasMore.
	all := complete(t, cs, cite, "cell_indices", "", map[string]string{"notebook_name": "beta"})
	if len(all.Values) != 100 || all.Values[0] != "0" || all.Values[99] != "99" || all.Total != 150 || !all.HasMore {
		t.Errorf("cell_indices of 150 cells: %d values (%q...), total %d, hasMore %v", len(all.Values), all.Values[:min(3, len(all.Values))], all.Total, all.HasMore)
	}
	ones := complete(t, cs, cite, "cell_indices", "3, 1", map[string]string{"notebook_name": "beta"})
	if len(ones.Values) != 61 || ones.Values[0] != "3, 1" || ones.Values[60] != "3, 149" || ones.Total != 61 || ones.HasMore {
		t.Errorf("cell_indices '3, 1' of 150 cells: %d values, total %d, hasMore %v", len(ones.Values), ones.Total, ones.HasMore)
	}
	wantCompletion(t, "prompt (free text)", complete(t, cs, cite, "prompt", "expl", nil), []string{}, 0, false)

	// What does not exist is an invalid-params error naming what does.
	for _, c := range []struct {
		ref  *sdk.CompleteReference
		arg  string
		want string
	}{
		{&sdk.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, "arg1", "jupyter_cite"},
		{cite, "notebook_path", "prompt, cell_indices, notebook_name"},
		{&sdk.CompleteReference{Type: "ref/resource", URI: "test://template/{id}/data"}, "id", "notebook://{name}"},
		{&sdk.CompleteReference{Type: "ref/resource", URI: "capabilities://"}, "name", "notebook://{name}"},
		{nbRef, "cell_id", "no variable"},
	} {
		_, err := cs.Complete(context.Background(), &sdk.CompleteParams{Ref: c.ref, Argument: sdk.CompleteParamsArgument{Name: c.arg}})
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, c.want) {
			t.Errorf("complete %+v %s: err = %v, want invalid params naming %q", c.ref, c.arg, err, c.want)
		}
	}
}

// listed reports whether resources/list has the notebook, and checks its
// entry.
func listed(t *testing.T, cs *sdk.ClientSession, name string) bool {
	t.Helper()
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Resources {
		if r.URI == "notebook://"+name {
			if r.Name != name || r.MIMEType != ipynbMIME || !strings.HasSuffix(r.Title, name+".ipynb") {
				t.Errorf("resource %+v", r)
			}
			return true
		}
	}
	return false
}

// awaitListChanged waits for a list_changed notification, then for
// resources/list to show want (a notification may stand for several
// changes, or come from an earlier one).
func awaitListChanged(t *testing.T, cs *sdk.ClientSession, changed <-chan struct{}, name string, want bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no notifications/resources/list_changed with notebook %s listed=%v", name, want)
		}
		if listed(t, cs, name) == want {
			return
		}
	}
}

func TestNotebookResourcesListed(t *testing.T) {
	h := newHarness(t)
	var changes [2]chan struct{}
	var clients [2]*sdk.ClientSession
	for i := range clients {
		ch := make(chan struct{}, 16)
		changes[i] = ch
		clients[i] = h.connectWith(&sdk.ClientOptions{
			ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { ch <- struct{}{} },
		})
	}
	cs := clients[0]
	if listed(t, cs, "gamma") {
		t.Fatal("notebook listed before use")
	}
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "gamma", "notebook_path": h.writeNotebook("gamma.ipynb", "1 + 1")})
	// Every session is told, and sees the notebook.
	for i, c := range clients {
		awaitListChanged(t, c, changes[i], "gamma", true)
	}
	res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "notebook://gamma"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, `"1 + 1"`) {
		t.Fatalf("reading the listed notebook: %v %+v", err, res)
	}
	// capabilities:// stays listed.
	all, err := cs.ListResources(context.Background(), nil)
	if err != nil || !slices.ContainsFunc(all.Resources, func(r *sdk.Resource) bool { return r.URI == capabilitiesURI }) {
		t.Errorf("resources/list = %v %v", all, err)
	}

	ok(t, cs, "unuse_notebook", map[string]any{"notebook_name": "gamma"})
	for i, c := range clients {
		awaitListChanged(t, c, changes[i], "gamma", false)
	}
}

// A session that opens while notebooks are in use lists them at once, even
// when no session was open to follow their use.
func TestNotebookResourcesListedForALateSession(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if _, err := h.e.UseNotebook(ctx, engine.UseRequest{Session: "engine-only", Name: "delta", Path: h.writeNotebook("delta.ipynb", "2")}); err != nil {
		t.Fatal(err)
	}
	cs := h.connect()
	if !listed(t, cs, "delta") {
		t.Error("a notebook in use before the session opened is not listed")
	}
}

func TestNotebookResourceURI(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"plain", "with space", "a:b", "user@host", "a/b", "100%"} {
		uri := notebookResourceURI(name)
		n, err := parseNotebookURI(uri)
		if err != nil || n.name != name || n.cellID != "" {
			t.Errorf("%q: URI %q parses as %+v, %v", name, uri, n, err)
		}
	}
}
