package mcp

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A notebook notice reaches each session once, on its next result on that
// notebook (in the text and in _meta), and never on a result on another
// notebook; one queued for a single session reaches that session alone.
func TestNotebookNoticesReachTheNextResultOnThatNotebook(t *testing.T) {
	h := newHarness(t)
	connect := httpSessions(t, h)
	a, b := connect("agent-a"), connect("agent-b")
	pa := h.writeNotebook("a.ipynb", "x = 1")
	pb := h.writeNotebook("b.ipynb", "y = 2")
	ok(t, a, "use_notebook", map[string]any{"notebook_name": "na", "notebook_path": pa})
	ok(t, b, "use_notebook", map[string]any{"notebook_name": "nb", "notebook_path": pb})
	info, err := h.e.Notebook("", "na")
	if err != nil {
		t.Fatal(err)
	}

	h.e.Notify("", info.Path, "cells 1 and 2 were edited outside at 14:31:23")
	h.e.Notify(a.ID(), info.Path, "a person reverted your insert_cell of 14:31:20 (cell 7cb73ed2 removed)")

	noticesOf := func(args map[string]any, cs *sdk.ClientSession) []string {
		t.Helper()
		_, _, res := ok(t, cs, "read_cell", args)
		var got []string
		if v, has := res.Meta[metaNotices]; has {
			for _, l := range v.([]any) {
				got = append(got, l.(string))
			}
		}
		text := textOf(res)
		for _, l := range got {
			if !strings.Contains(text, "Note: "+l) {
				t.Errorf("the text does not carry the notice %q:\n%s", l, text)
			}
		}
		return got
	}

	// b's result on its own notebook carries nothing.
	if got := noticesOf(map[string]any{"cell_index": 0, "notebook_name": "nb"}, b); len(got) != 0 {
		t.Errorf("a result on another notebook carried %q", got)
	}
	// a gets both, oldest first, once.
	got := noticesOf(map[string]any{"cell_index": 0, "notebook_name": "na"}, a)
	if len(got) != 2 || !strings.Contains(got[0], "edited outside") || !strings.Contains(got[1], "reverted your insert_cell") {
		t.Errorf("a's notices: %q", got)
	}
	if got := noticesOf(map[string]any{"cell_index": 0, "notebook_name": "na"}, a); len(got) != 0 {
		t.Errorf("a was told twice: %q", got)
	}
	// b gets the outside edit only.
	got = noticesOf(map[string]any{"cell_index": 0, "notebook_name": "na"}, b)
	if len(got) != 1 || !strings.Contains(got[0], "edited outside") {
		t.Errorf("b's notices: %q", got)
	}
}
