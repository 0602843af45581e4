package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNormalizerText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"kernel ids numbered in order",
			"[INFO] Connected to kernel '6e0ead8d-85a6-4481-95d5-419567db1595'. Other 0A1B2C3D-0000-4000-8000-000000000001, again 6e0ead8d-85a6-4481-95d5-419567db1595",
			"[INFO] Connected to kernel '<kernel-1>'. Other <kernel-2>, again <kernel-1>"},
		{"cell ids",
			"Cell inserted successfully at index 0 (code)! Its id is '7f3b1c06'; and 'e71ec3ae' then '7f3b1c06'",
			"Cell inserted successfully at index 0 (code)! Its id is '<cell-1>'; and '<cell-2>' then '<cell-1>'"},
		{"an eight-digit number is not an id",
			"x = 12345678 and deadbeef0 and cafe",
			"x = 12345678 and deadbeef0 and cafe"},
		{"times",
			"2026-11-30 17:49:03 and 2026-11-30T17:49:03.123456Z and 2026-11-30T17:49:03+01:00",
			"<time> and <time> and <time>"},
		{"execution counts",
			"=====Cell 0 | id: 7f3b1c06 | type: code | execution count: 12=====\nCell In [3], line 1\nInput In [44]\n<ipython-input-7-abc>",
			"=====Cell 0 | id: <cell-1> | type: code | execution count: <n>=====\nCell In [<n>], line 1\nInput In [<n>]\n<ipython-input-<n>-abc>"},
		{"temporary paths",
			"/tmp/TestX929278128/001\n and '/var/folders/xy/T/jms-replay-1/a.ipynb', /private/var/folders/q/x",
			"<tmp>\n and '<tmp>', <tmp>"},
		{"not a temporary path", "/tmpfoo/x and /usr/tmp/y", "/tmpfoo/x and /usr/tmp/y"},
		{"volatile columns of a listing, ids of its ID column",
			"Showing 0-2 of 2 files\n\nPath\tType\tSize\tLast_Modified\ncalls.jsonl\tfile\t10.6KB\t2026-11-30 17:49:03\ndemo.ipynb\tnotebook\t504B\t2026-11-30 17:49:03",
			"Showing 0-2 of 2 files\n\nPath\tType\tSize\tLast_Modified\ncalls.jsonl\tfile\t<*>\t<*>\ndemo.ipynb\tnotebook\t<*>\t<*>"},
		{"read_notebook's count column, an all-digit id in an ID column",
			"Notebook demo has 2 cells.\n\nIndex\tType\tCount\tFirst Line\tID\n0\tcode\t1\tx = 6*7\t7f3b1c06\n1\tcode\t3\ty = 1\t12345678\nthen 12345678",
			"Notebook demo has 2 cells.\n\nIndex\tType\tCount\tFirst Line\tID\n0\tcode\t<*>\tx = 6*7\t<cell-1>\n1\tcode\t<*>\ty = 1\t<cell-2>\nthen <cell-2>"},
		{"plain text untouched", "42\n", "42\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := NewNormalizer().Text(tc.in); got != tc.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNormalizerRoot(t *testing.T) {
	t.Parallel()
	n := NewNormalizer("/home/me/work/", "/home/me/work/sub")
	if got := n.Text("/home/me/work/sub/a.ipynb and /home/me/work/b, /home/me/work; /home/me/workshop"); got != "<tmp> and <tmp>, <tmp>; /home/me/workshop" {
		t.Errorf("got %q", got)
	}
}

func TestNormalizerJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"keys sorted, counts and ids",
			`{"kind":"cell.read","cell":{"id":"7f3b1c06","execution_count":4,"index":0},"count":1,"outputs":["42\n"]}`,
			`{"cell":{"execution_count":"<*>","id":"<cell-1>","index":0},"count":1,"kind":"cell.read","outputs":["42\n"]}`},
		{"rows",
			`{"columns":["ID","Last_Activity"],"items":[{"ID":"6e0ead8d-85a6-4481-95d5-419567db1595","Last_Activity":"2026-11-30 17:49:03","Connections":"1"}]}`,
			`{"columns":["ID","Last_Activity"],"items":[{"Connections":"1","ID":"<kernel-1>","Last_Activity":"<*>"}]}`},
		{"an all-digit cell id under an id key", `{"io.jupyter-mcp/cell_id":"12345678"}`, `{"io.jupyter-mcp/cell_id":"<cell-1>"}`},
		{"null execution count stays null", `{"execution_count":null}`, `{"execution_count":null}`},
		{"numbers kept as written", `{"n":1.50}`, `{"n":1.50}`},
		{"empty", ``, ``},
		{"not JSON compared as text", `{oops 7f3b1c06`, `{oops <cell-1>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := NewNormalizer().JSON(json.RawMessage(tc.in)); got != tc.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

// A replay makes other ids than the recording: the comparer names them in
// step, puts the replay's ids into later arguments, and still sees an id
// that changed where the recording kept one.
func TestComparerMapsIDs(t *testing.T) {
	t.Parallel()
	c := NewComparer("/tmp/jms-replay-1")
	insert := RecordedCall{N: 1, Tool: "insert_cell", Result: CallResult{Status: StatusOK,
		Text:       "Its id is '7f3b1c06'.",
		Structured: json.RawMessage(`{"kind":"cell.insert","result":"Its id is '7f3b1c06'."}`),
		Meta:       json.RawMessage(`{"io.jupyter-mcp/cell_id":"7f3b1c06"}`)}}
	if args := c.Args(json.RawMessage(`{"cell_index":-1,"cell_source":"x"}`)); string(args) != `{"cell_index":-1,"cell_source":"x"}` {
		t.Fatalf("args %s", args)
	}
	if d := c.Compare(insert, CallResult{Status: StatusOK,
		Text:       "Its id is '0badc0de'.",
		Structured: json.RawMessage(`{"kind":"cell.insert","result":"Its id is '0badc0de'."}`),
		Meta:       json.RawMessage(`{"io.jupyter-mcp/cell_id":"0badc0de"}`)}); len(d) != 0 {
		t.Fatalf("a new id in place of the recorded one is a difference: %+v", d)
	}
	// The next call addressed the recorded cell: the replay addresses its own.
	args := c.Args(json.RawMessage(`{"cell_id":"7f3b1c06"}`))
	if string(args) != `{"cell_id":"0badc0de"}` {
		t.Fatalf("args %s, want the replay's cell id", args)
	}
	read := RecordedCall{N: 2, Tool: "read_cell", Result: CallResult{Status: StatusOK, Text: "id: 7f3b1c06 in /tmp/TestRec1/001"}}
	if d := c.Compare(read, CallResult{Status: StatusOK, Text: "id: 0badc0de in /tmp/jms-replay-1"}); len(d) != 0 {
		t.Fatalf("differences %+v", d)
	}
	// Now the replay answers with the id of another cell.
	d := c.Compare(RecordedCall{N: 3, Tool: "read_cell", Result: CallResult{Status: StatusOK, Text: "id: 7f3b1c06"}},
		CallResult{Status: StatusOK, Text: "id: 1234abcd"})
	if len(d) != 1 || d[0].Field != "text" || d[0].Recorded != "id: <cell-1>" || d[0].Now != "id: <cell-2>" {
		t.Fatalf("differences %+v, want the text naming another cell", d)
	}
}

func TestComparerFields(t *testing.T) {
	t.Parallel()
	rec := RecordedCall{N: 4, Tool: "execute_cell", Result: CallResult{Status: StatusOK, Text: "42\n",
		Structured: json.RawMessage(`{"kind":"cell.execute","count":1,"outputs":["42\n"],"result":["42\n"]}`)}}
	for _, tc := range []struct {
		name   string
		now    CallResult
		fields string
	}{
		{"same", rec.Result, ""},
		{"text and structure", CallResult{Status: StatusOK, Text: "43\n",
			Structured: json.RawMessage(`{"kind":"cell.execute","count":1,"outputs":["43\n"],"result":["43\n"]}`)}, "text,structuredContent"},
		{"a tool error", CallResult{Status: StatusToolError, Text: "no notebook"}, "status,kind,keys,text,structuredContent"},
		{"a key more", CallResult{Status: StatusOK, Text: "42\n",
			Structured: json.RawMessage(`{"kind":"cell.execute","count":1,"images":0,"outputs":["42\n"],"result":["42\n"]}`)}, "keys,structuredContent"},
	} {
		d := NewComparer().Compare(rec, tc.now)
		var fields []string
		for _, x := range d {
			fields = append(fields, x.Field)
			if x.Call != 4 || x.Tool != "execute_cell" {
				t.Errorf("%s: %+v", tc.name, x)
			}
		}
		if got := strings.Join(fields, ","); got != tc.fields {
			t.Errorf("%s: fields %q, want %q", tc.name, got, tc.fields)
		}
	}
}

func TestExcerpts(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 100)
	for _, tc := range []struct {
		a, b, wantA, wantB string
	}{
		{"42\n", "43\n", `42\n`, `43\n`},
		{"", "x", `""`, `x`},
		{long + "X" + long, long + "Y" + long, "…" + strings.Repeat("a", 16) + "X" + strings.Repeat("a", 31) + "…", "…" + strings.Repeat("a", 16) + "Y" + strings.Repeat("a", 31) + "…"},
		{"héllo wörld", "héllo world", `héllo wörld`, `héllo world`},
		// Quotes stay readable; what could drive the terminal is escaped.
		{"{\"a\":\"x\x1b[31m\\\"}", "{\"a\":1}", `{"a":"x\x1b[31m\"}`, `{"a":1}`},
	} {
		a, b := Excerpts(tc.a, tc.b, 48)
		if a != tc.wantA || b != tc.wantB {
			t.Errorf("Excerpts(%q, %q) = %q, %q; want %q, %q", tc.a, tc.b, a, b, tc.wantA, tc.wantB)
		}
	}
}
