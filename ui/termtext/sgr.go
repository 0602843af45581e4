package termtext

import "strings"

// Rendered output keeps its colours, but not the trick of drawing text in
// its own background colour (ESC [30;40m): colours follows what the SGRs of
// one text leave in effect, and when a foreground and a background set
// explicitly come out equal (reverse video counted), the sanitizer puts
// both back to the terminal's own right after that SGR. A colour only the
// terminal knows (its default background) cannot be compared, so a text in
// black on a terminal whose background is black is the one case left.

// colourFix is what follows an SGR that made text invisible: the default
// foreground and background.
const colourFix = "\x1b[39;49m"

// A colour: 0 is the terminal's own; palette index N (however it was set:
// 34, 94, 38;5;4) is paletteTag|N, a true colour rgbTag|R<<16|G<<8|B.
const (
	paletteTag = 1 << 24
	rgbTag     = 2 << 24
)

// colours is the foreground, background and reverse video in effect.
type colours struct {
	fg, bg uint32
	rev    bool
}

// params iterates over the ';'-separated parameters of an SGR without
// allocating.
type params struct{ rest string }

func (p *params) next() (string, bool) {
	if p.rest == "" {
		return "", false
	}
	f, rest, _ := strings.Cut(p.rest, ";")
	p.rest = rest
	return f, true
}

// number reads a parameter; false when it is not one.
func number(s string) (uint32, bool) {
	if len(s) > 8 {
		return 0, false
	}
	var n uint32
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + uint32(s[i]-'0')
	}
	return n, true
}

// apply updates c with the parameters of one SGR (between ESC [ and m).
func (c *colours) apply(sgr string) {
	if sgr == "" {
		*c = colours{}
		return
	}
	ps := params{sgr}
	for {
		p, ok := ps.next()
		if !ok {
			return
		}
		if strings.IndexByte(p, ':') >= 0 {
			// 38:5:N or 38:2::R:G:B, one extended colour in one parameter.
			which, sub, _ := strings.Cut(p, ":")
			sp := colonParams{sub}
			c.extended(which, sp.next)
			continue
		}
		n, ok := number(p)
		if !ok {
			continue
		}
		switch {
		case n == 0:
			*c = colours{}
		case n == 7:
			c.rev = true
		case n == 27:
			c.rev = false
		case n >= 30 && n <= 37:
			c.fg = paletteTag | (n - 30)
		case n >= 90 && n <= 97:
			c.fg = paletteTag | (n - 90 + 8)
		case n == 39:
			c.fg = 0
		case n >= 40 && n <= 47:
			c.bg = paletteTag | (n - 40)
		case n >= 100 && n <= 107:
			c.bg = paletteTag | (n - 100 + 8)
		case n == 49:
			c.bg = 0
		case n == 38 || n == 48:
			c.extended(p, ps.next)
		}
	}
}

// colonParams iterates over ':'-separated sub-parameters.
type colonParams struct{ rest string }

func (p *colonParams) next() (string, bool) {
	if p.rest == "" {
		return "", false
	}
	f, rest, found := strings.Cut(p.rest, ":")
	p.rest = rest
	if !found {
		p.rest = ""
	}
	return f, true
}

// extended reads an extended colour for which (38 or 48): 5;N or 2;R;G;B
// (the colon form may have an empty colour space before R).
func (c *colours) extended(which string, next func() (string, bool)) {
	kind, _ := next()
	var v uint32
	switch kind {
	case "5":
		s, _ := next()
		n, ok := number(s)
		if !ok || n > 255 {
			return
		}
		v = paletteTag | n
	case "2":
		var rgb [3]uint32
		for i := 0; i < 3; i++ {
			s, ok := next()
			if !ok {
				return
			}
			if s == "" && i == 0 {
				i-- // the colon form's colour space, left empty
				continue
			}
			n, ok := number(s)
			if !ok || n > 255 {
				return
			}
			rgb[i] = n
		}
		v = rgbTag | rgb[0]<<16 | rgb[1]<<8 | rgb[2]
	default:
		return
	}
	if which == "38" {
		c.fg = v
	} else if which == "48" {
		c.bg = v
	}
}

// hidden reports whether text drawn now is in its background's colour.
func (c colours) hidden() bool {
	fg, bg := c.fg, c.bg
	if c.rev {
		fg, bg = bg, fg
	}
	return fg != 0 && fg == bg
}
