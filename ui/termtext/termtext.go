// Package termtext is the one sanitizer for terminal text: every string that
// came from outside the workbench (outputs, sources, names, tool arguments and
// results, error texts, a feed's or a recording's contents) passes through it
// before a pane draws it, so that nothing drawn can drive the person's
// terminal.
//
// What it keeps: printable text (any valid UTF-8 outside the C1 range), tab,
// newline, and SGR sequences (ESC [ digits ; : m), which only set colour and
// style: Jupyter tracebacks are coloured and are shown coloured.
//
// What it drops, whole:
//   - OSC, DCS, SOS, PM and APC strings (clipboard, window title, hyperlinks,
//     notifications, shell integration, terminal queries, image protocols).
//     A string ends at ST (ESC \), BEL, CAN or SUB; it also ends at a
//     newline, which is kept, so a string left open hides at most the rest
//     of its line rather than everything after it.
//   - every CSI that is not a well-formed SGR (cursor movement, erase, scroll
//     regions, private modes such as the alternate screen or mouse
//     reporting), and an SGR that is malformed or unterminated.
//   - every other escape sequence (ESC c, ESC 7, ESC ( B, ...), and a lone
//     ESC.
//   - C0 controls other than tab and newline, DEL, and the 8-bit C1 controls
//     U+0080–U+009F, whether UTF-8 encoded or raw bytes 0x80–0x9F. A C1
//     introducer (0x9B CSI, 0x9D OSC) is dropped alone: what follows it is
//     shown as the text it is.
//   - carriage return. The engine's output model applies \r (and \b) the
//     way a terminal would before any text reaches here, so a lone \r is
//     left only in text that bypassed it; drawing it would move the cursor,
//     so it is dropped: "a\rb" shows "ab", CRLF shows as LF.
//
// That is the mode for rendered output. Source text (code, cell sources,
// diffs, tool arguments, names) goes through Code, Name or JSONCode instead
// (code.go), which drop nothing and style nothing: every hidden character is
// shown as a marker, and a lone \r breaks the line as Python reads it.
//
// Invalid UTF-8 becomes U+FFFD (except raw C1 bytes, dropped as above). An
// SGR that leaves text in its background's colour (ESC [30;40m) is kept, and
// followed by one that gives both colours back to the terminal (sgr.go).
//
// Sanitize before cutting or wrapping: the sanitizer sees whole sequences, and
// what it returns can be cut anywhere except inside an SGR, which
// ansi.Truncate and the wrappers step over.
//
// The sanitizer is a hand-written state machine over bytes, with no regular
// expressions; it returns its input unchanged, without allocating, when the
// input is already clean.
package termtext

import (
	"strings"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07
	can = 0x18
	sub = 0x1a
	del = 0x7f
)

// replacement is U+FFFD in UTF-8.
const replacement = "\uFFFD"

// String returns s fit to draw: SGR kept, every other escape sequence and
// control dropped, invalid UTF-8 replaced. It returns s itself when nothing
// had to change.
func String(s string) string {
	// kept is where the run of bytes copied unchanged starts; the builder
	// is used only from the first change on.
	var b strings.Builder
	dirty := false
	kept := 0
	// drop ends the unchanged run before s[i:i+n] and skips those bytes.
	drop := func(i, n int) {
		if !dirty {
			dirty = true
			b.Grow(len(s))
		}
		b.WriteString(s[kept:i])
		kept = i + n
	}
	var col colours
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < del || c == '\n' || c == '\t' {
			i++
			continue
		}
		switch {
		case c == esc:
			n, keep := escape(s, i)
			if !keep {
				drop(i, n)
			} else if col.apply(s[i+2 : i+n-1]); col.hidden() && !strings.HasPrefix(s[i+n:], colourFix) {
				// Text in its background's colour: both back to the
				// terminal's (sgr.go).
				drop(i+n, 0)
				b.WriteString(colourFix)
				col.fg, col.bg = 0, 0
			}
			i += n
		case c < 0x80: // the other C0 controls and DEL
			drop(i, 1)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				drop(i, 1)
				if c > 0x9f {
					b.WriteString(replacement)
				}
			case r <= 0x9f: // U+0080–U+009F
				drop(i, n)
			}
			i += n
		}
	}
	if !dirty {
		return s
	}
	b.WriteString(s[kept:])
	return b.String()
}

// Clean reports whether String(s) == s, without building anything.
func Clean(s string) bool {
	var col colours
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < del || c == '\n' || c == '\t' {
			i++
			continue
		}
		switch {
		case c == esc:
			n, keep := escape(s, i)
			if !keep {
				return false
			}
			if col.apply(s[i+2 : i+n-1]); col.hidden() && !strings.HasPrefix(s[i+n:], colourFix) {
				return false
			}
			i += n
		case c < 0x80:
			return false
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 || r <= 0x9f {
				return false
			}
			i += n
		}
	}
	return true
}

// escape reads the escape sequence starting with the ESC at s[i]. It returns
// how many bytes the sequence takes and whether it is a well-formed SGR to
// keep. A sequence broken off by an unexpected byte ends before that byte,
// which the caller then reads as text.
func escape(s string, i int) (n int, keep bool) {
	j := i + 1
	if j == len(s) {
		return 1, false
	}
	switch s[j] {
	case '[':
		return csi(s, i)
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC
		return controlString(s, i), false
	}
	// ESC, intermediates 0x20–0x2F, a final byte 0x30–0x7E.
	k := j
	for k < len(s) && s[k] >= 0x20 && s[k] <= 0x2f {
		k++
	}
	if k < len(s) && s[k] >= 0x30 && s[k] <= 0x7e {
		k++
	}
	return k - i, false
}

// csi reads ESC [ parameters intermediates final. Only an SGR (final 'm',
// parameters of digits, ';' and ':' only) is kept.
func csi(s string, i int) (n int, keep bool) {
	sgr := true
	for k := i + 2; k < len(s); k++ {
		c := s[k]
		switch {
		case c >= '0' && c <= ';': // digits, ':' and ';'
		case c >= 0x3c && c <= 0x3f: // private markers < = > ?
			sgr = false
		case c >= 0x20 && c <= 0x2f: // intermediates
			sgr = false
		case c >= 0x40 && c <= 0x7e: // final byte
			return k + 1 - i, sgr && c == 'm' && !conceals(s[i+2:k])
		default: // a control or a non-ASCII byte breaks the sequence off
			return k - i, false
		}
	}
	return len(s) - i, false // unterminated
}

// conceals reports whether SGR parameters turn on concealed text (8), which
// would draw text, say the code of a call held for approval, invisibly.
// Such an SGR is dropped whole. The 8 of an extended colour (38;5;8,
// 48;2;8;8;8) is a colour, not concealment.
func conceals(params string) bool {
	skip := 0 // parameters still belonging to an extended colour
	extended := false
	for rest, more := params, true; more; {
		var p string
		p, rest, more = strings.Cut(rest, ";")
		switch {
		case skip > 0:
			skip--
		case extended:
			// 38;5;INDEX or 38;2;R;G;B
			extended = false
			switch p {
			case "5":
				skip = 1
			case "2":
				skip = 3
			}
		case strings.Contains(p, ":"):
			// colon sub-parameters: one extended colour in one parameter
		default:
			switch strings.TrimLeft(p, "0") {
			case "8":
				return true
			case "38", "48", "58":
				extended = true
			}
		}
	}
	return false
}

// controlString reads an OSC, DCS, SOS, PM or APC string from its ESC to
// its terminator: ST (ESC \), BEL, CAN or SUB, taken with it; a newline or
// another ESC, left to the caller.
func controlString(s string, i int) int {
	for k := i + 2; k < len(s); k++ {
		switch s[k] {
		case bel, can, sub:
			return k + 1 - i
		case '\n':
			return k - i
		case esc:
			if k+1 < len(s) && s[k+1] == '\\' {
				return k + 2 - i
			}
			return k - i
		}
	}
	return len(s) - i
}
