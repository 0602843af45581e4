package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// NO_COLOR means no colour at all: the workbench's own styles have none
// then (theme.NewRenderer), and the colours kernels put in their outputs
// (tracebacks, progress bars, coloured logs), which the sanitizer keeps,
// are taken out as each pane's lines are boxed.

// noColour reports whether the terminal is to show no colour.
func (m *Model) noColour() bool {
	return m.styles.Renderer != nil && m.styles.Renderer.ColorProfile() == termenv.Ascii
}

// stripColour removes the escapes left in a line: only SGR reaches a pane
// (the sanitizer dropped the rest).
func stripColour(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	return ansi.Strip(s)
}
