package ui

import (
	"image"
	"image/color"
	"strconv"
	"strings"
	"sync"

	"github.com/muesli/termenv"
)

// shrinkImage reduces img to at most maxW pixels wide (keeping its aspect)
// by averaging boxes of pixels. Smaller images are returned as they are.
func shrinkImage(img image.Image, maxW int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= maxW || w == 0 || h == 0 {
		return img
	}
	nw := maxW
	nh := max(1, h*nw/w)
	return boxScale(img, nw, nh)
}

// boxScale resamples img to w×h, averaging the source pixels each target
// pixel covers (nearest pixel when enlarging).
func boxScale(img image.Image, w, h int) *image.RGBA {
	b := img.Bounds()
	sw, sh := b.Dx(), b.Dy()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		y0 := b.Min.Y + y*sh/h
		y1 := max(y0+1, b.Min.Y+(y+1)*sh/h)
		for x := 0; x < w; x++ {
			x0 := b.Min.X + x*sw/w
			x1 := max(x0+1, b.Min.X+(x+1)*sw/w)
			var r, g, bl, a, n uint32
			for yy := y0; yy < y1; yy++ {
				for xx := x0; xx < x1; xx++ {
					cr, cg, cb, ca := img.At(xx, yy).RGBA()
					r, g, bl, a, n = r+cr, g+cg, bl+cb, a+ca, n+1
				}
			}
			out.SetRGBA(x, y, color.RGBA{uint8(r / n >> 8), uint8(g / n >> 8), uint8(bl / n >> 8), uint8(a / n >> 8)})
		}
	}
	return out
}

// flatten composes a pixel over a white page, the way notebooks show
// transparent plots.
func flatten(c color.Color) (r, g, b uint8) {
	cr, cg, cb, ca := c.RGBA()
	white := 0xffff - ca
	return uint8((cr + white) >> 8), uint8((cg + white) >> 8), uint8((cb + white) >> 8)
}

// imageArt keeps an image drawn in characters for the size and profile it
// was drawn at. Drawing converts every pixel to the terminal's palette (on a
// 256-colour terminal a nearest-colour search per pixel), which is far too
// costly to repeat on every frame: a plot shown beside a flooding execution
// made the image most of the workbench's CPU.
type imageArt struct {
	width, rows int
	profile     termenv.Profile
	lines       []string
}

// draw returns img drawn by halfBlocks, from the cache when the size and
// profile have not changed.
func (a *imageArt) draw(img image.Image, width, maxRows int, profile termenv.Profile) []string {
	if a.lines == nil || a.width != width || a.rows != maxRows || a.profile != profile {
		a.width, a.rows, a.profile = width, maxRows, profile
		a.lines = halfBlocks(img, width, maxRows, profile)
		if a.lines == nil {
			a.lines = []string{}
		}
	}
	return a.lines
}

// asciiRamp shades pixels by luminance when the terminal shows no colour.
const asciiRamp = "@%#*+=-:. "

// halfBlocks draws img in at most width columns and maxRows rows of
// Unicode upper half blocks: each character is two pixels, the top one as
// foreground and the bottom one as background. Colours go through the
// terminal's profile; without colour (NO_COLOR) pixels become a luminance
// ramp of ASCII characters. The pixel colours come from the image, not from
// the palette, so this is the one place colour escapes are written by hand.
func halfBlocks(img image.Image, width, maxRows int, profile termenv.Profile) []string {
	if img == nil || width <= 0 || maxRows <= 0 {
		return nil
	}
	b := img.Bounds()
	sw, sh := b.Dx(), b.Dy()
	if sw == 0 || sh == 0 {
		return nil
	}
	w := min(width, sw)
	// A character cell is about twice as tall as wide, and holds two pixel
	// rows, so pixel rows = 2 × character rows keeps the aspect.
	rows := max(1, (sh*w/sw+1)/2)
	if rows > maxRows {
		rows = maxRows
		w = max(1, min(width, sw*rows*2/sh))
	}
	scaled := boxScale(img, w, rows*2)
	lines := make([]string, 0, rows)
	var sb strings.Builder
	for y := 0; y < rows; y++ {
		sb.Reset()
		for x := 0; x < w; x++ {
			tr, tg, tb := flatten(scaled.At(x, 2*y))
			br, bg, bb := flatten(scaled.At(x, 2*y+1))
			switch profile {
			case termenv.Ascii:
				lum := (299*(int(tr)+int(br)) + 587*(int(tg)+int(bg)) + 114*(int(tb)+int(bb))) / 2000
				sb.WriteByte(asciiRamp[lum*(len(asciiRamp)-1)/255])
				continue
			case termenv.TrueColor:
				sb.WriteString("\x1b[38;2;")
				writeRGB(&sb, tr, tg, tb)
				sb.WriteString(";48;2;")
				writeRGB(&sb, br, bg, bb)
				sb.WriteString("m▀")
			default:
				sb.WriteString("\x1b[")
				sb.WriteString(paletteSeq(profile, tr, tg, tb, false))
				sb.WriteByte(';')
				sb.WriteString(paletteSeq(profile, br, bg, bb, true))
				sb.WriteString("m▀")
			}
		}
		if profile != termenv.Ascii {
			sb.WriteString("\x1b[0m")
		}
		lines = append(lines, sb.String())
	}
	return lines
}

// paletteSeqs remembers the escape sequence of each colour on a palette
// terminal: finding the nearest of 256 colours (termenv compares them in
// HSLuv) costs microseconds a pixel, and the pixels of plots share few
// colours. The key is the profile, fore- or background, and the colour.
var paletteSeqs = struct {
	sync.Mutex
	m map[uint64]string
}{m: map[uint64]string{}}

// paletteSeqsMax bounds the memory: past it the memory starts over.
const paletteSeqsMax = 1 << 16

// paletteSeq is profile.FromColor(r, g, b).Sequence(bg), remembered.
func paletteSeq(profile termenv.Profile, r, g, b uint8, bg bool) string {
	key := uint64(profile)<<32 | uint64(r)<<16 | uint64(g)<<8 | uint64(b)
	if bg {
		key |= 1 << 24
	}
	paletteSeqs.Lock()
	seq, ok := paletteSeqs.m[key]
	paletteSeqs.Unlock()
	if ok {
		return seq
	}
	seq = profile.FromColor(color.RGBA{r, g, b, 0xff}).Sequence(bg)
	paletteSeqs.Lock()
	if len(paletteSeqs.m) >= paletteSeqsMax {
		clear(paletteSeqs.m)
	}
	paletteSeqs.m[key] = seq
	paletteSeqs.Unlock()
	return seq
}

func writeRGB(sb *strings.Builder, r, g, b uint8) {
	sb.WriteString(strconv.Itoa(int(r)))
	sb.WriteByte(';')
	sb.WriteString(strconv.Itoa(int(g)))
	sb.WriteByte(';')
	sb.WriteString(strconv.Itoa(int(b)))
}

func itoa(n int) string { return strconv.Itoa(n) }

// maxImageWidth is how many pixels wide decoded images are reduced to.
const maxImageWidth = 160

// shownImage is an output's image as the workbench state keeps it: the
// bytes, until the notebook pane shows it; decoded then, off the UI
// goroutine (decode.go). The state keeps it in Output.Decoded, one pointer
// shared by the copies of the output.
type shownImage struct {
	mime string
	data []byte
	dec  *decodedImage // set once the image was in view; shared by equal images
}

// decodedImage is an image decoded and reduced once, and drawn in
// characters once per size.
type decodedImage struct {
	ready bool        // the decode is over (img or err is set)
	img   image.Image // nil when the image could not be decoded
	err   string      // why it could not
	art   imageArt
}

// decodeShown is the workbench state's image decoder: it only keeps the
// bytes. Decoding waits until the image is in view: a cell that shows 60
// plots sends every one of them again with each new one, and decoding
// them all as they arrived held the UI goroutine (held calls undecidable)
// for tens of seconds.
func decodeShown(mime string, data []byte) any {
	return &shownImage{mime: mime, data: data}
}

// decodeImage decodes a PNG, JPEG or GIF within decodeLimited's limits
// and reduces it to maxImageWidth pixels wide, so that drawing it on every
// frame stays cheap.
func decodeImage(mime string, data []byte) (image.Image, string) {
	img, err := decodeLimited(mime, data)
	if err != nil {
		return nil, err.Error()
	}
	return shrinkImage(img, maxImageWidth), ""
}
