package ui

import (
	"hash/maphash"
	"image"
	"runtime"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// Images are decoded off the UI goroutine, and only those the notebook pane
// shows. After every message the pane's visible cells are looked at; an
// image among their drawn outputs that was never decoded is found in the
// cache of decoded images (the same plot arrives again with every change of
// its cell, as new bytes) or handed to a command that decodes it. Until it
// is back the cell shows a line saying so; the message that brings it back
// redraws the cell.

// imageDecodedMsg brings back a decoded image.
type imageDecodedMsg struct {
	d   *decodedImage
	img image.Image
	err string
}

// maxDecodedImages bounds the cache of decoded images (each is at most
// maxImageWidth pixels wide): past it the cache starts over.
const maxDecodedImages = 128

// decodeSlots bounds the decodes running at once, so that a cell of 60
// plots does not take every core from the server beside the workbench.
var decodeSlots = make(chan struct{}, max(runtime.NumCPU()/2, 1))

// imageHash identifies an image by its bytes.
type imageHash struct {
	mime string
	n    int
	sum  uint64
}

// imageCache is the decoded images by their bytes.
type imageCache struct {
	seed  maphash.Seed
	m     map[imageHash]*decodedImage
	gen   uint64 // bumped when a decode lands: the notebook pane redraws
	ready bool
}

// lookup returns the decoded image for the bytes of si, made (not yet
// decoded) when there is none; fresh says it was made.
func (c *imageCache) lookup(si *shownImage) (d *decodedImage, fresh bool) {
	if !c.ready {
		c.seed, c.m, c.ready = maphash.MakeSeed(), map[imageHash]*decodedImage{}, true
	}
	k := imageHash{mime: si.mime, n: len(si.data), sum: maphash.Bytes(c.seed, si.data)}
	if d := c.m[k]; d != nil {
		return d, false
	}
	if len(c.m) >= maxDecodedImages {
		clear(c.m)
	}
	d = &decodedImage{}
	c.m[k] = d
	return d, true
}

// decodeInView starts decoding the images the notebook pane shows that are
// not decoded yet, and returns the commands doing it.
func (m *Model) decodeInView() tea.Cmd {
	if m.img != nil || m.showHelp || m.showStats || m.startView() || (m.zoomed && m.focus != FocusNotebook) {
		return nil
	}
	nb := m.st.Notebooks[m.notebook.name]
	if nb == nil || len(nb.Cells) == 0 {
		return nil
	}
	l := m.layout()
	start, end := m.notebook.visibleCells(m, nb, l.rightW-2, l.nbH-2)
	var cmds []tea.Cmd
	for i := start; i < end; i++ {
		for _, o := range drawnOutputs(nb.Cells[i].Outputs) {
			si, _ := o.Decoded.(*shownImage)
			if si == nil || si.dec != nil {
				continue
			}
			d, fresh := m.vc.images.lookup(si)
			si.dec = d
			if fresh {
				cmds = append(cmds, decodeCmd(d, si.mime, si.data))
			}
		}
	}
	return tea.Batch(cmds...)
}

// decodeCmd decodes one image in a slot of its own.
func decodeCmd(d *decodedImage, mime string, data []byte) tea.Cmd {
	return func() tea.Msg {
		decodeSlots <- struct{}{}
		defer func() { <-decodeSlots }()
		img, err := decodeImage(mime, data)
		return imageDecodedMsg{d: d, img: img, err: err}
	}
}

// imageDecoded keeps a decoded image, on the UI goroutine.
func (m *Model) imageDecoded(msg imageDecodedMsg) {
	msg.d.img, msg.d.err, msg.d.ready = msg.img, msg.err, true
	m.vc.images.gen++
}

// drawnOutputs are the outputs of a cell the notebook pane draws: the
// latest cellOutputs.
func drawnOutputs(outs []observe.Output) []observe.Output {
	if len(outs) > cellOutputs {
		return outs[len(outs)-cellOutputs:]
	}
	return outs
}
