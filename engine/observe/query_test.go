package observe

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

func TestParseQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Query
		err  string // a part of the error; "" for none
	}{
		{in: "", want: Query{}},
		{in: "   ", want: Query{}},
		{in: "Hello World", want: Query{Words: []string{"hello", "world"}}},
		{in: `"two Words" tool:read_*`, want: Query{Words: []string{"two words"}, Tools: [][]string{{"read_*"}}}},
		{in: `"status:ok"`, want: Query{Words: []string{"status:ok"}}},
		{in: "tool:{read,edit}_cell", want: Query{Tools: [][]string{{"{read,edit}_cell"}}}},
		{in: "TOOL:x|y", want: Query{Tools: [][]string{{"x", "y"}}}},
		{in: "status:OK|error", want: Query{Statuses: [][]string{{"ok", "error"}}}},
		{in: "status:tool-error status:protocol-error", want: Query{Statuses: [][]string{{"tool-error"}, {"protocol-error"}}}},
		{in: "session:AbC", want: Query{Sessions: [][]string{{"abc"}}}},
		{in: "cell:3|a1b2", want: Query{Cells: [][]string{{"3", "a1b2"}}}},
		{in: "kind:rows", want: Query{Kinds: [][]string{{"rows"}}}},
		{in: "took:>1s", want: Query{Took: []TookBound{{">", time.Second}}}},
		{in: "took:<200ms took:>=50ms", want: Query{Took: []TookBound{{"<", 200 * time.Millisecond}, {">=", 50 * time.Millisecond}}}},
		{in: "took:2s", want: Query{Took: []TookBound{{">=", 2 * time.Second}}}},
		{in: "took:<=1m", want: Query{Took: []TookBound{{"<=", time.Minute}}}},
		{in: "http://127.0.0.1:8888/x 12:30 /a/b:c", want: Query{Words: []string{"http://127.0.0.1:8888/x", "12:30", "/a/b:c"}}},
		{in: "ValueError: oops", want: Query{Words: []string{"valueerror:", "oops"}, AsText: []string{"valueerror:"}}},
		{in: "stauts:ok", want: Query{Words: []string{"stauts:ok"}, AsText: []string{"stauts:"}}},

		{in: "tool:", err: "tool: needs a value"},
		{in: "status:fine", err: "status:fine is not a status; use one of ok, error, cell-error, tool-error"},
		{in: "status:ok|", err: "status:ok| has an empty alternative"},
		{in: "tool:[a", err: "tool:[a is not a valid glob"},
		{in: "kind:{rows", err: "kind:{rows is not a valid glob"},
		{in: "took:>", err: "took:>: want a comparison and a duration"},
		{in: "took:fast", err: "took:fast: want a comparison"},
		{in: "took:>-1s", err: "took:>-1s: want"},
		{in: "took:>1s|<2s", err: "one bound per term"},
		{in: `error "unclosed`, err: `unclosed quote: "unclosed`},
	} {
		got, err := ParseQuery(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseQuery(%q) error %v, want one saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseQuery(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseQuery(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if got.Empty() != (strings.TrimSpace(tc.in) == "") {
			t.Errorf("ParseQuery(%q).Empty() = %v", tc.in, got.Empty())
		}
	}
}

// queryCalls is a small timeline: each call is built by applying its
// events to a state, as the workbench does.
func queryCalls(t *testing.T) (*State, time.Time) {
	t.Helper()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := NewState(nil)
	s.Apply(event.Event{Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: "sess-aaaa1111", Client: "Claude Code 2.0"}})
	s.Apply(event.Event{Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: "sess-bbbb2222", Client: "cursor 1.0"}})
	add := func(ce event.CallEvent, finish *event.CallEvent) {
		ce.Started = t0
		s.Apply(event.Event{Time: t0, Type: event.EvCallStarted, Call: &ce})
		if finish != nil {
			finish.ID = ce.ID
			s.Apply(event.Event{Time: t0.Add(finish.Duration), Type: event.EvCallFinished, Call: finish})
		}
	}
	add(event.CallEvent{ID: "c1", Session: "sess-aaaa1111", Tool: "read_cell", Args: json.RawMessage(`{"cell_index":3}`)}, &event.CallEvent{Status: event.CallOK, Duration: 40 * time.Millisecond, Text: `print("Hello")`,
		Structured: json.RawMessage(`{"kind":"source","result":"print(\"Hello\")"}`), CellID: "a1b2c3d4",
		Meta: json.RawMessage(`{"io.jupyter-mcp/cell_id":"a1b2c3d4"}`)})
	add(event.CallEvent{ID: "c2", Session: "sess-aaaa1111", Tool: "execute_cell", Args: json.RawMessage(`{"cell_id":"ffee0011","timeout":60}`)}, &event.CallEvent{Status: event.CallError, IsError: true, Duration: 2500 * time.Millisecond, Text: "ZeroDivisionError: division by zero",
		Structured: json.RawMessage(`{"kind":"outputs","outputs":[{"type":"error","ename":"ZeroDivisionError"}]}`)})
	add(event.CallEvent{ID: "c3", Session: "sess-bbbb2222", Tool: "list_files", Args: json.RawMessage(`{"path":"data"}`)}, &event.CallEvent{Status: event.CallOK, Duration: 900 * time.Millisecond,
		Structured: json.RawMessage(`{"kind":"rows","columns":["name"],"items":[{"name":"sales.csv"}]}`),
		Meta:       json.RawMessage(`{"io.jupyter-mcp/cache":{"ttlMs":30000}}`)})
	add(event.CallEvent{ID: "c4", Session: "sess-bbbb2222", Tool: "no_such_tool", Args: json.RawMessage(`{}`)}, &event.CallEvent{Status: event.CallError, Duration: time.Millisecond, Error: "unknown tool \"no_such_tool\""})
	add(event.CallEvent{ID: "c5", Session: "sess-aaaa1111", Tool: "delete_cell", Args: json.RawMessage(`{"cell_indices":[0,7]}`)}, &event.CallEvent{Status: event.CallDenied, Duration: 5 * time.Second, Error: "denied in the workbench"})
	add(event.CallEvent{ID: "c6", Session: "sess-aaaa1111", Tool: "insert_execute_code_cell", Args: json.RawMessage(`{"cell_index":-1,"cell_source":"import time\ntime.sleep(60)"}`)}, nil)
	s.Apply(event.Event{Time: t0, Type: event.EvCallHeld, Call: &event.CallEvent{ID: "c7", Session: "sess-bbbb2222", Tool: "delete_cell", Started: t0,
		Args: json.RawMessage(`{"cell_ids_to_delete":["9f8e7d6c"]}`)}})
	add(event.CallEvent{ID: "c8", Session: "sess-aaaa1111", Tool: "read_notebook", Args: json.RawMessage(`{"notebook_name":"sales"}`)}, &event.CallEvent{Status: event.CallCancelled, Duration: 300 * time.Millisecond, IsError: true, Text: "The call was cancelled"})
	return s, t0.Add(10 * time.Second)
}

func TestQueryMatch(t *testing.T) {
	t.Parallel()
	s, now := queryCalls(t)
	for _, tc := range []struct {
		q    string
		want string // ids of the matching calls
	}{
		{"", "c1 c2 c3 c4 c5 c6 c7 c8"},
		{"hello", "c1"},                         // text and structured
		{`print("hello")`, "c1"},                // JSON strings searched by value
		{"zerodivisionerror", "c2"},             // text of a tool error
		{"sales", "c3 c8"},                      // structured item, argument
		{"ttlms", "c3"},                         // _meta key
		{"a1b2c3d4", "c1"},                      // _meta value
		{"time.sleep(60)", "c6"},                // argument of a running call
		{"unknown tool", "c4"},                  // the phrase is two words, each found
		{`"tool \"no"`, ""},                     // a quoted phrase that is not there
		{`"unknown tool"`, "c4"},                // a phrase found as it is
		{"ffee0011 timeout", "c2"},              // words AND
		{"hello ffee0011", ""},                  // in two different calls
		{"tool:read_*", "c1 c8"},                // glob
		{"tool:*_cell", "c1 c2 c5 c6 c7"},       // glob
		{"tool:{read,delete}_cell", "c1 c5 c7"}, // alternatives in a glob
		{"tool:LIST_FILES|no_such_tool", "c3 c4"},
		{"status:ok", "c1 c3"},
		{"status:error", "c2 c4"},
		{"status:tool-error", "c2"},
		{"status:protocol-error", "c4"},
		{"status:denied", "c5"},
		{"status:cancelled", "c8"},
		{"status:running", "c6"},
		{"status:held", "c7"},
		{"status:running|held", "c6 c7"},
		{"session:sess-b", "c3 c4 c7"},
		{"session:claude", "c1 c2 c5 c6 c8"}, // the client's name
		{"session:CURSOR|sess-aaaa1111", "c1 c2 c3 c4 c5 c6 c7 c8"},
		{"cell:3", "c1"},        // cell_index
		{"cell:7", "c5"},        // in cell_indices
		{"cell:-1", "c6"},       // the append index
		{"cell:a1b2", "c1"},     // acted-on cell id, a prefix
		{"cell:ffee0011", "c2"}, // cell_id argument
		{"cell:9f8e", "c7"},     // in cell_ids_to_delete
		{"cell:0", "c5"},        // not the 0 of a timeout
		{"kind:rows", "c3"},     //
		{"kind:out*|source", "c1 c2"},
		{"took:>1s", "c2 c5 c6"},    // running counts its time so far; held has not run yet
		{"took:<200ms", "c1 c4 c7"}, //
		{"took:>=900ms took:<=2.5s", "c2 c3"},
		{"status:ok took:>100ms", "c3"},
		{"tool:delete_cell status:held cell:9f8e", "c7"},
		{"stauts:ok", ""}, // searched as text
	} {
		q, err := ParseQuery(tc.q)
		if err != nil {
			t.Fatalf("ParseQuery(%q): %v", tc.q, err)
		}
		var got []string
		for _, c := range s.Calls {
			if q.Match(c, s.Sessions, now) {
				got = append(got, c.ID)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%q matches [%s], want [%s]", tc.q, strings.Join(got, " "), tc.want)
		}
	}
}

// TestQueryIndexFollowsTheCall checks that the search index is rebuilt
// when a call changes: a running call found by its arguments is found by
// its result once it finishes.
func TestQueryIndexFollowsTheCall(t *testing.T) {
	t.Parallel()
	s, now := queryCalls(t)
	q, _ := ParseQuery("sleeping")
	c := s.Call("c6")
	if q.Match(c, s.Sessions, now) {
		t.Fatal("matched a result the call has not given yet")
	}
	s.Apply(event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: "c6", Status: event.CallOK, Text: "Sleeping done"}})
	if !q.Match(c, s.Sessions, now) {
		t.Error("the finished call's text is not searched")
	}
	k, _ := ParseQuery("kind:outputs")
	if k.Match(c, s.Sessions, now) {
		t.Error("kind matched a call without structuredContent")
	}
	// Forgotten, the index is built again on the next search.
	s.ForgetSearchIndex()
	if c.hay != "" || c.indexed {
		t.Error("ForgetSearchIndex kept the search text")
	}
	if !q.Match(c, s.Sessions, now) {
		t.Error("no match after the index was forgotten")
	}
}

// TestQueryCutJSON checks that arguments cut for size (no longer valid
// JSON) are still searched as text.
func TestQueryCutJSON(t *testing.T) {
	t.Parallel()
	s := NewState(nil)
	src := strings.Repeat("x = 1\n", MaxArgsBytes/6) + "needle_at_the_end = 2\n"
	args, _ := json.Marshal(map[string]any{"cell_source": "first_line_marker\n" + src})
	s.Apply(event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: "c1", Tool: "insert_cell", Args: args}})
	c := s.Call("c1")
	if c.ArgsCut == 0 {
		t.Fatal("the arguments were not cut: the test needs longer ones")
	}
	for w, want := range map[string]bool{"first_line_marker": true, "needle_at_the_end": false, "x = 1": true} {
		q, _ := ParseQuery(`"` + w + `"`)
		if got := q.Match(c, nil, time.Time{}); got != want {
			t.Errorf("%q in cut arguments: match %v, want %v", w, got, want)
		}
	}
}

// BenchmarkSearchTimeline searches a full timeline of calls with 20 KB
// results: "indexed" is a search after the first (the index is kept),
// "cold" builds the index each time (the first search after a change).
func BenchmarkSearchTimeline(b *testing.B) {
	s := NewState(nil)
	rows := make([]map[string]any, 200)
	for i := range rows {
		rows[i] = map[string]any{"path": "data/file_" + strings.Repeat("x", 40), "size": i * 1000, "type": "file"}
	}
	for i := 0; i < MaxCalls; i++ {
		id := "c" + strings.Repeat("0", 3) + string(rune('a'+i%26)) + time.Duration(i).String()
		structured, _ := json.Marshal(map[string]any{"kind": "rows", "items": rows})
		s.Apply(event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: id, Tool: "list_files", Args: json.RawMessage(`{"path":"data"}`)}})
		s.Apply(event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: id, Status: event.CallOK, Structured: structured, Text: "listing"}})
	}
	q, _ := ParseQuery("needle tool:list_*")
	now := time.Now()
	run := func(b *testing.B, forget bool) {
		for i := 0; i < b.N; i++ {
			if forget {
				s.ForgetSearchIndex()
			}
			for _, c := range s.Calls {
				q.Match(c, s.Sessions, now)
			}
		}
	}
	b.Run("cold", func(b *testing.B) { run(b, true) })
	b.Run("indexed", func(b *testing.B) { run(b, false) })
}

func TestTopLevelKind(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`{"kind":"rows","items":[]}`:                     "rows",
		`{"result":{"kind":"inner"},"kind" : "outputs"}`: "outputs",
		`{"items":[{"kind":"x"}]}`:                       "",
		`{"note":"kind","other":1}`:                      "",
		`{"a":"\"kind\"","kind":"message"}`:              "message",
		`{"kind":3}`:                                     "",
		`{"kind":"cut`:                                   "",
		``:                                               "",
		`{"kind":"code.execute","outputs":["{\"kind\""]}`: "code.execute",
	} {
		if got := topLevelKind(json.RawMessage(raw)); got != want {
			t.Errorf("topLevelKind(%s) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzQuery parses any query and matches it against a call whose arguments
// and result are any bytes: neither may panic, a parsed query is never
// an error, and a query of plain words always finds a call holding them.
func FuzzQuery(f *testing.F) {
	f.Add(`tool:read_* "a phrase" status:ok|held took:>1s cell:3 kind:rows session:ab`, []byte(`{"kind":"rows","items":[{"a":"b\"c"}]}`))
	f.Add(`took:<`, []byte(`{"cut`))
	f.Add(`"unclosed`, []byte(`[1,2,"\u00e9"]`))
	f.Fuzz(func(t *testing.T, query string, doc []byte) {
		q, err := ParseQuery(query)
		s := NewState(nil)
		s.Apply(event.Event{Type: event.EvCallStarted, Call: &event.CallEvent{ID: "c1", Tool: "read_cell", Args: doc}})
		s.Apply(event.Event{Type: event.EvCallFinished, Call: &event.CallEvent{ID: "c1", Status: event.CallOK, Structured: doc, Meta: doc, Text: query}})
		c := s.Call("c1")
		if err == nil {
			q.Match(c, s.Sessions, time.Now())
		}
		// The query typed is the call's text: each of its plain words
		// (no quotes, no colon) is found in it.
		var words []string
		for _, w := range strings.Fields(query) {
			if !strings.ContainsAny(w, `":`) {
				words = append(words, w)
			}
		}
		if len(words) > 0 {
			wq, err := ParseQuery(strings.Join(words, " "))
			if err != nil {
				t.Fatalf("plain words %q: %v", words, err)
			}
			if !wq.Match(c, nil, time.Now()) {
				t.Fatalf("words %q not found in a text holding them", words)
			}
		}
	})
}
