package ui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/invisible"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// The code of a held call as its card draws it: every line, numbered,
// syntax-coloured, long lines wrapped (never cut), and nothing a person
// could miss. The code reaches here from the sanitizer's code mode, where
// every hidden character is a marker (⟨ESC⟩, ⟨U+202E⟩) and a lone \r has
// broken its line; the markers are drawn in a style of their own. What
// would push the rest of the code out of sight is folded into one line
// that says what it stands for: a run of blank lines ("⋯ 3000 blank
// lines"), a run of spaces inside a line ("⟨17000 spaces⟩").

// Folding bounds: a run of at least blankRun blank lines becomes one line,
// a run of at least spaceRun spaces and tabs within a line one marker.
const (
	blankRun = 3
	spaceRun = 48
)

// placeholderBase is the first private-use rune standing for a marker while
// the code goes through the lexer: one rune keeps a marker within one token,
// so it is styled whole. The sanitizer's code mode shows every private-use
// character of the code itself as a marker, so none is left to collide.
const placeholderBase = 0xE000

// codeView is a held call's code laid out for one width.
type codeView struct {
	lines  []string // drawn lines, gutter included
	source int      // lines of the code
	folded int      // source lines folded into "blank lines" rows
}

// drawCode lays out code (in the sanitizer's code mode) at width w.
func drawCode(code, language string, w int, s *theme.Styles) codeView {
	src := strings.Split(strings.TrimSuffix(code, "\n"), "\n")
	if code == "" {
		src = nil
	}
	// Markers, and long runs of spaces, become placeholders for the lexer.
	var marks []string
	index := map[string]rune{}
	place := func(text string) string {
		r, ok := index[text]
		if !ok && len(marks) < 0x1900 {
			r = rune(placeholderBase + len(marks))
			index[text] = r
			marks = append(marks, text)
			ok = true
		}
		if !ok {
			return text
		}
		return string(r)
	}
	prepared := make([]string, len(src))
	for i, l := range src {
		prepared[i] = placeMarkers(foldSpaces(l, place), place)
	}
	render := func(st lipgloss.Style, part string) string {
		if !strings.ContainsFunc(part, isPlaceholder) {
			return st.Render(expandTabs(part))
		}
		var b strings.Builder
		for part != "" {
			i := strings.IndexFunc(part, isPlaceholder)
			if i < 0 {
				b.WriteString(st.Render(expandTabs(part)))
				break
			}
			if i > 0 {
				b.WriteString(st.Render(expandTabs(part[:i])))
			}
			r, n := utf8.DecodeRuneInString(part[i:])
			b.WriteString(s.Hidden.Render(marks[r-placeholderBase]))
			part = part[i+n:]
		}
		return b.String()
	}
	styled := highlightWith(strings.Join(prepared, "\n"), language, s.Syntax, render)

	digits := len(fmt.Sprint(len(src)))
	gutterW := digits + 3
	cw := max(w-gutterW, 8)
	bar := s.Muted.Render(" │ ")
	cont := s.Muted.Render(strings.Repeat(" ", digits) + " ┆ ")
	v := codeView{source: len(src)}
	for i := 0; i < len(src); i++ {
		if blank(src[i]) {
			j := i
			for j < len(src) && blank(src[j]) {
				j++
			}
			if n := j - i; n >= blankRun {
				what := fmt.Sprintf("⋯ %d blank lines (%d–%d) ⋯", n, i+1, j)
				v.lines = append(v.lines, s.Muted.Render(fmt.Sprintf("%*s", digits, "")+" ┆ ")+s.Hidden.Render(what))
				v.folded += n
				i = j - 1
				continue
			}
		}
		line := ""
		if i < len(styled) {
			line = styled[i]
		}
		num := s.Muted.Render(fmt.Sprintf("%*d", digits, i+1))
		for k, part := range strings.Split(ansi.Hardwrap(line, cw, true), "\n") {
			if k == 0 {
				v.lines = append(v.lines, num+bar+part)
			} else {
				v.lines = append(v.lines, cont+part)
			}
		}
	}
	return v
}

func isPlaceholder(r rune) bool { return r >= placeholderBase && r < placeholderBase+0x1900 }

// blank reports whether a line of code holds nothing but spaces and tabs.
func blank(l string) bool { return strings.Trim(l, " \t") == "" }

// foldSpaces replaces each run of at least spaceRun spaces and tabs in l by
// a placeholder for "⟨N spaces⟩".
func foldSpaces(l string, place func(string) string) string {
	if len(l) < spaceRun || !strings.Contains(l, strings.Repeat(" ", 8)) && !strings.Contains(l, "\t\t") {
		return l
	}
	var b strings.Builder
	for i := 0; i < len(l); {
		if l[i] != ' ' && l[i] != '\t' {
			b.WriteByte(l[i])
			i++
			continue
		}
		j := i
		for j < len(l) && (l[j] == ' ' || l[j] == '\t') {
			j++
		}
		if j-i >= spaceRun {
			b.WriteString(place(fmt.Sprintf("⟨%d spaces⟩", j-i)))
		} else {
			b.WriteString(l[i:j])
		}
		i = j
	}
	return b.String()
}

// placeMarkers replaces each marker the sanitizer's code mode writes
// (⟨ESC⟩, ⟨U+202E⟩, ⟨0xFF⟩) by its placeholder.
func placeMarkers(l string, place func(string) string) string {
	if !strings.Contains(l, "⟨") {
		return l
	}
	var b strings.Builder
	for {
		i := strings.Index(l, "⟨")
		if i < 0 {
			b.WriteString(l)
			return b.String()
		}
		j := strings.Index(l[i:], "⟩")
		if j < 0 || !isMarkerName(l[i+len("⟨"):i+j]) {
			b.WriteString(l[:i+len("⟨")])
			l = l[i+len("⟨"):]
			continue
		}
		end := i + j + len("⟩")
		b.WriteString(l[:i])
		b.WriteString(place(l[i:end]))
		l = l[end:]
	}
}

// isMarkerName says whether name is one invisible.Name gives, or an
// invalid byte's 0xHH.
func isMarkerName(name string) bool {
	if strings.HasPrefix(name, "U+") || strings.HasPrefix(name, "0x") {
		hex := name[2:]
		if len(hex) < 2 || len(hex) > 6 {
			return false
		}
		for _, c := range hex {
			if !strings.ContainsRune("0123456789ABCDEF", c) {
				return false
			}
		}
		return true
	}
	for r := rune(0); r < 0x20; r++ {
		if invisible.Name(r) == name {
			return true
		}
	}
	return name == "DEL"
}
