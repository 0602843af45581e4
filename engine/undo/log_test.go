package undo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// The log keeps the last MaxRecords changes of each notebook, and at
// most MaxBytes in all, dropping the oldest first, across notebooks.
func TestUndoLogBounds(t *testing.T) {
	t.Parallel()
	l := NewLog[*doc]()
	d1, d2 := &doc{name: "one"}, &doc{name: "two"}
	change := func(d *doc, call string, src string) *Record[*doc] {
		before := []*notebook.Cell{{ID: "a", Type: notebook.Markdown, Source: "x"}}
		after := []*notebook.Cell{before[0], {ID: "b", Type: notebook.Markdown, Source: src}}
		r := NewRecord(Call{ID: call, Tool: "insert_cell", Session: "s"}, d, before, after, nil)
		if r == nil {
			t.Fatal("no record for an insert")
		}
		return r
	}
	for i := range MaxRecords + 50 {
		l.Add(change(d1, fmt.Sprint("c", i), "small"))
	}
	rs := l.Records(d1)
	if len(rs) != MaxRecords || rs[0].call.ID != "c50" || rs[len(rs)-1].call.ID != fmt.Sprint("c", MaxRecords+49) {
		t.Fatalf("kept %d records, from %s", len(rs), rs[0].call.ID)
	}
	if d, _ := l.Find("c49"); d != nil || l.Has("c49") || !l.Has("c50") {
		t.Fatal("a dropped record is still found, or a kept one is not")
	}

	// Large sources count: 1 MiB each, so about 32 fit, and the oldest go
	// first whichever notebook they belong to.
	big := strings.Repeat("x", 1<<20)
	l.Add(change(d2, "big-0", big))
	for i := 1; i < 40; i++ {
		l.Add(change(d1, fmt.Sprint("big-", i), big))
	}
	if l.bytes > MaxBytes {
		t.Fatalf("%d bytes kept, over %d", l.bytes, MaxBytes)
	}
	if d, _ := l.Find("big-0"); d != nil {
		t.Fatal("the oldest large record (of another notebook) is still kept")
	}
	if d, _ := l.Find("big-39"); d != d1 {
		t.Fatal("the newest large record was dropped")
	}
	kept := l.Records(d1)
	if n := len(kept); n < 25 || n > 32 {
		t.Fatalf("%d records of 1 MiB kept within 32 MiB", n)
	}
	for _, r := range kept {
		if !strings.HasPrefix(r.call.ID, "big-") {
			t.Fatalf("a small record (%s) outlived newer large ones", r.call.ID)
		}
	}

	// A record larger than everything that may be kept is not kept.
	l.Add(change(d2, "huge", strings.Repeat("y", MaxBytes)))
	if d, _ := l.Find("huge"); d != nil || l.bytes > MaxBytes {
		t.Fatalf("a record over the cap was kept (%d bytes)", l.bytes)
	}
}

// diffCells finds what a change did from the two lists alone.
func TestDiffCells(t *testing.T) {
	t.Parallel()
	cell := func(id string) *notebook.Cell { return &notebook.Cell{ID: id, Type: notebook.Code, Source: id} }
	a, b, c, d := cell("a"), cell("b"), cell("c"), cell("d")
	edited := *b
	edited.Source = "new"
	for _, tc := range []struct {
		name          string
		before, after []*notebook.Cell
		want          string // id:kind in order
		order         bool
	}{
		{"edit", []*notebook.Cell{a, b}, []*notebook.Cell{a, &edited}, "b:changed(source)", false},
		{"insert", []*notebook.Cell{a, b}, []*notebook.Cell{a, d, b}, "d:inserted", false},
		{"delete", []*notebook.Cell{a, b, c}, []*notebook.Cell{a, c}, "b:deleted", true},
		{"move down", []*notebook.Cell{a, b, c, d}, []*notebook.Cell{b, c, a, d}, "a:moved", true},
		{"move up", []*notebook.Cell{a, b, c, d}, []*notebook.Cell{d, a, b, c}, "d:moved", true},
		{"nothing", []*notebook.Cell{a, b}, []*notebook.Cell{a, b}, "", false},
	} {
		cells, order := diffCells(tc.before, tc.after)
		var got []string
		for _, uc := range cells {
			kind := "moved"
			switch {
			case uc.Before == nil:
				kind = "inserted"
			case uc.After == nil:
				kind = "deleted"
			case uc.Fields == notebook.FieldSource:
				kind = "changed(source)"
			}
			got = append(got, uc.ID+":"+kind)
		}
		if strings.Join(got, " ") != tc.want || (order != nil) != tc.order {
			t.Errorf("%s: got %q (order %v), want %q", tc.name, got, order, tc.want)
		}
	}
}

// Records dropped for another notebook's changes while an undo reads them
// are read under the log's lock (the race detector checks), and read as
// dropped once gone.
func TestUndoViewsWhileDropping(t *testing.T) {
	t.Parallel()
	l := NewLog[*doc]()
	l.maxBytes = 64 << 10
	d1, d2 := &doc{name: "one"}, &doc{name: "two"}
	add := func(d *doc, call string) {
		before := []*notebook.Cell{{ID: "a", Source: "x"}}
		after := []*notebook.Cell{before[0], {ID: "b", Source: strings.Repeat("y", 4<<10)}}
		l.Add(NewRecord(Call{ID: call}, d, before, after, nil))
	}
	add(d1, "first")
	_, rs := l.Find("first")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			add(d2, fmt.Sprint("other-", i))
		}
	}()
	for range 100 {
		for _, v := range l.views(rs) {
			if !v.dropped && len(v.cells) != 1 {
				t.Errorf("a kept record read with %d cells", len(v.cells))
			}
		}
	}
	<-done
	if v := l.views(rs)[0]; !v.dropped || v.cells != nil {
		t.Fatalf("the oldest record outlived 400 KiB of newer ones in 64 KiB: %+v", v)
	}
}

// doc stands for the engine's document: a handle records are kept by.
type doc struct{ name string }
