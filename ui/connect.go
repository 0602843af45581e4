package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/secret"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

// Connect in one look. Until anything happens (no call, no session, no
// notebook, no execution), the body is the start screen: the endpoint and
// lines to paste for the common hosts (Claude Code's `claude mcp add`, an
// mcp.json entry), the token masked in them until t shows it (and t again
// masks it: safe to leave off while sharing a screen). The screen has no
// side borders so that a line selected with the mouse pastes as it reads,
// and the paste lines are broken only where a shell (a trailing \) or JSON
// (between tokens) allows. A managed Jupyter server that failed to start
// says so first, its whole message wrapped, never cut: the screen scrolls
// when it does not fit.

// startView reports whether the body is the start screen.
func (m *Model) startView() bool {
	return m.replay == nil && len(m.st.Calls) == 0 && m.st.CallsDropped == 0 && len(m.st.Sessions) == 0 &&
		len(m.st.NotebookOrder) == 0 && len(m.st.Execs) == 0
}

// token is the bearer token as shown now: whole when t asked for it,
// masked otherwise.
func (m *Model) token() string {
	if m.showToken {
		return termtext.String(m.info.Token)
	}
	return secret.Mask(m.info.Token)
}

// tokenHint says which key shows or hides the token.
func (m *Model) tokenHint() string {
	if m.showToken {
		return "t hides it"
	}
	return "t shows it"
}

// toggleToken shows or masks the token wherever it is drawn.
func (m Model) toggleToken() (Model, tea.Cmd) {
	m.showToken = !m.showToken
	if m.showToken {
		return m, m.say("the token is shown whole (header and connect lines); t masks it again", false)
	}
	return m, m.say("the token is masked again", false)
}

// copyTokenDone is what the copy key says it did: the escape went to the
// terminal, which may or may not put it on the clipboard (tmux's default
// set-clipboard external drops it; some terminals ignore OSC 52).
const copyTokenDone = "token sent to the terminal clipboard (OSC 52); if nothing arrived, press t to show it"

// startScroll moves the start screen when it is taller than the window.
func (m Model) startScroll(msg tea.KeyMsg) (Model, bool) {
	k := m.keys
	h := m.bodyHeight()
	switch {
	case key.Matches(msg, k.Up):
		m.startOffset--
	case key.Matches(msg, k.Down):
		m.startOffset++
	case key.Matches(msg, k.PageUp):
		m.startOffset -= h - 1
	case key.Matches(msg, k.PageDown):
		m.startOffset += h - 1
	case key.Matches(msg, k.Top):
		m.startOffset = 0
	case key.Matches(msg, k.Bottom):
		m.startOffset = 1 << 20
	default:
		return m, false
	}
	m.startOffset = clamp(m.startOffset, 0, max(len(m.startLines(m.width))-h, 0))
	return m, true
}

// bodyHeight is the rows between the header and the footer.
func (m *Model) bodyHeight() int {
	l := m.layout()
	return max(m.height-l.headerH-l.footerH, 1)
}

// startScreen draws the start screen in w×h cells.
func (m *Model) startScreen(w, h int) []string {
	lines := m.scrolled(m.startLines(w), m.startOffset, h, "↑ %d more lines above (↑ or g)", "↓ %d more lines below (↓, pgdn)")
	out := make([]string, h)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", max(w, 0))
		}
	}
	return out
}

// scrolled is the window of h lines from off (clamped) of lines, its first
// and last lines giving way to counts of the lines out of view (above and
// below are their formats): every line is seen at some offset.
func (m *Model) scrolled(lines []string, off, h int, above, below string) []string {
	off = clamp(off, 0, max(len(lines)-h, 0))
	more := len(lines) - off - h
	lines = append([]string(nil), lines[off:min(off+h, len(lines))]...)
	if off > 0 && above != "" && len(lines) > 0 {
		lines[0] = m.styles.Muted.Render(fmt.Sprintf(above, off+1))
	}
	if more > 0 && len(lines) > 0 {
		lines[len(lines)-1] = m.styles.Warning.Render(fmt.Sprintf(below, more+1))
	}
	return lines
}

// startLines is every line of the start screen at width w.
func (m *Model) startLines(w int) []string {
	s := m.styles
	var out []string
	add := func(ls ...string) { out = append(out, ls...) }
	wrap := func(text string, style func(...string) string) {
		for _, l := range wrapWords(text, w) {
			add(style(l))
		}
	}
	if m.st.Server.Jupyter == event.JupyterFailed {
		add(s.Error.Render("Jupyter failed to start"))
		add(m.failureLines(w)...)
		add("")
	}
	if m.info.Endpoint == "" {
		// A stdio server, watched from attach: its host is connected.
		add(s.Title.Render("Waiting for the first call"))
		wrap("This server speaks MCP over stdio to the host that started it ("+m.info.Mode+"); its calls show here as they come.", s.Muted.Render)
		return out
	}
	add(s.Title.Render("Connect an agent") + s.Muted.Render(" · waiting for an agent: nothing has called yet"))
	add("")
	add(s.HeaderKey.Render("MCP endpoint  ") + m.info.Endpoint)
	if m.info.Token != "" {
		add(s.HeaderKey.Render("Bearer token  ") + m.token() + s.Muted.Render("   "+m.tokenHint()+" · c copies it (OSC 52)"))
	} else {
		add(s.HeaderKey.Render("Bearer token  ") + s.Warning.Render("none: any local process may call (--no-auth-loopback-only)"))
	}
	add("")
	add(s.Muted.Render("Claude Code, in a shell:"))
	add(claudeLines(m.info.Endpoint, m.bearer(), w)...)
	add("")
	add(s.Muted.Render("mcp.json (Claude Code's .mcp.json, Cursor; VS Code names the key \"servers\"):"))
	add(mcpJSONLines(m.info.Endpoint, m.bearer(), w)...)
	add("")
	if !m.showToken && m.info.Token != "" {
		wrap("The token is masked in these lines: t puts it in them, t again masks it (safe while sharing your screen). Choose your own with MCP_TOKEN to configure a client once.", s.Muted.Render)
	} else if m.info.Token != "" {
		wrap("The token is shown: t masks it again.", s.Warning.Render)
	}
	return out
}

// bearer is the Authorization header's value as the connect lines show it,
// or "" when the endpoint takes no token.
func (m *Model) bearer() string {
	if m.info.Token == "" {
		return ""
	}
	return "Bearer " + m.token()
}

// claudeLines is the `claude mcp add` command, broken with shell line
// continuations to fit w.
func claudeLines(endpoint, bearer string, w int) []string {
	words := []string{"claude", "mcp", "add", "--transport", "http", "jupyter", endpoint}
	if bearer != "" {
		words = append(words, "--header", `"Authorization: `+bearer+`"`)
	}
	return flow(words, w, " ", " \\", "  ")
}

// mcpJSONLines is the mcp.json entry, broken between JSON tokens to fit w
// (whitespace there leaves the JSON as it is).
func mcpJSONLines(endpoint, bearer string, w int) []string {
	atoms := []string{`{"mcpServers":`, `{"jupyter":`, `{"type":`, `"http",`, `"url":`}
	if bearer == "" {
		atoms = append(atoms, quoteJSON(endpoint)+`}}}`)
	} else {
		atoms = append(atoms, quoteJSON(endpoint)+",", `"headers":`, `{"Authorization":`, quoteJSON(bearer)+`}}}}`)
	}
	return flow(atoms, w, " ", "", "  ")
}

// quoteJSON is s as a JSON string.
func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// flow lays words out in lines of at most w cells where it can: words are
// joined by sep, a line that goes on ends with cont (a shell's " \"), and
// the lines after the first start with indent. A word longer than a line
// gets a line of its own, whole: these lines are pasted, not read.
func flow(words []string, w int, sep, cont, indent string) []string {
	var lines []string
	line := ""
	for _, word := range words {
		switch {
		case line == "":
			line = word
			if len(lines) > 0 {
				line = indent + word
			}
		case ansi.StringWidth(line+sep+word)+ansi.StringWidth(cont) <= w:
			line += sep + word
		default:
			lines = append(lines, line+cont)
			line = indent + word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// failureLines is the managed Jupyter server's failure to start, whole,
// wrapped to w: every place looked in and every way to install it.
func (m *Model) failureLines(w int) []string {
	s := m.styles
	var out []string
	for _, l := range strings.Split(strings.TrimRight(m.st.Server.JupyterProblem, "\n"), "\n") {
		// Continuation lines keep the indentation of the line they wrap.
		lead := len(l) - len(strings.TrimLeft(l, " "))
		for i, part := range wrapWords(strings.TrimSpace(l), max(w-lead-2, 10)) {
			pad := strings.Repeat(" ", lead)
			if i > 0 {
				pad += "  "
			}
			out = append(out, s.Text.Render(pad+part))
		}
	}
	for _, l := range wrapWords("MCP answers meanwhile: every call that needs Jupyter fails saying this. Fix it and start again.", w) {
		out = append(out, s.Muted.Render(l))
	}
	return out
}

// jupyterFailurePane reports whether the notebook pane, having no notebook
// to show, shows the managed server's failure instead.
func (m *Model) jupyterFailurePane() bool {
	return m.st.Server.Jupyter == event.JupyterFailed && len(m.st.NotebookOrder) == 0 && !m.startView()
}

// wrapWords wraps plain text to w cells at spaces only (a flag such as
// --python is never broken at its hyphens); a word longer than a line is
// cut into lines.
func wrapWords(text string, w int) []string {
	w = max(w, 1)
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		for ansi.StringWidth(word) > w {
			if line != "" {
				lines = append(lines, line)
				line = ""
			}
			head := ansi.Truncate(word, w, "")
			lines = append(lines, head)
			word = word[len(head):]
		}
		switch {
		case line == "":
			line = word
		case ansi.StringWidth(line)+1+ansi.StringWidth(word) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}
