package ui

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/eventtest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func TestMain(m *testing.M) {
	// Goldens print wall-clock times; pin the zone so they match anywhere.
	time.Local = time.UTC
	os.Exit(m.Run())
}

// t0 is the fixed clock of the fixtures.
var t0 = eventtest.T0

// fakeBackend records the actions it is asked for.
type fakeBackend struct {
	mu         sync.Mutex
	info       observe.HeaderInfo
	events     chan event.Event
	interrupts []string
	cancels    []string
	paused     []bool
	decisions  []string
	verdicts   []string
	settleErr  error // what Decide answers a verdict with more to say
	revokes    int
	undos      []string
	undoErr    error // what Undo answers
	resends    []calls.Resend
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
		events: make(chan event.Event, 16),
	}
}

func (f *fakeBackend) Subscribe() (<-chan event.Event, func()) { return f.events, func() {} }
func (f *fakeBackend) Info() observe.HeaderInfo                { return f.info }
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

// Decide keeps a plain allow or deny in decisions, a verdict with more to
// say in verdicts (and answers settleErr).
func (f *fakeBackend) Decide(id string, v calls.Verdict) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v.Plain() {
		verdict := "deny"
		if v.Allow {
			verdict = "allow"
		}
		f.decisions = append(f.decisions, id+":"+verdict)
		return nil
	}
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
func (f *fakeBackend) Resend(r calls.Resend) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resends = append(f.resends, r)
	return f.resendErr
}

// verdictString is a verdict as the tests compare it.
func verdictString(v calls.Verdict) string {
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
func newTestModel(t *testing.T, b Backend, w, h int, evs []event.Event) Model {
	t.Helper()
	return newStyledModel(t, b, asciiStyles(), w, h, evs)
}

// newStyledModel is newTestModel drawing with styles.
func newStyledModel(t *testing.T, b Backend, styles theme.Styles, w, h int, evs []event.Event) Model {
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
	path := filepath.Join("testdata", "golden", name+".golden")
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

func raw(t testing.TB, v any) json.RawMessage { return eventtest.JSON(t, v) }

// scenario is the shared session of internal/eventtest: an agent opens a
// notebook, lists files (with a cache hint), edits and runs cells, one call
// fails, one runs, one is held for approval.
func scenario(t testing.TB) []event.Event { return eventtest.Scenario(t) }
