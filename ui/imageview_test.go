package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// imageModel is the scenario at 120×36 drawing images with proto, the
// notebook pane focused on the cell with the plot.
func imageModel(t *testing.T, proto ImageProtocol) Model {
	t.Helper()
	m := NewModel(newFakeBackend(), asciiStyles(), Options{
		Now:           func() time.Time { return t0.Add(30 * time.Second) },
		ImageProtocol: proto,
		ImageReason:   "test",
		CellSize:      func() (int, int) { return 8, 16 },
	})
	m = send(m, tea.WindowSizeMsg{Width: 120, Height: 36})
	m = aside(send(m, eventsMsg(scenario(t))))
	m = keys(m, "tab", "tab") // the notebook pane
	for m.selectedImage() == nil && m.notebook.cell > 0 {
		m = keys(m, "up")
	}
	if m.selectedImage() == nil {
		t.Fatal("no cell with an image")
	}
	return m
}

// openImageNow presses enter and runs the preparing command.
func openImageNow(t *testing.T, m Model) Model {
	t.Helper()
	if !m.keys.OpenImage.Enabled() {
		t.Fatal("enter should open the image")
	}
	m, cmd := pressKey(m, "enter")
	if m.img == nil {
		t.Fatal("enter did not open the image")
	}
	if v := m.View(); !strings.Contains(v, "drawing…") {
		t.Fatalf("before it is ready the view says it is drawing:\n%s", v)
	}
	return run(t, m, cmd)
}

func TestImageOpensFullWindowWithKitty(t *testing.T) {
	t.Parallel()
	m := openImageNow(t, imageModel(t, ImageKitty))
	v := m.View()
	lines := strings.Split(v, "\n")
	if len(lines) != 36 {
		t.Fatalf("%d lines, want 36", len(lines))
	}
	if !strings.HasPrefix(lines[0], " sales · cell 2 · image/png · 40×20 · kitty (test)") {
		t.Fatalf("title %q", lines[0])
	}
	// The area is blank; the footer starts with the image: save cursor,
	// move to the area's top left (the 40×20 image at twice its size in
	// 8×16 cells is 10×2 cells, centred in 120×33), our kitty escape,
	// restore cursor.
	for _, l := range lines[1 : len(lines)-1] {
		if strings.TrimSpace(l) != "" {
			t.Fatalf("the image area holds %q", l)
		}
	}
	footer := lines[len(lines)-1]
	if !strings.HasPrefix(footer, "\x1b7\x1b[17;56H\x1b_Ga=T,f=100,t=d,i=4711,q=2,C=1,c=10,r=2,m=0;") {
		t.Fatalf("footer %q", footer[:min(len(footer), 80)])
	}
	if !strings.Contains(footer, "\x1b\\\x1b8 esc, enter or q closes the image") {
		t.Fatal("the escape should end before the footer's text")
	}
	if w := ansi.StringWidth(footer); w != 120 {
		t.Fatalf("footer is %d cells wide", w)
	}
	// Keys other than the closing ones do nothing; q closes rather than
	// quits, and the screen is cleared.
	m = keys(m, "j", "tab", "E")
	if m.img == nil {
		t.Fatal("a key that does not close closed the image")
	}
	m, cmd := pressKey(m, "q")
	if m.img != nil || cmd == nil {
		t.Fatal("q should close the image")
	}
	if _, ok := cmd().(tea.QuitMsg); ok {
		t.Fatal("q quit instead of closing the image")
	}
	if msg := cmd(); msg != tea.ClearScreen() {
		t.Fatalf("closing returns %T, want a clear screen", msg)
	}
	// Every frame from now on starts with the delete of our image.
	v = m.View()
	if !strings.HasPrefix(v, kittyDelete) || !strings.Contains(v, " Calls ") {
		t.Fatalf("after closing: %q", v[:min(len(v), 120)])
	}
}

// Inside tmux (allow-passthrough on) the image is placed by a cursor move
// inside the same passthrough, to where the pane is in the terminal around
// tmux: tmux neither moves that terminal's cursor for a passthrough nor
// keeps it between two (nested tmux 3.3a here: a move made outside drew
// the image at the pane's cursor). The delete of the kitty image goes
// through passthrough too: tmux takes a bare APC for the pane's title and
// never passes it on, so the image would stay.
func TestKittyImageThroughTmux(t *testing.T) {
	t.Parallel()
	m := imageModel(t, ImageKitty)
	m.imgTarget.tmux = true
	m.tmuxOffset = func() (int, int) { return 5, 40 } // a pane below 5 rows, right of 40 columns
	m = openImageNow(t, m)
	lines := strings.Split(m.View(), "\n")
	// The 10×2 cells of the image at row 17, column 56 of the window (see
	// TestImageOpensFullWindowWithKitty) are at 22, 96 in the terminal.
	footer := lines[len(lines)-1]
	if !strings.HasPrefix(footer, "\x1bPtmux;\x1b\x1b7\x1b\x1b[22;96H\x1b\x1b_Ga=T,f=100,t=d,i=4711,q=2,C=1,c=10,r=2,m=0;") {
		t.Fatalf("footer %q: the image and the move that places it should go through tmux together", footer[:min(len(footer), 80)])
	}
	if !strings.Contains(footer, "\x1b\x1b\\\x1b\x1b8\x1b\\ esc, enter or q closes the image") {
		t.Fatalf("footer %q: the passthrough should end with the cursor restored, before the footer's text", footer)
	}
	m, _ = pressKey(m, "esc")
	v := m.View()
	if want := tmuxPassthrough([]string{kittyDelete}); !strings.HasPrefix(v, want) {
		t.Fatalf("after closing the frame starts %q, want the delete wrapped for tmux %q", v[:min(len(v), 60)], want)
	}
	if strings.Contains(v, kittyDelete) {
		t.Fatal("a bare kitty delete reaches tmux")
	}
}

func TestImageOpensFullWindowWithSixelAndITerm2(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		proto ImageProtocol
		start string
	}{
		{ImageSixel, "\x1b7\x1b[17;56H\x1bP0;1;0q\"1;1;80;32#"},
		{ImageITerm2, "\x1b7\x1b[17;56H\x1b]1337;File=inline=1;size="},
	} {
		m := openImageNow(t, imageModel(t, c.proto))
		lines := strings.Split(m.View(), "\n")
		if footer := lines[len(lines)-1]; !strings.HasPrefix(footer, c.start) {
			t.Errorf("%s footer %q", c.proto, footer[:min(len(footer), 80)])
		}
		m, _ = pressKey(m, "esc")
		if v := m.View(); m.img != nil || strings.Contains(v, "\x1b_G") || strings.Contains(v, "\x1bP") {
			t.Errorf("%s: after esc the frame is %q", c.proto, v[:min(len(v), 80)])
		}
	}
}

func TestImageOpensFullWindowInHalfBlocks(t *testing.T) {
	t.Parallel()
	m := openImageNow(t, imageModel(t, ImageHalfBlocks))
	v := m.View()
	if strings.Contains(v, "\x1b") {
		t.Fatalf("an ASCII terminal's image has escapes: %q", v)
	}
	// NO_COLOR: half blocks become the luminance ramp; the 40×20 image
	// is drawn 40 columns wide, 10 rows, centred.
	lines := strings.Split(v, "\n")
	drawn := 0
	for _, l := range lines[1 : len(lines)-1] {
		if strings.TrimSpace(l) != "" {
			drawn++
			if len(strings.TrimSpace(l)) != 40 || !strings.HasPrefix(l, strings.Repeat(" ", 40)) {
				t.Fatalf("image line %q", l)
			}
		}
	}
	if drawn != 10 {
		t.Fatalf("%d image lines, want 10:\n%s", drawn, v)
	}
	// A resize prepares the image again for the new size.
	m = send(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	if m.img.ready {
		t.Fatal("a resize should prepare the image again")
	}
}

func TestImageKeyOnlyOnImages(t *testing.T) {
	t.Parallel()
	m := imageModel(t, ImageKitty)
	m = keys(m, "down") // a cell without an image
	if m.selectedImage() != nil || m.keys.OpenImage.Enabled() {
		t.Fatal("enter should not offer to open an image on a cell without one")
	}
	m, cmd := pressKey(m, "enter")
	if m.img != nil || cmd != nil {
		t.Fatal("enter opened something on a cell without an image")
	}
	m = keys(m, "tab") // executions: no image key
	if m.keys.OpenImage.Enabled() {
		t.Fatal("the image key is on outside the notebook pane")
	}
}

func TestParseTmuxOffset(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		out        string
		rows, cols int
	}{
		{"15 0 on top\n", 16, 0},
		{"15 51 on bottom\n", 15, 51},
		{"0 51 2 top\n", 2, 51},
		{"3 4 off top\n", 3, 4},
		{"", 0, 0},
		{"x 1 on top", 0, 0},
	} {
		if r, col := parseTmuxOffset(c.out); r != c.rows || col != c.cols {
			t.Errorf("parseTmuxOffset(%q) = %d, %d, want %d, %d", c.out, r, col, c.rows, c.cols)
		}
	}
}
