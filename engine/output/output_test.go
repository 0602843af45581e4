package output

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

func TestTerminal(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"plain", "a\nb\n", "a\nb\n"},
		{"progress shows its last state", "  0%\r 50%\r100%\n", "100%\n"},
		{"crlf is a newline", "a\r\nb\r\n", "a\nb\n"},
		{"overwrite keeps what is not overwritten", "abcdef\rXY\n", "XYcdef\n"},
		{"backspace steps back", "abc\b\bX\n", "aXc\n"},
		{"backspace never passes the start", "\b\bab", "ab"},
		{"trailing cr leaves the line", "done\r", "done"},
		{"spinner", "|\b/\b-\b\\", "\\"},
		{"colours stay whole", "\x1b[32m 10%\x1b[0m\r\x1b[32m 20%\x1b[0m\n", "\x1b[32m\x1b[0m\x1b[32m 20%\x1b[0m\n"},
		{"other lines untouched", "first\nx\ry\nlast", "first\ny\nlast"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Terminal(c.in)
			if got != c.want {
				t.Errorf("Terminal(%q) = %q, want %q", c.in, got, c.want)
			}
			if again := Terminal(got); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
			if a, b := ansi.Strip(got), Terminal(ansi.Strip(c.in)); a != b {
				t.Errorf("stripping before (%q) and after (%q) differ", b, a)
			}
		})
	}
}

// TestScreenAcrossPieces feeds a progress bar in the pieces a kernel sends
// and checks the lines are those of the whole text.
func TestScreenAcrossPieces(t *testing.T) {
	t.Parallel()
	pieces := []string{"start\n", "\r  0%", "\r 50%", "\r", "100%", "\r", "\n", "a\r", "\nend"}
	var s Screen
	var lines []string
	for _, p := range pieces {
		s.Write(p, func(l string) { lines = append(lines, l) })
	}
	got := strings.Join(append(lines, s.Line()), "\n")
	if want := Terminal(strings.Join(pieces, "")); got != want {
		t.Errorf("pieces give %q, whole text %q", got, want)
	}
	if got != "start\n100%\na\nend" {
		t.Errorf("got %q", got)
	}
}

func TestScreenBoundsTheLine(t *testing.T) {
	t.Parallel()
	s := Screen{Max: 10}
	for range 100 {
		s.Write("0123456789", func(string) {})
	}
	if l := s.Line(); l != "0123456789" {
		t.Errorf("line = %q", l)
	}
	s.Write("\rab", func(string) {})
	if l := s.Line(); l != "ab23456789" {
		t.Errorf("line after \\r = %q", l)
	}
}

func TestCutNamesTheResource(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("0123456789\n", 100) // 1100 bytes, 100 lines
	uri := URI("nb", "abc", 2)
	v := Render(&notebook.Output{OutputType: notebook.Stream, Text: long}, Options{Limit: 500, URI: uri})
	got := v.String()
	if !strings.HasPrefix(got, long[:440]) {
		t.Errorf("cut does not keep the head")
	}
	if !strings.Contains(got, "read the resource notebook://nb/cells/abc/outputs/2 for the whole output") {
		t.Errorf("cut does not name the resource: %q", got[len(got)-200:])
	}
	// Cut on a line boundary: 495 bytes kept (45 lines), 605 bytes (55 lines) cut.
	if !strings.Contains(got, "605 more bytes (55 lines)") {
		t.Errorf("cut marker does not count what was cut: %q", got[strings.LastIndex(got, "\n["):])
	}
	if c := v.Cut; c == nil || c.Limit != 500 || c.Size != 1100 || c.Left != 605 || c.Lines != 55 || c.URI != uri {
		t.Errorf("cut = %+v", v.Cut)
	}
	if v := Render(&notebook.Output{OutputType: notebook.Stream, Text: "short"}, Options{Limit: 500, URI: "x"}); v.String() != "short" || v.Cut != nil {
		t.Errorf("short text changed: %+v", v)
	}
	noNotebook := Render(&notebook.Output{OutputType: notebook.Stream, Text: long}, Options{Limit: 500}).String()
	if !strings.Contains(noNotebook, "output cut") || strings.Contains(noNotebook, "notebook://") {
		t.Errorf("a cut outside a notebook should say so without a resource: %q", noNotebook[strings.LastIndex(noNotebook, "\n["):])
	}
}

func TestCutNeverSplitsAUTF8Sequence(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("é", 300) // 600 bytes, no newline
	v := Render(&notebook.Output{OutputType: notebook.Stream, Text: text}, Options{Limit: 101})
	if !strings.HasPrefix(text, v.Text) || len(v.Text) != 100 {
		t.Errorf("head is %d bytes, want 100 (a whole number of runes)", len(v.Text))
	}
}

// TestCutCountsTheTextWithoutEscapes cuts a coloured traceback: the kept
// part keeps its colours, and stripped it is exactly the head the plain text
// would have kept.
func TestCutCountsTheTextWithoutEscapes(t *testing.T) {
	t.Parallel()
	var tb []string
	for i := range 200 {
		tb = append(tb, "\x1b[0;32mline\x1b[0m "+strings.Repeat("x", i%7))
	}
	o := notebook.Output{OutputType: notebook.Error, EName: "E", EValue: "v", Traceback: tb}
	v := Render(&o, Options{Limit: 700})
	plain := ansi.Strip(strings.Join(tb, "\n"))
	p := Render(&notebook.Output{OutputType: notebook.Stream, Text: plain}, Options{Limit: 700})
	if v.String() != p.String() {
		t.Errorf("coloured cut reads %q,\nplain cut reads %q", v.String(), p.String())
	}
	if !strings.Contains(v.Text, "\x1b[0;32m") || !strings.HasSuffix(v.Text, "\x1b[0m") {
		t.Errorf("kept text lost its colours or their reset: %q", v.Text[len(v.Text)-40:])
	}
	if v.EName != "E" || v.EValue != "v" {
		t.Errorf("ename/evalue = %q/%q", v.EName, v.EValue)
	}
}

func TestRichTextPreference(t *testing.T) {
	t.Parallel()
	raw := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake"))
	cases := []struct {
		name     string
		data     map[string]json.RawMessage
		mime     string
		want     string
		wantMIME []string
	}{
		{"plain wins over html", map[string]json.RawMessage{"text/plain": raw("   a  b\n0  1  2"), "text/html": raw("<table/>")}, "text/plain", "   a  b\n0  1  2", []string{"text/plain", "text/html"}},
		{"object repr gives way to markdown", map[string]json.RawMessage{"text/plain": raw("<IPython.core.display.Markdown object>"), "text/markdown": raw("# Title")}, "text/markdown", "# Title", []string{"text/markdown", "text/plain"}},
		{"list of lines joined", map[string]json.RawMessage{"text/plain": json.RawMessage(`["a\n","b"]`)}, "text/plain", "a\nb", []string{"text/plain"}},
		{"html only", map[string]json.RawMessage{"text/html": raw("<b>x</b>")}, "text/html", "[HTML Output]", []string{"text/html"}},
		{"json pretty", map[string]json.RawMessage{"application/json": json.RawMessage(`{"a":1}`)}, "application/json", "{\n  \"a\": 1\n}", []string{"application/json"}},
		{"unknown keys sorted", map[string]json.RawMessage{"b/x": raw(""), "a/y": raw("")}, "", "[execute_result Data: keys=[a/y b/x]]", []string{"a/y", "b/x"}},
		{"image first", map[string]json.RawMessage{"text/plain": raw("<Figure>"), "image/png": raw(png)}, "image/png", "", []string{"image/png", "text/plain"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := notebook.Output{OutputType: notebook.ExecuteResult, Data: c.data}
			v := Render(&o, Options{Limit: 1000})
			if v.Text != c.want || v.MimeType != c.mime {
				t.Errorf("got %s %q, want %s %q", v.MimeType, v.Text, c.mime, c.want)
			}
			if got := MIMEs(&o); strings.Join(got, ",") != strings.Join(c.wantMIME, ",") {
				t.Errorf("MIMEs = %v, want %v", got, c.wantMIME)
			}
		})
	}
}

func TestImageBytes(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	b64 := base64.StdEncoding.EncodeToString(png)
	data, _ := json.Marshal(b64[:8] + "\n" + b64[8:]) // nbformat may wrap base64
	v := Render(&notebook.Output{OutputType: notebook.DisplayData, Data: map[string]json.RawMessage{"image/png": data}}, Options{})
	if string(v.Image) != string(png) || v.Base64() != b64 || v.MimeType != "image/png" || v.Text != "" {
		t.Errorf("view = %+v", v)
	}
	bad := Render(&notebook.Output{OutputType: notebook.DisplayData, Data: map[string]json.RawMessage{"image/jpeg": json.RawMessage(`"not base64!"`)}}, Options{})
	if bad.Image != nil || bad.Text != "[Image Output (image/jpeg) - Error processing image]" {
		t.Errorf("bad image = %+v", bad)
	}
}

func TestFromMessage(t *testing.T) {
	t.Parallel()
	msg := func(typ, content string) jupyter.Message {
		m := jupyter.Message{Content: json.RawMessage(content)}
		m.Header.MsgType = typ
		return m
	}
	o, _, ok := FromMessage(msg("stream", `{"name":"stdout","text":"a\rb"}`))
	if !ok || o.OutputType != notebook.Stream || o.Name != "stdout" || o.Text != "a\rb" {
		t.Errorf("stream = %+v %v (the stored text stays as sent)", o, ok)
	}
	o, id, ok := FromMessage(msg("execute_result", `{"data":{"text/plain":"1"},"metadata":null,"execution_count":3,"transient":{"display_id":"d"}}`))
	if !ok || o.OutputType != notebook.ExecuteResult || *o.ExecutionCount != 3 || string(o.Metadata) != "{}" || id != "d" {
		t.Errorf("execute_result = %+v %q %v", o, id, ok)
	}
	o, _, ok = FromMessage(msg("update_display_data", `{"data":{"text/plain":"2"},"metadata":{"a":1}}`))
	if !ok || o.OutputType != notebook.DisplayData || string(o.Metadata) != `{"a":1}` {
		t.Errorf("update_display_data = %+v %v", o, ok)
	}
	o, _, ok = FromMessage(msg("error", `{"ename":"E","evalue":"v"}`))
	if !ok || o.OutputType != notebook.Error || o.Traceback == nil {
		t.Errorf("error = %+v %v (the traceback must be a list)", o, ok)
	}
	for _, typ := range []string{"status", "execute_input", "clear_output"} {
		if _, _, ok := FromMessage(msg(typ, `{}`)); ok {
			t.Errorf("%s made an output", typ)
		}
	}
}

// BenchmarkRenderMegabyteStream renders a 1 MB stream with progress
// redraws: terminal semantics and the cut are linear.
func BenchmarkRenderMegabyteStream(b *testing.B) {
	text := strings.Repeat("step 1\rstep 2\r\n", 1<<16)
	o := notebook.Output{OutputType: notebook.Stream, Text: text}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Render(&o, Options{Limit: DefaultLimit})
	}
}

// TestBoundIsRenderWithALowerLimit: cutting a cut view again says what
// Render would have said with the lower limit.
func TestBoundIsRenderWithALowerLimit(t *testing.T) {
	t.Parallel()
	for _, text := range []string{strings.Repeat("0123456789\n", 300), strings.Repeat("abcdefghijklmnopqrstuvwxyz", 200)} {
		o := notebook.Output{OutputType: notebook.Stream, Text: text}
		for _, limits := range [][2]int{{2000, 500}, {5000, 1000}, {100000, 700}} {
			uri := URI("nb", "c", 1)
			got := Render(&o, Options{Limit: limits[0], URI: uri}).Bound(limits[1])
			want := Render(&o, Options{Limit: limits[1], URI: uri})
			if got.String() != want.String() || *got.Cut != *want.Cut {
				t.Errorf("limits %v: bound reads %q (%+v), render %q (%+v)", limits, got.String()[len(got.Text):], got.Cut, want.String()[len(want.Text):], want.Cut)
			}
		}
	}
}

// TestLiveStreamPieces: pieces of a progress bar go out with "\r" applied
// across them, and an observer that replaces the open line on Redraw ends
// with the text Render gives for the whole stream.
func TestLiveStreamPieces(t *testing.T) {
	t.Parallel()
	pieces := []string{"start\n", "\r  0%", "\r 50%", "\r", "100%", " done\nnext", " line\n"}
	var l Live
	var shown, open string
	for _, p := range pieces {
		v := l.View(&notebook.Output{OutputType: notebook.Stream, Name: "stdout", Text: p}, Options{Limit: 1000})
		if strings.ContainsAny(v.Text, "\r\b") {
			t.Fatalf("a live view carries a control: %q", v.Text)
		}
		if v.Redraw {
			open = ""
		}
		text := open + v.Text
		i := strings.LastIndexByte(text, '\n')
		shown += text[:i+1]
		open = text[i+1:]
	}
	shown += open
	whole := Render(&notebook.Output{OutputType: notebook.Stream, Text: strings.Join(pieces, "")}, Options{})
	if shown != whole.Text || shown != "start\n100% done\nnext line\n" {
		t.Errorf("live shows %q, the whole stream reads %q", shown, whole.Text)
	}
	// Another output starts afresh: no redraw of the stream's line.
	l.View(&notebook.Output{OutputType: notebook.Stream, Name: "stdout", Text: "50%"}, Options{})
	if v := l.View(&notebook.Output{OutputType: notebook.Stream, Name: "stderr", Text: "x"}, Options{}); v.Redraw {
		t.Error("a piece of another stream redraws the first one's line")
	}
}
