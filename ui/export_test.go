package ui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// secretEvents are two calls whose arguments and results carry secrets:
// a Jupyter token in a URL and an argument, and the workbench's own token
// printed by a cell.
func secretEvents(t *testing.T, wbToken string) []event.Event {
	ok := true
	return []event.Event{
		{Seq: 100, Time: t0.Add(40 * time.Second), Type: event.EvCallFinished, Call: &event.CallEvent{
			ID: "s1", Session: "sess-7f3a", Tool: "connect_to_jupyter", Status: event.CallOK, Started: t0.Add(39 * time.Second), Duration: 1500 * time.Millisecond,
			Args:       raw(t, map[string]any{"jupyter_url": "http://lab:8888/?token=jup-arg-secret-1", "jupyter_token": "jup-arg-secret-2"}),
			Text:       "Connected to http://lab:8888/?token=jup-result-secret-3",
			Structured: raw(t, map[string]any{"kind": "message", "result": "connected", "token": "jup-structured-secret-4", "z_first": 1, "a_second": []any{"Bearer jup-bearer-secret-5"}}),
			SchemaOK:   &ok}},
		{Seq: 101, Time: t0.Add(45 * time.Second), Type: event.EvCallFinished, Call: &event.CallEvent{
			ID: "s2", Session: "sess-9b1c", Tool: "execute_cell", Status: event.CallOK, Started: t0.Add(44 * time.Second), Duration: 20 * time.Millisecond,
			Args: raw(t, map[string]any{"cell_index": 0}),
			Text: "the server's key is " + wbToken + "!", Images: 1}},
	}
}

func TestExportWritesTheShownCallsRedacted(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	wbToken := b.info.Token
	m := newTestModel(t, b, 140, 40, append(scenario(t), secretEvents(t, wbToken)...))
	m = aside(m)
	dir := t.TempDir()
	m.exportDir = dir

	// The search shows the call whose tool begins with conn (the word
	// conn alone also finds use_notebook, whose result says Connected).
	m = typeText(keys(m, "/"), "tool:conn*")
	m = keys(m, "enter")
	if got := toolsOf(m.calls.visible(&m)); strings.Join(got, ",") != "connect_to_jupyter" {
		t.Fatalf("filter shows %v", got)
	}
	m = keys(m, "esc")
	m = keys(m, "/", "e", "x", "e", "c", "enter") // execute_cell only
	m = keys(m, "esc", "/", "_", "enter")         // every call has _ in its tool
	vis := m.calls.visible(&m)
	if len(vis) != 8 {
		t.Fatalf("filter _ shows %d calls, want 8", len(vis))
	}
	m = typeText(keys(m, "esc", "/"), "session:sess-9") // session sess-9b1c: one call
	m = keys(m, "enter")
	if got := toolsOf(m.calls.visible(&m)); strings.Join(got, ",") != "execute_cell" {
		t.Fatalf("session filter shows %v", got)
	}
	m = keys(m, "esc")

	m, cmd := pressKey(m, "E")
	m = run(t, m, cmd)
	if m.statusErr || !strings.HasPrefix(m.status, "exported 8 calls to "+dir) {
		t.Fatalf("status after export: %q (error %v)", m.status, m.statusErr)
	}
	path := strings.TrimPrefix(m.status, "exported 8 calls to ")
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "jupyter-mcp-calls-20250314-092630") || filepath.Ext(path) != ".jsonl" {
		t.Fatalf("export path %q", path)
	}
	if !strings.Contains(m.View(), "exported 8 calls to") {
		t.Error("the status line should say where the export went")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("export file mode %v, want 0600", fi.Mode().Perm())
	}
	for _, s := range []string{wbToken, "jup-arg-secret-1", "jup-arg-secret-2", "jup-result-secret-3", "jup-structured-secret-4", "jup-bearer-secret-5"} {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("the export holds the secret %q", s)
		}
	}
	var lines []map[string]json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", len(lines)+1, err, sc.Bytes())
		}
		lines = append(lines, rec)
	}
	if len(lines) != 8 {
		t.Fatalf("%d lines, want 8", len(lines))
	}
	// Oldest first: the scenario's six, then the two above.
	var ids []string
	for _, l := range lines {
		var id string
		json.Unmarshal(l["id"], &id)
		ids = append(ids, id)
	}
	if strings.Join(ids, ",") != "c1,c2,c3,c4,c5,c6,s1,s2" {
		t.Fatalf("ids %v", ids)
	}
	var s1 exportedCall
	if err := json.Unmarshal(mustLine(t, data, 6), &s1); err != nil {
		t.Fatal(err)
	}
	if s1.Request.Method != "tools/call" || s1.Request.Params.Name != "connect_to_jupyter" || s1.Session != "sess-7f3a" || s1.Status != event.CallOK || s1.DurationMs != 1500 {
		t.Fatalf("s1 %+v", s1)
	}
	var args map[string]string
	json.Unmarshal(s1.Request.Params.Arguments, &args)
	if args["jupyter_token"] != "[redacted]" || args["jupyter_url"] != "http://lab:8888/?token=[redacted]" {
		t.Fatalf("s1 arguments %v", args)
	}
	if s1.Result == nil || len(s1.Result.Content) != 1 || s1.Result.Content[0].Text != "Connected to http://lab:8888/?token=[redacted]" {
		t.Fatalf("s1 result %+v", s1.Result)
	}
	// structuredContent keeps its keys in the agent's order.
	if got := string(s1.Result.StructuredContent); got != `{"a_second":["Bearer [redacted]"],"kind":"message","result":"connected","token":"[redacted]","z_first":1}` {
		t.Fatalf("s1 structuredContent %s", got)
	}
	var c6 exportedCall // held: no result yet
	json.Unmarshal(mustLine(t, data, 5), &c6)
	if c6.Status != event.CallHeld || c6.Result != nil || c6.Finished != nil {
		t.Fatalf("held call exported as %+v", c6)
	}
	var s2 exportedCall
	json.Unmarshal(mustLine(t, data, 7), &s2)
	if s2.Result == nil || s2.Result.Images != 1 || s2.Result.Content[0].Text != "the server's key is [redacted]!" {
		t.Fatalf("s2 result %+v", s2.Result)
	}

	// With a filter, only the calls it shows; a second export in the
	// same second goes to a new file.
	m = typeText(keys(m, "/"), "session:sess-9")
	m = keys(m, "enter")
	m, cmd = pressKey(m, "E")
	m = run(t, m, cmd)
	if !strings.HasPrefix(m.status, "exported 1 call to ") || !strings.HasSuffix(m.status, "-092630-2.jsonl") {
		t.Fatalf("status after the filtered export: %q", m.status)
	}
	one, _ := os.ReadFile(strings.TrimPrefix(m.status, "exported 1 call to "))
	if n := bytes.Count(one, []byte("\n")); n != 1 || !bytes.Contains(one, []byte(`"id":"s2"`)) {
		t.Fatalf("filtered export:\n%s", one)
	}
}

func mustLine(t *testing.T, data []byte, i int) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if i >= len(lines) {
		t.Fatalf("no line %d", i)
	}
	return lines[i]
}

func TestCopyCallAsJSON(t *testing.T) {
	t.Parallel()
	b := newFakeBackend()
	var copied []string
	m := NewModel(b, asciiStyles(), Options{
		Now:  func() time.Time { return t0.Add(60 * time.Second) },
		Copy: func(s string) error { copied = append(copied, s); return nil },
	})
	m = send(m, tea.WindowSizeMsg{Width: 140, Height: 40})
	m = aside(send(m, eventsMsg(append(scenario(t), secretEvents(t, b.info.Token)...))))
	m = keys(m, "up") // s1, connect_to_jupyter
	if c := m.selectedCall(); c == nil || c.ID != "s1" {
		t.Fatalf("selected %v", m.selectedCall())
	}
	m, cmd := pressKey(m, "C")
	m = run(t, m, cmd)
	if len(copied) != 1 || m.statusErr || !strings.Contains(m.status, "call s1 (connect_to_jupyter) copied") {
		t.Fatalf("copied %d, status %q", len(copied), m.status)
	}
	var got exportedCall
	if err := json.Unmarshal([]byte(copied[0]), &got); err != nil {
		t.Fatalf("the clipboard holds no JSON: %v\n%s", err, copied[0])
	}
	if got.ID != "s1" || got.Request.Params.Name != "connect_to_jupyter" || got.Result == nil || len(got.Result.StructuredContent) == 0 {
		t.Fatalf("copied %+v", got)
	}
	for _, s := range []string{"jup-arg-secret", "jup-result-secret", "jup-structured-secret", "jup-bearer-secret"} {
		if strings.Contains(copied[0], s) {
			t.Errorf("the clipboard holds a secret (%s):\n%s", s, copied[0])
		}
	}

	// Without a clipboard the key says so.
	m2 := newTestModel(t, b, 140, 40, scenario(t))
	m2, cmd = pressKey(m2, "C")
	m2 = run(t, m2, cmd)
	if !m2.statusErr || !strings.Contains(m2.status, "no clipboard") {
		t.Fatalf("status without a clipboard: %q", m2.status)
	}
}

func TestZoomGivesTheFocusedPaneTheWindow(t *testing.T) {
	t.Parallel()
	m := newTestModel(t, newFakeBackend(), 120, 36, scenario(t))
	m = aside(m)
	before := m.View()
	m = keys(m, "tab") // the detail pane
	m = keys(m, "z")
	if !m.zoomed {
		t.Fatal("z should zoom")
	}
	lines := strings.Split(m.View(), "\n")
	if len(lines) != 36 {
		t.Fatalf("zoomed view has %d lines, want 36", len(lines))
	}
	// The pane's border runs from the first column to the last, from
	// under the header to above the footer, and no other pane is drawn.
	top, bottom := lines[2], lines[len(lines)-2]
	if !strings.HasPrefix(top, "┏━ Held delete_cell c6 ") || !strings.HasSuffix(top, "┓") || !strings.HasPrefix(bottom, "┗") || !strings.HasSuffix(bottom, "┛") {
		t.Fatalf("zoomed pane borders:\n%s\n%s", top, bottom)
	}
	for _, l := range lines[2 : len(lines)-1] {
		if w := len([]rune(l)); w != 120 {
			t.Fatalf("line %q is %d cells, want 120", l, w)
		}
	}
	v := m.View()
	for _, other := range []string{" Calls ", " Executions", "sales · 4 cells"} {
		if strings.Contains(v, other) {
			t.Errorf("the zoomed view still shows %q", other)
		}
	}
	// Tab moves the zoom to the next pane; resizing keys do nothing.
	m = keys(m, "tab", "]")
	if m.leftPct != 50 || !strings.Contains(strings.Split(m.View(), "\n")[2], "sales · 4 cells") {
		t.Fatalf("after tab the zoomed pane is:\n%s", strings.Split(m.View(), "\n")[2])
	}
	// z gives the window back; esc too.
	m = keys(m, "shift+tab", "z")
	if m.zoomed || m.focus != FocusDetail {
		t.Fatal("z should unzoom")
	}
	if got := keys(m, "shift+tab").View(); got != before {
		t.Errorf("unzoomed, the screen differs from before:\n%s\n--- before:\n%s", got, before)
	}
	m = keys(m, "z", "esc")
	if m.zoomed {
		t.Fatal("esc should unzoom")
	}
	if !strings.Contains(m.View(), " Calls ") || !strings.Contains(m.View(), "sales · 4 cells") {
		t.Fatal("after unzooming every pane is drawn again")
	}
}
