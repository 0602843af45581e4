package output

import (
	"strings"
	"unicode/utf8"
)

// Terminal applies what a terminal does with carriage returns and
// backspaces to text, so that a progress bar redrawn with "\r" shows its last
// state and "\r\n" is a newline:
//
//   - "\n" ends the line;
//   - "\r" moves back to the start of the line, and what follows overwrites
//     it one character at a time (what is not overwritten stays);
//   - "\b" moves back one character (never past the start of the line).
//
// A character is a rune, as in Jupyter's frontends (a wide character takes
// one place, not two). Escape sequences (colours) take no place: they stay
// attached to the character they precede, so overwriting never breaks one.
// The result contains no "\r" and no "\b", so Terminal(Terminal(s)) ==
// Terminal(s), and stripping the escapes before or after gives the same
// text.
func Terminal(s string) string {
	if !strings.ContainsAny(s, "\r\b") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	var sc Screen
	sc.Write(s, func(line string) {
		b.WriteString(line)
		b.WriteByte('\n')
	})
	b.WriteString(sc.Line())
	return b.String()
}

// Screen applies Terminal's rules to text that arrives in pieces (the
// messages of one stream), where a "\r" at the end of one piece acts on the
// next. Write hands each completed line to emit; Line is the line being
// written. The zero value is ready to use.
type Screen struct {
	// Max bounds the bytes kept of the line being written (0: no bound):
	// a stream that never ends a line cannot grow it forever. What goes
	// past the bound is dropped.
	Max int

	plain []byte // the line while nothing moved the cursor back
	cells []cell // the line once something did (nil otherwise)
	tail  string // escapes written after the last character
	col   int    // cursor, in cells (cells mode only)
	dirty bool   // cells mode
}

// cell is one character of a line with the escape sequences written just
// before it.
type cell struct {
	pre string
	ch  string
}

// Write feeds text to the screen. Completed lines go to emit, in order; a
// line is a fresh string or a substring of text, never retained.
func (s *Screen) Write(text string, emit func(line string)) {
	for len(text) > 0 {
		i := strings.IndexAny(text, "\n\r\b")
		if i < 0 {
			s.put(text)
			return
		}
		seg := text[:i]
		switch text[i] {
		case '\n':
			if !s.dirty && len(s.plain) == 0 && s.tail == "" {
				// The common case: a whole line in one piece.
				emit(s.bound(seg))
			} else {
				s.put(seg)
				emit(s.take())
			}
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				// "\r\n" is a newline wherever the cursor is.
				s.put(seg)
				emit(s.take())
				i++
				break
			}
			s.put(seg)
			s.toCells()
			s.col = 0
		case '\b':
			s.put(seg)
			s.toCells()
			if s.col > 0 {
				s.col--
			}
		}
		text = text[i+1:]
	}
}

// Line returns the line being written, as a terminal would show it.
func (s *Screen) Line() string {
	if !s.dirty {
		return string(s.plain) + s.tail
	}
	var b strings.Builder
	for _, c := range s.cells {
		b.WriteString(c.pre)
		b.WriteString(c.ch)
	}
	b.WriteString(s.tail)
	return b.String()
}

// take returns the line and starts a new one.
func (s *Screen) take() string {
	l := s.Line()
	s.plain, s.cells, s.tail, s.col, s.dirty = s.plain[:0], nil, "", 0, false
	return l
}

func (s *Screen) bound(l string) string {
	if s.Max > 0 && len(l) > s.Max {
		return strings.ToValidUTF8(l[:s.Max], "")
	}
	return l
}

// put writes text (no "\n", "\r" or "\b") at the cursor.
func (s *Screen) put(text string) {
	if text == "" {
		return
	}
	if !s.dirty {
		if s.Max > 0 && len(s.plain)+len(text) > s.Max {
			text = strings.ToValidUTF8(text[:max(s.Max-len(s.plain), 0)], "")
		}
		s.plain = append(s.plain, text...)
		return
	}
	for len(text) > 0 {
		if n := escapeLen(text); n > 0 {
			s.tail += text[:n]
			text = text[n:]
			continue
		}
		_, n := utf8.DecodeRuneInString(text)
		c := cell{pre: s.tail, ch: text[:n]}
		s.tail = ""
		text = text[n:]
		if s.col < len(s.cells) {
			// The escapes of the overwritten character stay: a colour
			// set there still applies to what follows it.
			c.pre = s.cells[s.col].pre + c.pre
			s.cells[s.col] = c
		} else if s.Max == 0 || len(s.cells) < s.Max {
			s.cells = append(s.cells, c)
		} else {
			continue
		}
		s.col++
	}
}

// toCells turns the line into cells, the cursor at its end, before
// something moves the cursor back.
func (s *Screen) toCells() {
	if s.dirty {
		return
	}
	s.dirty = true
	text := string(s.plain) + s.tail
	s.plain, s.tail = s.plain[:0], ""
	s.cells = make([]cell, 0, len(text))
	s.col = 0
	s.put(text)
}

// escapeLen is the length of the escape sequence text starts with, or 0
// when it does not start with one: CSI (ESC [ ... final), OSC and the other
// string sequences (ESC ] ... BEL or ESC \), or ESC and one character.
func escapeLen(text string) int {
	if len(text) < 2 || text[0] != 0x1b {
		return 0
	}
	switch text[1] {
	case '[':
		for i := 2; i < len(text); i++ {
			if c := text[i]; c >= 0x40 && c <= 0x7e {
				return i + 1
			}
		}
		return len(text)
	case ']', 'P', 'X', '^', '_':
		for i := 2; i < len(text); i++ {
			if text[i] == 0x07 {
				return i + 1
			}
			if text[i] == 0x1b && i+1 < len(text) && text[i+1] == '\\' {
				return i + 2
			}
		}
		return len(text)
	}
	return 2
}
