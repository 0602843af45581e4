package ui

import (
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// Code in a held call's preview is drawn syntax-coloured: chroma's lexers
// say what each token is (keyword, string, comment...), the theme says how
// that kind of token looks. No chroma style is used, so the colours are the
// workbench's palette and follow its light, dark and 16-colour variants.

// maxHighlightBytes bounds the code given to the lexer: past it the code
// is drawn plain (a person reads the start of a long cell, and a lexer's
// time grows with its input).
const maxHighlightBytes = 64 << 10

// highlight returns code as lines, each token styled by its kind. language
// is the kernel's language as the notebook names it ("python"); when no
// lexer knows it, one is guessed from the code, and without a guess the
// code is drawn plain.
func highlight(code, language string, st theme.Syntax) []string {
	return highlightWith(code, language, st, func(style lipgloss.Style, part string) string {
		return style.Render(expandTabs(part))
	})
}

// highlightWith is highlight drawing each piece of a token (a token split at
// its newlines) with render.
func highlightWith(code, language string, st theme.Syntax, render func(lipgloss.Style, string) string) []string {
	// Text from the sanitizer's output mode keeps SGR; here the colours
	// are the lexer's, and a sequence cut into tokens would be drawn
	// broken. (Its code mode leaves no escape at all.)
	code = strings.TrimRight(ansi.Strip(code), "\n")
	if code == "" {
		return nil
	}
	lexer := lexers.Get(language)
	if lexer == nil {
		lexer = lexers.Analyse(code)
	}
	if lexer == nil || len(code) > maxHighlightBytes {
		return plainLines(code, st.Plain, render)
	}
	it, err := chroma.Coalesce(lexer).Tokenise(nil, code)
	if err != nil {
		return plainLines(code, st.Plain, render)
	}
	var lines []string
	var line strings.Builder
	for tok := it(); tok != chroma.EOF; tok = it() {
		style := tokenStyle(tok.Type, st)
		parts := strings.Split(tok.Value, "\n")
		for i, part := range parts {
			if i > 0 {
				lines = append(lines, line.String())
				line.Reset()
			}
			if part != "" {
				line.WriteString(render(style, part))
			}
		}
	}
	if line.Len() > 0 {
		lines = append(lines, line.String())
	}
	// The lexer ends its input with a newline of its own.
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func plainLines(code string, style lipgloss.Style, render func(lipgloss.Style, string) string) []string {
	lines := strings.Split(code, "\n")
	for i, l := range lines {
		lines[i] = render(style, l)
	}
	return lines
}

func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

// tokenStyle maps a token kind to its style.
func tokenStyle(t chroma.TokenType, st theme.Syntax) lipgloss.Style {
	switch {
	case t.InCategory(chroma.Comment):
		return st.Comment
	case t.InCategory(chroma.Keyword), t == chroma.OperatorWord:
		return st.Keyword
	case t.InSubCategory(chroma.LiteralString):
		return st.String
	case t.InSubCategory(chroma.LiteralNumber):
		return st.Number
	case t == chroma.NameFunction, t == chroma.NameClass, t == chroma.NameDecorator,
		t.InSubCategory(chroma.NameBuiltin), t == chroma.NameFunctionMagic:
		return st.Name
	case t.InCategory(chroma.Operator):
		return st.Operator
	}
	return st.Plain
}
