package observe

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	ms := func(ns ...int) []time.Duration {
		var d []time.Duration
		for _, n := range ns {
			d = append(d, time.Duration(n)*time.Millisecond)
		}
		return d
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		d    []time.Duration
		p    int
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(1, 2), 50, time.Millisecond},
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{ms(1, 2, 3, 4), 95, 4 * time.Millisecond},
		{ms(hundred...), 50, 50 * time.Millisecond},
		{ms(hundred...), 95, 95 * time.Millisecond},
		{ms(hundred...), 99, 99 * time.Millisecond},
		{ms(hundred...), 100, 100 * time.Millisecond},
	} {
		if got := Percentile(tc.d, tc.p); got != tc.want {
			t.Errorf("p%d of %v = %v, want %v", tc.p, tc.d, got, tc.want)
		}
	}
}

func TestComputeStats(t *testing.T) {
	t.Parallel()
	s, _ := queryCalls(t)
	// Sizes measured on the wire win over the kept text.
	s.Apply(event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: "c6", Status: event.CallOK, Duration: 4 * time.Second,
		Text: "done", TextBytes: 6, StructuredBytes: 100, ImageBytes: 4000}})
	st := ComputeStats(s, 3)
	if st.Calls != 8 {
		t.Errorf("Calls %d, want 8", st.Calls)
	}
	rows := map[string]StatsRow{}
	var names []string
	for _, r := range st.Tools {
		rows[r.Name] = r
		names = append(names, r.Name)
	}
	if fmt.Sprint(names) != "[delete_cell execute_cell insert_execute_code_cell list_files no_such_tool read_cell read_notebook]" {
		t.Errorf("tools %v, not sorted by name", names)
	}
	del := rows["delete_cell"]
	if del.Calls != 2 || del.Denied != 1 || del.Active != 1 || del.Timed != 0 || del.Max != 0 {
		t.Errorf("delete_cell %+v: want 2 calls, 1 denied, 1 held, no durations", del)
	}
	if r := rows["execute_cell"]; r.ToolErrors != 1 || r.ProtocolErrors != 0 || r.P50 != 2500*time.Millisecond {
		t.Errorf("execute_cell %+v", r)
	}
	if r := rows["no_such_tool"]; r.ProtocolErrors != 1 || r.ToolErrors != 0 {
		t.Errorf("no_such_tool %+v", r)
	}
	if r := rows["read_notebook"]; r.Cancelled != 1 || r.Timed != 1 {
		t.Errorf("read_notebook %+v", r)
	}
	if r := rows["insert_execute_code_cell"]; r.TextBytes != 6 || r.StructuredBytes != 100 || r.ImageBytes != 4000 || r.ResultBytes() != 4106 {
		t.Errorf("insert_execute_code_cell bytes %+v", r)
	}
	// Without measured sizes (an old recording) the kept text counts.
	if r := rows["read_cell"]; r.TextBytes != int64(len(`print("Hello")`)) || r.StructuredBytes != int64(len(`{"kind":"source","result":"print(\"Hello\")"}`)) {
		t.Errorf("read_cell bytes %+v", r)
	}

	sess := map[string]StatsRow{}
	for _, r := range st.Sessions {
		sess[r.Name] = r
	}
	a := sess["sess-aaaa1111"]
	if a.Client != "Claude Code 2.0" || a.Calls != 5 || a.OK != 2 || a.ToolErrors != 1 || a.Denied != 1 || a.Cancelled != 1 || a.Timed != 4 {
		t.Errorf("session a %+v", a)
	}
	// 40ms, 300ms, 2.5s, 4s: nearest rank p50 is the second.
	if a.P50 != 300*time.Millisecond || a.P95 != 4*time.Second || a.Max != 4*time.Second {
		t.Errorf("session a durations p50 %v p95 %v max %v", a.P50, a.P95, a.Max)
	}

	var slow []string
	for _, c := range st.Slowest {
		slow = append(slow, c.ID)
	}
	// The denied call waited 5s but did not run; the held one is active.
	if fmt.Sprint(slow) != "[c6 c2 c3]" {
		t.Errorf("slowest %v, want [c6 c2 c3]", slow)
	}
}

func TestSortStats(t *testing.T) {
	t.Parallel()
	rows := []StatsRow{
		{Name: "b", Calls: 3, P95: time.Second, ToolErrors: 1, TextBytes: 10},
		{Name: "a", Calls: 1, P95: 3 * time.Second, ProtocolErrors: 2, ImageBytes: 5},
		{Name: "C", Calls: 3, P95: 2 * time.Second, TextBytes: 100},
	}
	for _, tc := range []struct {
		col  SortColumn
		want string
	}{
		{SortName, "[a b C]"},
		{SortCalls, "[b C a]"}, // ties by name
		{SortErrors, "[a b C]"},
		{SortP95, "[a C b]"},
		{SortBytes, "[C b a]"},
	} {
		SortStats(rows, tc.col)
		var got []string
		for _, r := range rows {
			got = append(got, r.Name)
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("by %v: %v, want %v", tc.col, got, tc.want)
		}
	}
	col := SortName
	seen := map[SortColumn]bool{}
	for i := 0; i < int(sortColumns); i++ {
		seen[col] = true
		col = col.Next()
	}
	if col != SortName || len(seen) != int(sortColumns) {
		t.Errorf("Next does not cycle through every column")
	}
}

// TestStatsAlikeLiveAttachedReplayed checks that the stats come out the
// same from the live events, from the snapshot an attached workbench
// starts from, and from a recording played back: the sizes and durations
// they need travel with the call events.
func TestStatsAlikeLiveAttachedReplayed(t *testing.T) {
	t.Parallel()
	live, _ := queryCalls(t)
	live.Apply(event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: "c6", Status: event.CallOK, Duration: 4 * time.Second,
		TextBytes: 6, StructuredBytes: 100, ImageBytes: 4000}})
	want := ComputeStats(live, 5)

	attached := NewState(nil)
	for _, ev := range live.Snapshot() {
		attached.Apply(ev)
	}

	path := filepath.Join(t.TempDir(), "rec.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecordWriter(f, nil)
	for _, ev := range live.Snapshot() {
		if err := rec.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	src, err := Replay(path, ReplayOptions{Speed: -1})
	if err != nil {
		t.Fatal(err)
	}
	replayed := NewState(nil)
	evs, stop := src.Subscribe()
	defer stop()
	for ev := range evs {
		replayed.Apply(ev)
	}

	for name, s := range map[string]*State{"attached": attached, "replayed": replayed} {
		got := ComputeStats(s, 5)
		if fmt.Sprint(got.Tools) != fmt.Sprint(want.Tools) || fmt.Sprint(got.Sessions) != fmt.Sprint(want.Sessions) {
			t.Errorf("%s stats differ:\n%+v\nwant\n%+v", name, got.Tools, want.Tools)
		}
		var ids, wantIDs []string
		for i := range got.Slowest {
			ids = append(ids, got.Slowest[i].ID)
		}
		for i := range want.Slowest {
			wantIDs = append(wantIDs, want.Slowest[i].ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(wantIDs) {
			t.Errorf("%s slowest %v, want %v", name, ids, wantIDs)
		}
	}
}
