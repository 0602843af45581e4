package ui

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// poison holds one of every kind of sequence the sanitizer must drop.
const poison = "\x1b]52;c;aGVsbG8=\x07\x1b]0;title\x1b\\\x1b[2J\x1b[?1049h\x1bPq~\x1b\\\x1b_Ga\x1b\\\x07\r\x00\u009b\x9d\xff"

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// mutateStrings rewrites, in place, every string reachable from v (struct
// fields, pointers, slices), every []string and every json.RawMessage (its
// strings, keys included) with f. Fields named in skip are left alone.
func mutateStrings(t testing.TB, v reflect.Value, f func(string) string, skip map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			mutateStrings(t, v.Elem(), f, skip)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !skip[v.Type().Field(i).Name] {
				mutateStrings(t, v.Field(i), f, skip)
			}
		}
	case reflect.String:
		v.SetString(f(v.String()))
	case reflect.Slice:
		if v.Type() == rawMessageType {
			if v.Len() > 0 {
				v.SetBytes(mutateJSON(t, v.Bytes(), f))
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // image bytes
		}
		// The slices of events may be shared between events: copy first.
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		v.Set(c)
		for i := 0; i < v.Len(); i++ {
			mutateStrings(t, v.Index(i), f, skip)
		}
	}
}

// mutateJSON rewrites every key and string of a JSON value with f.
func mutateJSON(t testing.TB, raw []byte, f func(string) string) []byte {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("fixture JSON %q: %v", raw, err)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return f(v)
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			m := map[string]any{}
			for k, e := range v {
				m[f(k)] = walk(e)
			}
			return m
		}
		return v
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cloneEvent copies ev and its payloads deeply enough for mutateStrings.
func cloneEvent(ev event.Event) event.Event {
	v := reflect.ValueOf(&ev).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			c := reflect.New(f.Elem().Type())
			c.Elem().Set(f.Elem())
			f.Set(c)
		}
	}
	if ev.Exec != nil && ev.Exec.Output != nil {
		o := *ev.Exec.Output
		ev.Exec.Output = &o
	}
	return ev
}

// everyPayload is one event carrying every payload, each string field set.
func everyPayload(t testing.TB) event.Event {
	ev := event.Event{
		Call: &event.CallEvent{Args: json.RawMessage(`{"k":"v"}`), Structured: json.RawMessage(`{"k":["v"]}`), Meta: json.RawMessage(`{"k":{"k":"v"}}`),
			Preview: &event.CallPreview{Cells: []event.PreviewCell{{}, {}}, Facts: []string{"a", "b"}, Bound: []event.BoundFact{{}, {}}}, Task: &event.CallTask{}},
		Session: &event.SessionEvent{},
		Notebook: &event.NotebookEvent{CellIDs: []string{"a", "b"}, ChangedCells: []event.ChangedCell{{}, {}}, Cells: []event.CellSnapshot{
			{Outputs: []event.OutputSnapshot{{Cut: &output.Cut{}}, {Cut: &output.Cut{}}}},
			{Outputs: []event.OutputSnapshot{{Cut: &output.Cut{}}}}}},
		Exec:    &event.ExecEvent{Output: &event.OutputSnapshot{Cut: &output.Cut{}}},
		Kernel:  &event.KernelEvent{},
		Sandbox: &event.SandboxEvent{},
		Server:  &event.ServerEvent{Allowed: []event.AllowedTool{{}, {}}},
	}
	// A payload added to Event without a line here fails: the walk below
	// would not see its strings. So does a struct or a slice of structs or
	// strings nested in a payload (a call's preview, the server's allowed
	// tools) that is left empty.
	requireFilled(t, "Event", reflect.ValueOf(ev))
	mutateStrings(t, reflect.ValueOf(&ev), func(s string) string { return s + poison }, nil)
	return ev
}

// requireFilled fails for a nil pointer to a struct, or an empty slice of
// structs or strings, reachable from v: everyPayload must reach every
// string field for the coverage test to mean anything.
func requireFilled(t testing.TB, path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type().Elem().Kind() != reflect.Struct {
			return
		}
		if v.IsNil() {
			t.Fatalf("everyPayload does not set %s", path)
		}
		requireFilled(t, path, v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				requireFilled(t, path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		}
	case reflect.Slice:
		if k := v.Type().Elem().Kind(); k != reflect.Struct && k != reflect.String {
			return
		}
		if v.Len() == 0 {
			t.Fatalf("everyPayload leaves %s empty", path)
		}
		for i := 0; i < v.Len(); i++ {
			requireFilled(t, path, v.Index(i))
		}
	}
}

// checkStrings fails for any string reachable from v that is not clean,
// decoding json.RawMessage.
func checkStrings(t *testing.T, path string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			checkStrings(t, path, v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			checkStrings(t, path+"."+v.Type().Field(i).Name, v.Field(i))
		}
	case reflect.String:
		if !sanitized(v.String()) {
			t.Errorf("%s = %q: not sanitized", path, v.String())
		}
	case reflect.Slice:
		if v.Type() == rawMessageType && strings.HasSuffix(path, ".Args") {
			// Arguments keep every character, a hidden one as its JSON
			// escape: the text is drawable as it is, and a pane that
			// decodes a value draws it through termtext.Code.
			if !onlySGR(string(v.Bytes())) || !json.Valid(v.Bytes()) {
				t.Errorf("%s = %s: not drawable JSON", path, v.Bytes())
			}
			return
		}
		if v.Type() == rawMessageType {
			if v.Len() > 0 {
				mutateJSON(t, v.Bytes(), func(s string) string {
					if !sanitized(s) {
						t.Errorf("%s holds %q: not sanitized", path, s)
					}
					return s
				})
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			checkStrings(t, path, v.Index(i))
		}
	}
}

// sanitized reports whether s is fit to draw: only SGR, and the OSC 52 of
// the poison either dropped whole (termtext.String) or shown as text after
// its marker (termtext.Code, termtext.Name).
func sanitized(s string) bool {
	return onlySGR(s) && strings.Count(s, "]52;") == strings.Count(s, "⟨ESC⟩]52;")
}

// onlySGR reports whether s is valid UTF-8 holding no escape but SGR and no
// control but tab and newline.
func onlySGR(s string) bool { return firstBad(s) < 0 }

// firstBad is the offset of the first escape that is not an SGR, control
// but tab and newline, or invalid UTF-8 in s; -1 if none.
func firstBad(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return i
		case r == 0x1b:
			k := i + 2
			if k > len(s) || s[i+1] != '[' {
				return i
			}
			for k < len(s) && s[k] >= '0' && s[k] <= ';' {
				k++
			}
			if k == len(s) || s[k] != 'm' {
				return i
			}
			i = k + 1
			continue
		case r < 0x20 && r != '\t' && r != '\n', r >= 0x7f && r <= 0x9f:
			return i
		}
		i += n
	}
	return -1
}

func TestSanitizeEventCoversEveryField(t *testing.T) {
	ev := everyPayload(t)
	before, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	got := sanitizeEvent(ev)
	checkStrings(t, "Event", reflect.ValueOf(got))
	if got.Call.Text != "\uFFFD" || got.Notebook.Cells[0].Outputs[1].Text != "\uFFFD" {
		t.Errorf("sanitized strings = %q, %q, want the poison gone but for the invalid byte", got.Call.Text, got.Notebook.Cells[0].Outputs[1].Text)
	}
	// Copy on write: the engine's event, shared with the feed and the
	// recorder, is untouched.
	if after, _ := json.Marshal(ev); string(after) != string(before) {
		t.Errorf("sanitizeEvent changed its input:\n%s\n%s", before, after)
	}
}

func TestSanitizeEventCleanIsShared(t *testing.T) {
	for _, ev := range scenario(t) {
		got := sanitizeEvent(ev)
		if got.Call != ev.Call || got.Notebook != ev.Notebook || got.Exec != ev.Exec || got.Session != ev.Session {
			t.Errorf("a clean %s event was copied", ev.Type)
		}
	}
	evs := scenario(t)
	if n := testing.AllocsPerRun(50, func() {
		for _, ev := range evs {
			_ = sanitizeEvent(ev)
		}
	}); n != 0 {
		t.Errorf("sanitizing clean events allocates %v times", n)
	}
}

// colourStyles draw in true colour, so that the screen holds the
// renderer's own SGR next to the content's.
func colourStyles() theme.Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(true)
	return theme.New(r)
}

// enumFields name the fields whose values choose how a thing is drawn
// (a stream, a running call); the fuzz test leaves them alone on half its
// runs so that those drawings see the hostile text too.
var enumFields = map[string]bool{"Type": true, "Status": true, "Op": true, "Kind": true, "State": true, "MimeType": true}

// FuzzViewOnlySGR feeds the fuzzed text into every string of every event of
// a whole session (each string gets it appended, so names still match), the
// header info and an action's error, draws the screen in colour with each
// pane focused and the detail tree unfolded, and checks that the screen
// holds no escape but SGR and no control but newline.
func FuzzViewOnlySGR(f *testing.F) {
	for _, s := range []string{"", "\x1b[31mred\x1b[0m", poison, "\x1b]52;c;aGVsbG8=", "\x1b[", "\u009b2J", "\xff", "a\rb\x1b[1;2H"} {
		f.Add(s, true, false)
	}
	f.Add("\x1b]0;t\x07", false, true)
	f.Fuzz(func(t *testing.T, in string, keepEnums, rawJSON bool) {
		var skip map[string]bool
		if keepEnums {
			skip = enumFields
		}
		add := func(s string) string { return s + in }
		evs := scenario(t)
		for i := range evs {
			evs[i] = cloneEvent(evs[i])
			mutateStrings(t, reflect.ValueOf(&evs[i]), add, skip)
			if rawJSON && evs[i].Call != nil && len(evs[i].Call.Args) > 0 {
				evs[i].Call.Args = json.RawMessage(in) // not JSON at all, maybe
				evs[i].Call.Meta = json.RawMessage(in)
			}
		}
		b := newFakeBackend()
		mutateStrings(t, reflect.ValueOf(&b.info), add, nil)
		m := NewModel(b, colourStyles(), Options{Now: func() time.Time { return t0.Add(30 * time.Second) }})
		m = send(m, tea.WindowSizeMsg{Width: 100, Height: 36})
		m = send(m, eventsMsg(evs))
		m = send(m, actionDoneMsg{what: "interrupt " + in, err: errors.New("refused: " + in)})
		check := func(step string) {
			if v := m.View(); firstBad(v) >= 0 {
				i := firstBad(v)
				t.Fatalf("after %s the screen holds more than SGR at %d: %q", step, i, v[max(i-80, 0):min(i+80, len(v))])
			}
		}
		check("the events")
		// Older calls in the list, the detail of one unfolded, the
		// notebook, the executions, the help.
		for _, k := range []string{"k", "k", "tab", " ", "j", " ", "tab", "j", "tab", "?"} {
			m = keys(m, k)
			check(k)
		}
	})
}
