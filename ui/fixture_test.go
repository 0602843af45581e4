package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func TestMain(m *testing.M) {
	// Goldens print wall-clock times; pin the zone so they match anywhere.
	time.Local = time.UTC
	os.Exit(m.Run())
}

// t0 is the fixed clock of the fixtures.
var t0 = time.Date(2025, 3, 14, 9, 26, 0, 0, time.UTC)

// fakeBackend records the actions it is asked for.
type fakeBackend struct {
	mu         sync.Mutex
	info       observe.HeaderInfo
	events     chan engine.Event
	interrupts []string
	cancels    []string
	paused     []bool
	decisions  []string
	verdicts   []string
	settleErr  error // what Settle answers
	revokes    int
	undos      []string
	undoErr    error // what Undo answers
	resends    []engine.Resend
	resendErr  error // what Resend answers
	noResend   error // what CanResend answers
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{
		info: observe.HeaderInfo{
			Endpoint:   "http://127.0.0.1:4040/mcp",
			Token:      "s3cr3t-token-0123456789abcdef",
			JupyterURL: "http://127.0.0.1:8888/",
			Mode:       "workbench",
		},
		events: make(chan engine.Event, 16),
	}
}

func (f *fakeBackend) Subscribe() (<-chan engine.Event, func()) { return f.events, func() {} }
func (f *fakeBackend) Info() observe.HeaderInfo                 { return f.info }
func (f *fakeBackend) InterruptKernel(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.interrupts = append(f.interrupts, id)
	return nil
}
func (f *fakeBackend) CancelCall(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels = append(f.cancels, id)
	return nil
}
func (f *fakeBackend) SetPaused(p bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = append(f.paused, p)
	return nil
}
func (f *fakeBackend) Decide(id string, allow bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	verdict := "deny"
	if allow {
		verdict = "allow"
	}
	f.decisions = append(f.decisions, id+":"+verdict)
	return nil
}

func (f *fakeBackend) Settle(id string, v engine.Verdict) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verdicts = append(f.verdicts, id+":"+verdictString(v))
	return f.settleErr
}
func (f *fakeBackend) RevokeAllowed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revokes++
	return nil
}
func (f *fakeBackend) Undo(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.undos = append(f.undos, id)
	return f.undoErr
}

func (f *fakeBackend) CanResend() error { return f.noResend }
func (f *fakeBackend) Resend(r engine.Resend) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resends = append(f.resends, r)
	return f.resendErr
}

// verdictString is a verdict as the tests compare it.
func verdictString(v engine.Verdict) string {
	s := "deny"
	if v.Allow {
		s = "allow"
	}
	if v.ForSession {
		s += " for session"
	}
	if v.Reason != "" {
		s += " reason=" + v.Reason
	}
	if v.Args != nil {
		s += " args=" + string(v.Args)
	}
	return s
}

// asciiStyles are the styles of a NO_COLOR terminal: goldens hold no escape
// codes and do not depend on the machine.
func asciiStyles() theme.Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	r.SetHasDarkBackground(true)
	return theme.New(r)
}

// newTestModel returns a model at w×h on a fixed clock with the scenario
// applied.
func newTestModel(t *testing.T, b Backend, w, h int, evs []engine.Event) Model {
	t.Helper()
	return newStyledModel(t, b, asciiStyles(), w, h, evs)
}

// newStyledModel is newTestModel drawing with styles.
func newStyledModel(t *testing.T, b Backend, styles theme.Styles, w, h int, evs []engine.Event) Model {
	t.Helper()
	m := NewModel(b, styles, Options{Now: func() time.Time { return t0.Add(30 * time.Second) }})
	m = send(m, tea.WindowSizeMsg{Width: w, Height: h})
	if len(evs) > 0 {
		m = send(m, eventsMsg(evs))
	}
	return m
}

// send runs one message through Update and drops the command, but for
// the decoding of the images that came into view: that is done here, as
// its command would, so that the screens show them.
func send(m Model, msg tea.Msg) Model {
	nm, _ := m.Update(msg)
	return finishDecodes(nm.(Model))
}

// finishDecodes decodes the images the model asked to decode and hands
// them back as their commands' messages would.
func finishDecodes(m Model) Model {
	for _, nb := range m.st.Notebooks {
		for _, c := range nb.Cells {
			for _, o := range c.Outputs {
				if si, _ := o.Decoded.(*shownImage); si != nil && si.dec != nil && !si.dec.ready {
					img, err := decodeImage(si.mime, si.data)
					m.imageDecoded(imageDecodedMsg{d: si.dec, img: img, err: err})
				}
			}
		}
	}
	return m
}

// press feeds a key and returns the model and the command.
func pressKey(m Model, k string) (Model, tea.Cmd) {
	var msg tea.KeyMsg
	switch k {
	case "tab":
		msg = tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		msg = tea.KeyMsg{Type: tea.KeyShiftTab}
	case "enter":
		msg = tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		msg = tea.KeyMsg{Type: tea.KeyEsc}
	case "up":
		msg = tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		msg = tea.KeyMsg{Type: tea.KeyDown}
	case " ":
		msg = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	default:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
	}
	nm, cmd := m.Update(msg)
	return nm.(Model), cmd
}

// keys feeds several keys, running no commands.
func keys(m Model, ks ...string) Model {
	for _, k := range ks {
		m, _ = pressKey(m, k)
	}
	return m
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got += "\n"
	path := filepath.Join("..", "testdata", "golden", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./ui -run %s -update to create it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file %s (run with -update if the change is intended)\n--- got:\n%s\n--- want:\n%s", name, path, got, want)
	}
}

// testPNG is a small gradient image.
func testPNG(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for y := 0; y < 20; y++ {
		for x := 0; x < 40; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 6), uint8(y * 12), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ip(n int) *int { return &n }

func raw(t testing.TB, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scenario is a small but complete session: an agent opens a notebook,
// lists files (with a cache hint), edits and runs cells, one call fails, one
// runs, one is held for approval.
func scenario(t testing.TB) []engine.Event {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var seq uint64
	ev := func(s float64, e engine.Event) engine.Event {
		seq++
		e.Seq, e.Time = seq, at(s)
		return e
	}
	call := func(s float64, typ engine.EventType, c engine.CallEvent) engine.Event {
		c.Started = at(s)
		return ev(s, engine.Event{Type: typ, Call: &c})
	}
	finish := func(start, took float64, c engine.CallEvent) engine.Event {
		c.Started = at(start)
		c.Duration = time.Duration(took * float64(time.Second))
		return ev(start+took, engine.Event{Type: engine.EvCallFinished, Call: &c})
	}
	cells := []engine.CellSnapshot{
		{ID: "a1b2c3d4", Type: "markdown", Source: "# Sales analysis\nQuarterly numbers."},
		{ID: "e5f6a7b8", Type: "code", Source: "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.head()", ExecutionCount: ip(1),
			Outputs: []engine.OutputSnapshot{{Kind: "execute_result", Text: "   region  q1  q2\n0  north  10  12\n1  south   8   9"}}},
		{ID: "c9d0e1f2", Type: "code", Source: "df.plot()", ExecutionCount: ip(2),
			Outputs: []engine.OutputSnapshot{{Kind: "display_data", MimeType: "image/png", Image: testPNG(t)}}},
	}
	ok := true
	return []engine.Event{
		ev(0, engine.Event{Type: engine.EvServerState, Server: &engine.ServerEvent{JupyterURL: "http://127.0.0.1:8888/", ApprovalMode: "destructive", Jupyter: engine.JupyterUp}}),
		ev(0.5, engine.Event{Type: engine.EvSessionOpened, Session: &engine.SessionEvent{ID: "sess-7f3a", Client: "claude-code 1.0"}}),
		ev(0.6, engine.Event{Type: engine.EvKernelStatus, Kernel: &engine.KernelEvent{ID: "k-5e6f7a8b9c", Name: "python3", State: "idle"}}),
		call(1, engine.EvCallStarted, engine.CallEvent{ID: "c1", Session: "sess-7f3a", Tool: "use_notebook", Args: raw(t, map[string]any{"notebook_name": "sales", "notebook_path": "sales.ipynb", "mode": "connect"}), Status: engine.CallRunning}),
		ev(1.2, engine.Event{Type: engine.EvNotebookOpened, Notebook: &engine.NotebookEvent{Name: "sales", Path: "sales.ipynb", KernelID: "k-5e6f7a8b9c", Cells: cells}}),
		finish(1, 0.31, engine.CallEvent{ID: "c1", Session: "sess-7f3a", Tool: "use_notebook", Status: engine.CallOK, Text: "Connected to notebook 'sales' (sales.ipynb)", SchemaOK: &ok,
			Structured: raw(t, map[string]any{"kind": "message", "result": "Connected to notebook 'sales'"})}),
		call(3, engine.EvCallStarted, engine.CallEvent{ID: "c2", Session: "sess-7f3a", Tool: "list_files", Args: raw(t, map[string]any{"path": "", "max_depth": 1}), Status: engine.CallRunning}),
		finish(3, 0.042, engine.CallEvent{ID: "c2", Session: "sess-7f3a", Tool: "list_files", Status: engine.CallOK,
			Text: "Path\tType\tSize\nsales.csv\tfile\t1204\nsales.ipynb\tnotebook\t5120", SchemaOK: &ok,
			Structured: raw(t, map[string]any{"kind": "rows", "columns": []string{"path", "type", "size"},
				"items": []any{map[string]any{"path": "sales.csv", "type": "file", "size": 1204}, map[string]any{"path": "sales.ipynb", "type": "notebook", "size": 5120}}}),
			Meta: raw(t, map[string]any{"io.modelcontextprotocol/cache": map[string]any{"ttlMs": 30000, "cacheScope": "private"}})}),
		call(5, engine.EvCallStarted, engine.CallEvent{ID: "c3", Session: "sess-7f3a", Tool: "overwrite_cell_source", Args: raw(t, map[string]any{"cell_id": "c9d0e1f2", "cell_source": "df.plot(kind='bar')"}), Status: engine.CallRunning}),
		ev(5.1, engine.Event{Type: engine.EvNotebookChanged, Notebook: &engine.NotebookEvent{Name: "sales", Op: engine.OpEdit, Index: 2,
			Cells: []engine.CellSnapshot{{ID: "c9d0e1f2", Type: "code", Source: "df.plot(kind='bar')", ExecutionCount: ip(2), Outputs: cells[2].Outputs}}}}),
		finish(5, 0.12, engine.CallEvent{ID: "c3", Session: "sess-7f3a", Tool: "overwrite_cell_source", Status: engine.CallOK, Text: "Cell 2 overwritten", CellID: "c9d0e1f2", Notebook: "sales", SchemaOK: &ok,
			Structured: raw(t, map[string]any{"kind": "message", "result": "Cell 2 overwritten", "diff": "-df.plot()\n+df.plot(kind='bar')"}),
			Meta:       raw(t, map[string]any{"io.jupyter-mcp/cell_id": "c9d0e1f2"})}),
		call(8, engine.EvCallStarted, engine.CallEvent{ID: "c4", Session: "sess-7f3a", Tool: "read_cell", Args: raw(t, map[string]any{"cell_index": 9}), Status: engine.CallRunning}),
		finish(8, 0.003, engine.CallEvent{ID: "c4", Session: "sess-7f3a", Tool: "read_cell", Status: engine.CallError, IsError: true, Text: "Cell index 9 is out of range: the notebook has 3 cells (0-2).", SchemaOK: &ok}),
		call(20, engine.EvCallStarted, engine.CallEvent{ID: "c5", Session: "sess-7f3a", Tool: "insert_execute_cell", Args: raw(t, map[string]any{"cell_index": -1, "cell_source": "for i in range(100):\n    print(i)\n    time.sleep(1)"}), Status: engine.CallRunning}),
		ev(20.1, engine.Event{Type: engine.EvNotebookChanged, Notebook: &engine.NotebookEvent{Name: "sales", Op: engine.OpInsert, Index: 3,
			Cells: []engine.CellSnapshot{{ID: "f3a4b5c6", Type: "code", Source: "for i in range(100):\n    print(i)\n    time.sleep(1)"}}}}),
		ev(20.2, engine.Event{Type: engine.EvExecStarted, Exec: &engine.ExecEvent{ID: "x1", Notebook: "sales", CellID: "f3a4b5c6", KernelID: "k-5e6f7a8b9c", CallID: "c5", Code: "for i in range(100):\n    print(i)"}}),
		ev(20.3, engine.Event{Type: engine.EvKernelStatus, Kernel: &engine.KernelEvent{ID: "k-5e6f7a8b9c", State: "busy"}}),
		ev(21, engine.Event{Type: engine.EvExecOutput, Exec: &engine.ExecEvent{ID: "x1", Output: &engine.OutputSnapshot{Kind: "stream", Name: "stdout", Text: "0\n1\n2\n3\n4\n5\n6\n7\n"}}}),
		ev(28, engine.Event{Type: engine.EvNotebookChanged, Notebook: &engine.NotebookEvent{Name: "sales", Op: engine.OpOutput, Index: 3,
			Cells: []engine.CellSnapshot{{ID: "f3a4b5c6", Type: "code", Source: "for i in range(100):\n    print(i)\n    time.sleep(1)",
				Outputs: []engine.OutputSnapshot{{Kind: "stream", Name: "stdout", Text: "0\n1\n2\n3\n4\n5\n6\n7\n"}}}}}}),
		call(25, engine.EvCallStarted, engine.CallEvent{ID: "c6", Session: "sess-7f3a", Tool: "delete_cell", Destructive: true, Args: raw(t, map[string]any{"cell_indices": []int{0}}), Status: engine.CallRunning}),
		call(25, engine.EvCallHeld, engine.CallEvent{ID: "c6", Status: engine.CallHeld, Editable: true, Preview: &engine.CallPreview{
			Client: "claude-code 1.0", Notebook: "sales", What: "delete 1 of 4 cells",
			Cells: []engine.PreviewCell{{Index: 0, ID: "a1b2c3d4", Type: "markdown", Source: "# Sales analysis\nQuarterly numbers.", Role: engine.PreviewCellGone}}}}),
		ev(26, engine.Event{Type: engine.EvSandboxStatus, Sandbox: &engine.SandboxEvent{Name: "scratch", ID: "sb-1", Variant: "local", State: "idle"}}),
	}
}
