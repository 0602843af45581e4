package ui

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// Search in the calls pane: `/` opens the input, the query (parsed and
// matched by observe.Query) applies as it is typed, the pane shows only the
// matching calls, n and N step through them, and the words are highlighted
// in the selected call's detail.

// searchPlaceholder is what the empty input shows.
const searchPlaceholder = "words, tool: status: session: cell: kind: took:>1s"

// visKey names what the list of visible calls depends on.
type visKey struct {
	calls, server uint64 // the calls, and the sessions a session: term reads
	filter        string
	clock         int64 // for took: terms only (active calls' time so far)
}

// visCache keeps the calls the search lets through between frames: a
// search over every call's text runs once per change, not once per frame.
type visCache struct {
	ok  bool
	key visKey
	out []*observe.Call
}

// visible lists the calls that match the search, oldest first.
func (p *callsPane) visible(m *Model) []*observe.Call {
	if p.filter == "" {
		return m.st.Calls
	}
	k := visKey{calls: m.st.CallsVer, server: m.st.ServerVer, filter: p.filter}
	if len(p.query.Took) > 0 {
		k.clock = m.clock.UnixNano()
	}
	vc := &m.vc.vis
	if vc.ok && vc.key == k {
		return vc.out
	}
	out := make([]*observe.Call, 0, len(m.st.Calls))
	for _, c := range m.st.Calls {
		if p.query.Match(c, m.st.Sessions, m.clock) {
			out = append(out, c)
		}
	}
	vc.ok, vc.key, vc.out = true, k, out
	return out
}

// handleFilterKey edits the search: it applies as one types (a query with
// a bad term leaves the last good one applied and says what is wrong);
// enter keeps it, esc clears it.
func (p callsPane) handleFilterKey(m Model, msg tea.KeyMsg) (Model, tea.Cmd) {
	switch msg.Type {
	case tea.KeyEnter:
		if m.calls.queryErr != "" {
			return m, nil // the input line says what to fix
		}
		m.calls.filtering = false
		m.calls.input.Blur()
		return m, nil
	case tea.KeyEsc:
		m.calls.filtering = false
		m.calls.input.Blur()
		m.calls.setFilter(&m, "")
		return m, nil
	case tea.KeyCtrlC:
		return m, tea.Quit
	}
	var cmd tea.Cmd
	m.calls.input, cmd = m.calls.input.Update(msg)
	m.calls.setFilter(&m, m.calls.input.Value())
	return m, cmd
}

// setFilter parses f and, when it parses, applies it.
func (p *callsPane) setFilter(m *Model, f string) {
	f = strings.TrimSpace(f)
	q, err := observe.ParseQuery(f)
	if err != nil {
		p.queryErr = err.Error()
		return
	}
	p.queryErr = ""
	p.filter, p.query = f, q
	if q.Empty() {
		p.filter = ""
		m.st.ForgetSearchIndex()
	}
	p.clampSelection(m)
	m.syncDetail()
}

// searching reports whether a search is applied.
func (p *callsPane) searching() bool { return p.filter != "" }

// inputLine is the search input, fitted to w.
func (p *callsPane) inputLine(_ *Model, w int) string {
	p.input.Width = max(w-2, 1)
	return p.input.View()
}

// queryNote is the line under the input while one types: what is wrong
// with the query, or which words were taken as text; "" when nothing.
func (p *callsPane) queryNote(m *Model) string {
	s := m.styles
	switch {
	case p.queryErr != "":
		return s.Error.Render("✗ " + p.queryErr)
	case len(p.query.AsText) > 0:
		return s.Muted.Render(strings.Join(p.query.AsText, " ") + " searched as text (terms: tool: status: session: cell: kind: took:)")
	}
	return ""
}

// jumpMatch selects the next (delta 1) or previous (-1) matching call,
// wrapping round, and says which match it is.
func (m Model) jumpMatch(delta int) (Model, tea.Cmd) {
	vis := m.calls.visible(&m)
	if len(vis) == 0 {
		return m, m.say("no call matches /"+m.calls.filter, true)
	}
	i := m.calls.index(vis)
	switch {
	case i < 0 && delta > 0:
		i = 0
	case i < 0:
		i = len(vis) - 1
	default:
		i = (i + delta + len(vis)) % len(vis)
	}
	m.calls.selected = vis[i].ID
	m.calls.follow = false
	m.calls.clampSelection(&m)
	m.syncDetail()
	return m, m.say(fmt.Sprintf("match %d of %d: %s", i+1, len(vis), vis[i].Tool), false)
}

// say shows a passing note in the status line.
func (m *Model) say(what string, isErr bool) tea.Cmd {
	m.status, m.statusErr = what, isErr
	m.seq++
	seq := m.seq
	return tea.Tick(5*time.Second, func(time.Time) tea.Msg { return statusExpiredMsg{seq} })
}

// highlightWords marks every case-insensitive occurrence of words in each
// of lines with style, keeping the styles the lines already have around
// the marks.
func highlightWords(lines []string, words []string, style lipgloss.Style) []string {
	if len(words) == 0 {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = highlightLine(l, words, style)
	}
	return out
}

// highlightLine marks the words in one line that may hold SGR sequences.
// Matches are found in the line's text; a mark ends with a reset, after
// which the SGR sequences in force at that point are written again.
func highlightLine(line string, words []string, style lipgloss.Style) string {
	// The text of the line, and where each of its bytes is in the line.
	var plain strings.Builder
	pos := make([]int, 0, len(line))
	for i := 0; i < len(line); {
		if n := escLen(line[i:]); n > 0 {
			i += n
			continue
		}
		plain.WriteByte(line[i])
		pos = append(pos, i)
		i++
	}
	text := plain.String()
	lower := strings.ToLower(text)
	if len(lower) != len(text) {
		lower = asciiLower(text) // offsets must stay those of text
	}
	marked := make([]bool, len(text))
	found := false
	for _, w := range words {
		if w == "" {
			continue
		}
		for from := 0; from < len(lower); {
			j := strings.Index(lower[from:], w)
			if j < 0 {
				break
			}
			for k := from + j; k < from+j+len(w); k++ {
				marked[k] = true
			}
			found = true
			from += j + len(w)
		}
	}
	if !found {
		return line
	}
	var sb strings.Builder
	var inForce []string // SGR sequences since the last reset
	for k := 0; k < len(text); {
		start := pos[k]
		if k > 0 {
			// Escapes between the previous byte of text and this one.
			for i := pos[k-1] + 1; i < start; {
				n := escLen(line[i:])
				seq := line[i : i+n]
				inForce = trackSGR(inForce, seq)
				if !marked[k-1] || !marked[k] {
					sb.WriteString(seq)
				}
				i += n
			}
		} else {
			for i := 0; i < start; {
				n := escLen(line[i:])
				inForce = trackSGR(inForce, line[i:i+n])
				sb.WriteString(line[i : i+n])
				i += n
			}
		}
		if !marked[k] {
			sb.WriteByte(text[k])
			k++
			continue
		}
		end := k
		for end < len(text) && marked[end] {
			end++
		}
		// Escapes inside the match are not written (they would undo the
		// mark) but still count for what is in force after it.
		for i := pos[k]; i < pos[end-1]; i++ {
			if n := escLen(line[i:]); n > 0 {
				inForce = trackSGR(inForce, line[i:i+n])
				i += n - 1
			}
		}
		sb.WriteString(style.Render(text[k:end]))
		sb.WriteString(strings.Join(inForce, ""))
		k = end
	}
	if len(pos) > 0 {
		sb.WriteString(line[pos[len(pos)-1]+1:])
	}
	return sb.String()
}

// escLen is the length of the escape sequence s starts with (a CSI such as
// SGR, or a two-byte escape), 0 when s does not start with ESC.
func escLen(s string) int {
	if len(s) == 0 || s[0] != 0x1b {
		return 0
	}
	if len(s) < 2 {
		return 1
	}
	if s[1] != '[' {
		return 2
	}
	for i := 2; i < len(s); i++ {
		if s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
	}
	return len(s)
}

// trackSGR adds seq to the SGR sequences in force, or clears them on a
// reset.
func trackSGR(inForce []string, seq string) []string {
	if !strings.HasPrefix(seq, "\x1b[") || !strings.HasSuffix(seq, "m") {
		return inForce
	}
	if seq == "\x1b[m" || seq == "\x1b[0m" {
		return inForce[:0]
	}
	return append(inForce, seq)
}

// asciiLower lowers A-Z only, keeping every byte where it is.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
