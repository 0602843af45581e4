package output

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Tail returns the newest lines a reader sees of outs (the outputs of a
// run so far, in order), oldest first: at most n lines that are not blank,
// each without escapes and cut to width characters (its end replaced by
// "…"). It is what a progress report shows of a run still going.
//
// A stream is its text after Terminal; an error is "ename: evalue" (the
// traceback is for the result); a mime bundle is the text Render chooses,
// or a line naming the image. Only the end of a long stream is read: "\r"
// and "\b" never act across a newline, so the last lines of the text are
// the last lines of what Terminal makes of it.
func Tail(outs []notebook.Output, n, width int) []string {
	if n <= 0 {
		return nil
	}
	var lines []string // newest first
	for i := len(outs) - 1; i >= 0 && len(lines) < n; i-- {
		text := tailText(&outs[i], n-len(lines))
		ls := strings.Split(text, "\n")
		for j := len(ls) - 1; j >= 0 && len(lines) < n; j-- {
			l := strings.TrimRight(ls[j], " \t")
			if strings.TrimSpace(l) == "" {
				continue
			}
			lines = append(lines, cutLine(l, width))
		}
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return lines
}

// tailText is the text of o a reader sees, escapes stripped; of a stream
// only the end holding its last n lines that are not empty (a blank line
// made of spaces may take one of them: the caller skips it and asks for
// the rest from the output before, which is close enough for a preview).
func tailText(o *notebook.Output, n int) string {
	switch o.OutputType {
	case notebook.Stream:
		return ansi.Strip(Terminal(lastLines(o.Text, n)))
	case notebook.Error:
		return o.EName + ": " + o.EValue
	case notebook.ExecuteResult, notebook.DisplayData:
		if m, ok := firstImage(o.Data); ok {
			return "[" + m + " image]"
		}
		_, text := richText(o)
		return ansi.Strip(lastLines(text, n))
	}
	return ""
}

// lastLines returns the end of text that holds its last n lines not
// empty, cut after a newline.
func lastLines(text string, n int) string {
	end := len(text)
	for end > 0 && text[end-1] == '\n' {
		end--
	}
	seen := 0
	for i := end - 1; i >= 0; i-- {
		if text[i] != '\n' {
			continue
		}
		if i+1 < end && text[i+1] != '\n' {
			seen++
			if seen == n {
				return text[i+1 : end]
			}
		}
	}
	return text[:end]
}

// cutLine keeps the first width characters of l, its last one replaced by
// "…" when it is longer.
func cutLine(l string, width int) string {
	if width <= 0 || utf8.RuneCountInString(l) <= width {
		return l
	}
	i, kept := 0, 0
	for i < len(l) && kept < width-1 {
		_, size := utf8.DecodeRuneInString(l[i:])
		i += size
		kept++
	}
	return l[:i] + "…"
}
