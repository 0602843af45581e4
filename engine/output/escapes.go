package output

import "github.com/charmbracelet/x/ansi/parser"

// escapedIndex returns the index in s after which ansi.Strip(s) has
// produced n bytes: s[:escapedIndex(s, n)] strips to the first n bytes of
// ansi.Strip(s) when n ends on a character boundary. It walks s with the
// same state machine as ansi.Strip, so the two always agree on what an
// escape is.
func escapedIndex(s string, n int) int {
	if n <= 0 {
		return 0
	}
	var (
		out    int // bytes Strip has written
		ri, rw int
		pstate = parser.GroundState
	)
	for i := range len(s) {
		if pstate == parser.Utf8State {
			out++
			ri++
			if ri < rw {
				continue
			}
			pstate, ri, rw = parser.GroundState, 0, 0
			if out >= n {
				return i + 1
			}
			continue
		}
		state, action := parser.Table.Transition(pstate, s[i])
		switch action {
		case parser.CollectAction:
			if state == parser.Utf8State {
				rw = utf8ByteLen(s[i])
				out++
				ri++
			}
		case parser.PrintAction, parser.ExecuteAction:
			out++
			if out >= n && state != parser.Utf8State {
				return i + 1
			}
		}
		if pstate != parser.Utf8State {
			pstate = state
		}
	}
	return len(s)
}

func utf8ByteLen(b byte) int {
	switch {
	case b <= 0x7f:
		return 1
	case b >= 0xc0 && b <= 0xdf:
		return 2
	case b >= 0xe0 && b <= 0xef:
		return 3
	case b >= 0xf0 && b <= 0xf7:
		return 4
	}
	return -1
}
