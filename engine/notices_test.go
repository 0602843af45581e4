package engine

import (
	"fmt"
	"strings"
	"testing"
)

// A session that never looks at a notebook again keeps at most maxNotices
// notices about it, and is told how many older ones were dropped.
func TestNotebookNoticesAreBounded(t *testing.T) {
	e := &Engine{sessions: map[string]*sessionState{}, docs: map[string]*document{"n": {name: "n", path: "dir/n.ipynb"}}, current: map[string]string{}}
	e.sessionLocked("s")
	for i := range maxNotices + 3 {
		e.Notify("", "dir/n.ipynb", fmt.Sprintf("notice %d", i))
	}
	e.Notify("other", "dir/n.ipynb", "for another session")
	got := e.TakeNotices("s", "n").Lines
	if len(got) != maxNotices+1 || !strings.Contains(got[0], "3 earlier notices") || got[1] != "notice 3" || got[maxNotices] != fmt.Sprintf("notice %d", maxNotices+2) {
		t.Fatalf("notices: %q", got)
	}
	if again := e.TakeNotices("s", "n").Lines; again != nil {
		t.Fatalf("taken twice: %q", again)
	}
	if got := e.TakeNotices("other", "n").Lines; len(got) != 1 || got[0] != "for another session" {
		t.Fatalf("other session: %q", got)
	}
	if got := e.TakeNotices("s", "missing").Lines; got != nil {
		t.Fatalf("unknown notebook: %q", got)
	}
}
