package observe

import (
	"strings"
	"unicode"
)

// printable is s without control and format characters (a command line is
// whatever its process chose, and it is read in a question and a header).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
}

// excerptWords joins words up to about n bytes, with "…" when cut.
func excerptWords(words []string, n int) string {
	var b strings.Builder
	for i, w := range words {
		if b.Len()+len(w)+1 > n {
			if i == 0 {
				b.WriteString(strings.ToValidUTF8(w[:n], ""))
			}
			b.WriteString(" …")
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}
