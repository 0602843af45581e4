package ui

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// How the full-window image reaches the screen. bubbletea owns the
// terminal: anything written beside its renderer races it. So the image
// goes through the renderer, inside the frame: the view is a title line, a
// blank area and a footer line, and the footer line starts with the
// image's escape, wrapped in save cursor / move to the area / restore
// cursor. The renderer passes escape sequences through untouched (x/ansi
// gives them no width), writes a line only when it changed, and writes the
// footer after the blank lines above it, so the image is drawn once, over
// the blank area, and stays. Closing returns to the panes with a clear
// screen (tea.ClearScreen: bubbletea erases the terminal and repaints,
// which removes sixel and iTerm2 pixels), and every frame drawn after a
// kitty image starts with the kitty delete of our image id (kitty images
// live above the text and survive a clear).

// imageView is an image output opened full-window.
type imageView struct {
	seq   uint64 // which open this is; a late imageReadyMsg for another is dropped
	title string // notebook, cell, size, mime
	raw   []byte // the kernel's bytes, decoded again off the UI goroutine
	mime  string

	// Set when the image is ready for a size.
	ready      bool
	w, h       int    // the window it was prepared for
	err        string // why it cannot be drawn
	escape     string // the graphics protocol's escape, placed by cursor moves
	lines      []string
	cols, rows int // the cells the image covers
	px         string
	offset     [2]int // inside tmux: rows and columns before the pane
}

// imageReadyMsg carries an image prepared for a window size.
type imageReadyMsg struct {
	seq        uint64
	w, h       int
	err        string
	escape     string   // graphics protocols
	lines      []string // half blocks
	cols, rows int
	px         string // "640×480"
	offset     [2]int // inside tmux: rows and columns before the pane
}

// imageArea is the window less the title and footer lines, and one spare
// row: a sixel ending on the last row would scroll the screen.
func (m *Model) imageArea() (cols, rows int) {
	return m.width, max(m.height-3, 1)
}

// selectedImage is the last image output of the notebook pane's selected
// cell, or nil.
func (m *Model) selectedImage() *observe.Output {
	nb := m.st.Notebooks[m.notebook.name]
	if nb == nil || m.notebook.cell < 0 || m.notebook.cell >= len(nb.Cells) {
		return nil
	}
	outs := nb.Cells[m.notebook.cell].Outputs
	for i := len(outs) - 1; i >= 0; i-- {
		if len(outs[i].Image) > 0 {
			return &outs[i]
		}
	}
	return nil
}

// openImage opens the selected cell's image full-window.
func (m Model) openImage() (Model, tea.Cmd) {
	o := m.selectedImage()
	if o == nil {
		return m, nil
	}
	nb := m.st.Notebooks[m.notebook.name]
	m.img = &imageView{
		seq:   m.vc.nextGen(),
		title: fmt.Sprintf("%s · cell %d · %s", nb.Name, m.notebook.cell, o.MimeType),
		raw:   o.Image,
		mime:  o.MimeType,
	}
	return m, m.prepareImageCmd()
}

// prepareImageCmd decodes and encodes the open image for the window's
// size, off the UI goroutine.
func (m *Model) prepareImageCmd() tea.Cmd {
	v := m.img
	if v == nil {
		return nil
	}
	seq, raw, mime, target, tmuxOffset := v.seq, v.raw, v.mime, m.imgTarget, m.tmuxOffset
	w, h := m.width, m.height
	cols, rows := m.imageArea()
	cellW, cellH := 10, 20
	if m.cellSize != nil {
		if cw, ch := m.cellSize(); cw > 0 && ch > 0 {
			cellW, cellH = cw, ch
		}
	}
	profile := m.styles.Renderer.ColorProfile()
	return func() tea.Msg {
		msg := imageReadyMsg{seq: seq, w: w, h: h}
		img, err := decodeLimited(mime, raw)
		if err != nil {
			msg.err = err.Error()
			return msg
		}
		b := img.Bounds()
		msg.px = fmt.Sprintf("%d×%d", b.Dx(), b.Dy())
		if target.proto == ImageHalfBlocks || target.proto == "" {
			msg.lines = halfBlocks(img, cols, rows, profile)
			return msg
		}
		c, r := fitCells(b.Dx(), b.Dy(), cols, rows, cellW, cellH)
		msg.cols, msg.rows = c, r
		esc, err := encodeForTerminal(img, target.proto, c, r, cellW, cellH)
		if err != nil {
			msg.err = err.Error()
			return msg
		}
		if target.tmux && tmuxOffset != nil {
			msg.offset[0], msg.offset[1] = tmuxOffset()
		}
		msg.escape = esc
		return msg
	}
}

// maxSixelSide bounds the pixels a sixel image is encoded at.
const maxSixelSide = 1600

// encodeForTerminal encodes img for a graphics protocol to cover
// cols×rows cells. The kitty and iTerm2 protocols take a PNG, scaled down
// to the cells' pixels (never up: the terminal scales); sixel takes the
// pixels themselves, scaled to the cells.
func encodeForTerminal(img image.Image, proto ImageProtocol, cols, rows, cellW, cellH int) (string, error) {
	b := img.Bounds()
	pw, ph := min(cols*cellW, maxSixelSide), min(rows*cellH, maxSixelSide)
	switch proto {
	case ImageSixel:
		return encodeSixel(boxScale(img, max(pw, 1), max(ph, 1))), nil
	case ImageKitty, ImageITerm2:
		if b.Dx() > pw || b.Dy() > ph {
			img = boxScale(img, max(pw, 1), max(ph, 1))
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			return "", err
		}
		if proto == ImageKitty {
			return kittyEscape(buf.Bytes(), cols, rows), nil
		}
		return iterm2Escape(buf.Bytes(), cols, rows), nil
	}
	return "", fmt.Errorf("unknown image protocol %q", proto)
}

// imageReady keeps a prepared image if it is for the open one and the
// current size.
func (m *Model) imageReady(msg imageReadyMsg) {
	v := m.img
	if v == nil || v.seq != msg.seq || msg.w != m.width || msg.h != m.height {
		return
	}
	v.ready, v.w, v.h = true, msg.w, msg.h
	v.err, v.escape, v.lines, v.cols, v.rows, v.px, v.offset = msg.err, msg.escape, msg.lines, msg.cols, msg.rows, msg.px, msg.offset
	if msg.escape != "" && m.imgTarget.proto == ImageKitty {
		m.vc.kittyShown = true
	}
}

// kittyDeleteSeq is the delete of our kitty image as the terminal takes
// it: inside tmux wrapped for passthrough as the image itself was (tmux
// keeps a bare APC from the terminal, or takes it for a window title).
func (m *Model) kittyDeleteSeq() string {
	if m.imgTarget.tmux {
		return tmuxPassthrough([]string{kittyDelete})
	}
	return kittyDelete
}

// handleImageKey: esc, enter, space, z and q close the image (q does not
// quit from here: a person looking at a plot presses it to go back);
// ctrl+c quits.
func (m Model) handleImageKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	switch msg.String() {
	case "ctrl+c":
		return m, tea.Quit
	case "esc", "enter", " ", "z", "q":
		m.img = nil
		// Erase what the graphics protocol drew, and repaint the panes.
		return m, tea.ClearScreen
	}
	return m, nil
}

// imageFrame draws the full-window image: title, area, footer. The
// graphics protocol's escape starts the footer line (see above).
func (m *Model) imageFrame() string {
	s := m.styles
	v := m.img
	cols, rows := m.imageArea()
	title := " " + v.title
	if v.px != "" {
		title += " · " + v.px
	}
	title += " · " + string(m.imgTarget.proto)
	if m.imgTarget.reason != "" {
		title += " (" + m.imgTarget.reason + ")"
	}
	lines := make([]string, 0, m.height)
	lines = append(lines, fit(s.Title.Render(title), m.width))
	body := make([]string, rows)
	switch {
	case !v.ready:
		body[rows/2] = centre(s.Muted.Render("drawing…"), cols)
	case v.err != "":
		body[rows/2] = centre(s.Error.Render("cannot draw image: "+v.err), cols)
	case len(v.lines) > 0:
		top := (rows - len(v.lines)) / 2
		for i, l := range v.lines {
			body[top+i] = centre(l, cols)
		}
	}
	for _, l := range body {
		// Half-block lines carry their own colours: fit would drop
		// nothing of them (they are SGR only) but they are already the
		// width they should be.
		lines = append(lines, fit(l, m.width))
	}
	lines = append(lines, strings.Repeat(" ", m.width)) // the spare row
	footer := fit(s.Muted.Render(" esc, enter or q closes the image"), m.width)
	if v.ready && v.escape != "" {
		// Row and column of the area's top left cell, centred.
		row := 2 + (rows-v.rows)/2
		col := 1 + (cols-v.cols)/2
		footer = placeImage(v.escape, row, col, m.imgTarget.tmux, v.offset) + footer
	}
	lines = append(lines, footer)
	return strings.Join(lines, "\n")
}

// placeImage is the image's escape drawn with its top left cell at row,
// col of the window (1-based), the cursor saved and restored around it.
// Inside tmux the escapes go through passthrough to the terminal around
// tmux, and the cursor moves there, to the pane's place in that terminal
// (offset), in the same passthrough as the image's last escape (the one
// that places it): tmux does not move that terminal's cursor to its own
// before passing a sequence on, and resets it after each one, so a move
// made outside the passthrough, or in one of its own, does not hold.
func placeImage(esc string, row, col int, tmux bool, offset [2]int) string {
	if !tmux {
		return "\x1b7" + fmt.Sprintf("\x1b[%d;%dH", row, col) + esc + "\x1b8"
	}
	seqs := splitEscapes(esc)
	last := len(seqs) - 1
	seqs[last] = "\x1b7" + fmt.Sprintf("\x1b[%d;%dH", row+offset[0], col+offset[1]) + seqs[last] + "\x1b8"
	return tmuxPassthrough(seqs)
}

// centre pads a line on the left to centre it in w cells.
func centre(l string, w int) string {
	lw := ansi.StringWidth(l)
	if lw >= w {
		return l
	}
	return strings.Repeat(" ", (w-lw)/2) + l
}
