package ui

import (
	"image"
	"image/color"
	"strconv"
	"strings"
)

// Sixel is encoded here rather than by a library: no sixel encoder is among
// the Go modules this project may use, and what the workbench needs is
// small. An image is flattened on white, reduced to a fixed palette of 256
// colours (a 6×7×6 colour cube of 252 plus four greys), and written band
// by band of six pixel rows, one pass per colour present in the band, with
// run-length encoding. A fixed palette costs some fidelity against a median
// cut, but it is fast, needs no second pass over the image and gives every
// frame the same colours.

// sixelPalette is the fixed palette: index r*42 + g*6 + b for the cube
// (r and b in 0..5, g in 0..6), then four greys.
var sixelPalette = func() []color.RGBA {
	p := make([]color.RGBA, 0, 256)
	for r := 0; r < 6; r++ {
		for g := 0; g < 7; g++ {
			for b := 0; b < 6; b++ {
				p = append(p, color.RGBA{uint8(r * 255 / 5), uint8(g * 255 / 6), uint8(b * 255 / 5), 255})
			}
		}
	}
	for _, v := range []uint8{0x33, 0x66, 0x99, 0xcc} {
		p = append(p, color.RGBA{v, v, v, 255})
	}
	return p
}()

// sixelIndex is the palette index nearest to a colour: the cube's nearest
// corner, or a grey when one is nearer.
func sixelIndex(r, g, b uint8) int {
	ri, gi, bi := (int(r)*5+127)/255, (int(g)*6+127)/255, (int(b)*5+127)/255
	best := ri*42 + gi*6 + bi
	c := sixelPalette[best]
	d := sqDist(c, r, g, b)
	if r == g && g == b || absDiff(r, g) < 24 && absDiff(g, b) < 24 {
		for i := 252; i < 256; i++ {
			if dd := sqDist(sixelPalette[i], r, g, b); dd < d {
				best, d = i, dd
			}
		}
	}
	return best
}

func sqDist(c color.RGBA, r, g, b uint8) int {
	dr, dg, db := int(c.R)-int(r), int(c.G)-int(g), int(c.B)-int(b)
	return dr*dr + dg*dg + db*db
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// sixelPercent is a palette channel as sixel writes it: 0 to 100.
func sixelPercent(v uint8) int { return (int(v)*100 + 127) / 255 }

// sixelQuantize maps every pixel of img, flattened on white, to its
// palette index.
func sixelQuantize(img image.Image) (idx []uint8, w, h int) {
	b := img.Bounds()
	w, h = b.Dx(), b.Dy()
	idx = make([]uint8, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, bl := flatten(img.At(b.Min.X+x, b.Min.Y+y))
			idx[y*w+x] = uint8(sixelIndex(r, g, bl))
		}
	}
	return idx, w, h
}

// encodeSixel writes img as one sixel image: DCS q, the raster size, the
// palette entries used, the bands, ST.
func encodeSixel(img image.Image) string {
	idx, w, h := sixelQuantize(img)
	if w == 0 || h == 0 {
		return ""
	}
	var used [256]bool
	for _, i := range idx {
		used[i] = true
	}
	var sb strings.Builder
	sb.Grow(w * h / 2)
	// P2=1: pixels no colour sets stay as they are (there are none: every
	// pixel has one).
	sb.WriteString("\x1bP0;1;0q\"1;1;")
	sb.WriteString(strconv.Itoa(w))
	sb.WriteByte(';')
	sb.WriteString(strconv.Itoa(h))
	for i, u := range used {
		if !u {
			continue
		}
		c := sixelPalette[i]
		sb.WriteString("#" + strconv.Itoa(i) + ";2;" + strconv.Itoa(sixelPercent(c.R)) + ";" + strconv.Itoa(sixelPercent(c.G)) + ";" + strconv.Itoa(sixelPercent(c.B)))
	}
	bits := make([]byte, w)
	for top := 0; top < h; top += 6 {
		var inBand [256]bool
		var order []int
		for y := top; y < min(top+6, h); y++ {
			for x := 0; x < w; x++ {
				if i := idx[y*w+x]; !inBand[i] {
					inBand[i] = true
					order = append(order, int(i))
				}
			}
		}
		for n, ci := range order {
			for x := range bits {
				bits[x] = 0
			}
			for y := top; y < min(top+6, h); y++ {
				for x := 0; x < w; x++ {
					if int(idx[y*w+x]) == ci {
						bits[x] |= 1 << (y - top)
					}
				}
			}
			if n > 0 {
				sb.WriteByte('$') // back to the band's start
			}
			sb.WriteString("#" + strconv.Itoa(ci))
			writeSixelRuns(&sb, bits)
		}
		if top+6 < h {
			sb.WriteByte('-') // next band
		}
	}
	sb.WriteString("\x1b\\")
	return sb.String()
}

// writeSixelRuns writes one colour's row of sixels, runs of four or more
// as !N followed by the sixel. Trailing empty sixels are left out.
func writeSixelRuns(sb *strings.Builder, bits []byte) {
	end := len(bits)
	for end > 0 && bits[end-1] == 0 {
		end--
	}
	for x := 0; x < end; {
		n := 1
		for x+n < end && bits[x+n] == bits[x] {
			n++
		}
		ch := byte(63 + bits[x])
		if n >= 4 {
			sb.WriteString("!" + strconv.Itoa(n))
			sb.WriteByte(ch)
		} else {
			for i := 0; i < n; i++ {
				sb.WriteByte(ch)
			}
		}
		x += n
	}
}
