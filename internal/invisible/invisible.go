// Package invisible names the characters that a terminal or a dialog draws
// as nothing, or that move or reorder what is drawn around them: control
// characters (C0, DEL, C1, ESC), bidirectional controls, zero-width and
// other format characters, line and paragraph separators, variation
// selectors, the "filler" letters that render blank, and private-use
// characters (whose glyph, if any, is the font's choice). Text a person
// approves (the code of a held call, a cell's source, a tool's arguments)
// must show every one of them, so a reviewer reads what will run: Show
// spells each as a visible marker (⟨ESC⟩, ⟨U+202E⟩) and Inspect counts
// them, so the call can be flagged.
//
// It is its own package because two readers need the same rule: the
// workbench (ui/termtext) and the approval question put to a host's user
// through elicitation (mcp).
package invisible

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Class is why a character is shown as a marker.
type Class int

// Classes of hidden characters.
const (
	Visible   Class = iota
	Control         // C0 (but tab and newline), DEL, C1; ESC among them
	Bidi            // reorders the text drawn around it
	ZeroWidth       // draws nothing: zero-width and other format characters, fillers, selectors
	Separator       // U+2028, U+2029: a line break to some readers, not to others
	Private         // a private-use character: no agreed glyph, drawn as a font decides
)

func (c Class) String() string {
	switch c {
	case Control:
		return "control"
	case Bidi:
		return "bidirectional control"
	case ZeroWidth:
		return "zero-width or format"
	case Separator:
		return "line or paragraph separator"
	case Private:
		return "private use"
	}
	return "visible"
}

// c0Names are the names of the C0 controls, by value.
var c0Names = [32]string{"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
	"DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US"}

// ClassOf says whether r is shown as a marker, and why. Tab and newline are
// visible (they lay text out); carriage return is a control (Show breaks
// the line at a lone one, as Python does).
func ClassOf(r rune) Class {
	switch {
	case r == '\t' || r == '\n':
		return Visible
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return Control
	case r < 0xa0:
		return Visible
	case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return Bidi
	case r == 0x2028 || r == 0x2029:
		return Separator
	case r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 || r == 0x034f || r == 0x17b4 || r == 0x17b5,
		r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef,
		unicode.Is(unicode.Cf, r):
		return ZeroWidth
	case unicode.Is(unicode.Co, r):
		return Private
	}
	return Visible
}

// Name is the marker's text for r, without the brackets: "ESC", "CR",
// "DEL", "U+202E".
func Name(r rune) string {
	switch {
	case r < 0x20:
		return c0Names[r]
	case r == 0x7f:
		return "DEL"
	}
	return fmt.Sprintf("U+%04X", r)
}

// Marker is how Show draws r: ⟨ESC⟩, ⟨U+202E⟩.
func Marker(r rune) string { return "⟨" + Name(r) + "⟩" }

// Show returns s with every hidden character spelled as its marker, so that
// nothing in it can be drawn invisibly or drive a terminal: ESC [31m is
// shown as the text ⟨ESC⟩[31m. A lone carriage return is a line break to
// Python's tokenizer, so it is shown as one: ⟨CR⟩ then a new line; CRLF is
// a newline. Invalid UTF-8 bytes are shown as ⟨0xFF⟩. Only tab and newline
// are left as they are. Show returns s itself when nothing changes.
func Show(s string) string { return show(s, false) }

// ShowLine is Show for text drawn on one line (a name, a short argument):
// newlines are shown as ⟨LF⟩ and carriage returns as ⟨CR⟩.
func ShowLine(s string) string { return show(s, true) }

func show(s string, oneLine bool) string {
	var b strings.Builder
	dirty := false
	kept := 0
	mark := func(i, n int, text string) {
		if !dirty {
			dirty = true
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[kept:i])
		b.WriteString(text)
		kept = i + n
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' && !oneLine {
			i++
			continue
		}
		if c == '\r' && !oneLine {
			if i+1 < len(s) && s[i+1] == '\n' {
				mark(i, 1, "") // CRLF: the newline alone
			} else {
				mark(i, 1, "⟨CR⟩\n")
			}
			i++
			continue
		}
		if c < 0x80 {
			mark(i, 1, Marker(rune(c)))
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			mark(i, 1, fmt.Sprintf("⟨0x%02X⟩", c))
		case ClassOf(r) != Visible:
			mark(i, n, Marker(r))
		}
		i += n
	}
	if !dirty {
		return s
	}
	b.WriteString(s[kept:])
	return b.String()
}

// Report counts the hidden characters of a text.
type Report struct {
	// Counts by marker name ("ESC", "U+202E"), and the class of each.
	Counts  map[string]int
	Classes map[string]Class
	// LoneCR counts carriage returns not followed by a newline: Python
	// reads each as a line break, a terminal as a return to the line's
	// start that lets the rest overwrite what came before.
	LoneCR int
	// FirstLine is the line (from 1, as Show lays the text out) of the
	// first hidden character.
	FirstLine int
	// Invalid counts bytes that are not UTF-8.
	Invalid int
}

// Any reports whether the text held anything hidden.
func (r Report) Any() bool { return len(r.Counts) > 0 || r.LoneCR > 0 || r.Invalid > 0 }

// Total is how many hidden characters there were, lone carriage returns
// and invalid bytes included.
func (r Report) Total() int {
	n := r.LoneCR + r.Invalid
	for _, c := range r.Counts {
		n += c
	}
	return n
}

// Add merges o into r (several texts of one call).
func (r *Report) Add(o Report) {
	if !o.Any() {
		return
	}
	if r.FirstLine == 0 {
		r.FirstLine = o.FirstLine
	}
	r.LoneCR += o.LoneCR
	r.Invalid += o.Invalid
	for k, v := range o.Counts {
		if r.Counts == nil {
			r.Counts, r.Classes = map[string]int{}, map[string]Class{}
		}
		r.Counts[k] += v
		r.Classes[k] = o.Classes[k]
	}
}

// Inspect counts the hidden characters of s, laid out as Show lays it out.
func Inspect(s string) Report {
	var r Report
	line := 1
	note := func(name string, c Class) {
		if r.Counts == nil {
			r.Counts, r.Classes = map[string]int{}, map[string]Class{}
		}
		r.Counts[name]++
		r.Classes[name] = c
		if r.FirstLine == 0 {
			r.FirstLine = line
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
			continue
		case c == '\r':
			if i+1 >= len(s) || s[i+1] != '\n' {
				r.LoneCR++
				if r.FirstLine == 0 {
					r.FirstLine = line
				}
				line++
			}
			i++
			continue
		case c >= 0x20 && c < 0x7f || c == '\t':
			i++
			continue
		case c < 0x80:
			note(Name(rune(c)), Control)
			i++
			continue
		}
		ch, n := utf8.DecodeRuneInString(s[i:])
		if ch == utf8.RuneError && n == 1 {
			r.Invalid++
			if r.FirstLine == 0 {
				r.FirstLine = line
			}
		} else if cl := ClassOf(ch); cl != Visible {
			note(Name(ch), cl)
		}
		i += n
	}
	return r
}

// Summary words the report in one line: "2 ESC, 1 U+202E (bidirectional
// control), 1 lone carriage return". Names are listed in order.
func (r Report) Summary() string {
	names := make([]string, 0, len(r.Counts))
	for k := range r.Counts {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		p := fmt.Sprintf("%d × %s", r.Counts[k], k)
		if c := r.Classes[k]; c != Control {
			p += " (" + c.String() + ")"
		}
		parts = append(parts, p)
	}
	if r.LoneCR > 0 {
		p := "1 lone carriage return"
		if r.LoneCR > 1 {
			p = fmt.Sprintf("%d lone carriage returns", r.LoneCR)
		}
		parts = append(parts, p)
	}
	if r.Invalid > 0 {
		parts = append(parts, fmt.Sprintf("%d byte(s) not UTF-8", r.Invalid))
	}
	return strings.Join(parts, ", ")
}
