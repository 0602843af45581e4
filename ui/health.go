package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Jupyter's health in the header, from the first frame: the engine checks
// the server before any agent call and keeps checking it (a managed server's
// supervisor says starting, failed or restarting; engine.WatchJupyter says
// up, refused or unreachable). The second header line carries a word of it;
// when it is not up, a line of its own under the header says what to do, in
// full, wrapped rather than cut.

// maxHealthLines bounds the header's fix line once wrapped: a managed
// server's whole failure goes in the empty panes (connect.go), not here.
const maxHealthLines = 3

// jupyterWord is what the second header line says of Jupyter, styled; ""
// when there is nothing to say (a replay of a recording without it).
func (m *Model) jupyterWord() string {
	s := m.styles
	srv := m.st.Server
	switch srv.Jupyter {
	case "":
		if m.replay != nil || m.info.JupyterURL == "" && srv.JupyterURL == "" {
			return ""
		}
		return s.Muted.Render("jupyter checking…")
	case event.JupyterUp:
		return s.OK.Render("jupyter up")
	case event.JupyterStarting:
		return s.Warning.Render("jupyter starting…")
	case event.JupyterFailed:
		return s.Error.Render("jupyter failed to start")
	case event.JupyterRefused:
		return s.Error.Render("jupyter token refused (" + srv.JupyterCause + ")")
	case event.JupyterUnreachable:
		return s.Error.Render("jupyter not answering")
	}
	// A managed server being restarted: every call fails until it is back.
	down := fmt.Sprintf("jupyter %s (attempt %d)…", srv.Jupyter, srv.JupyterAttempt)
	if srv.JupyterProblem != "" {
		down += " " + oneLine(srv.JupyterProblem)
	}
	return s.Error.Render(down)
}

// jupyterFix is what to do about Jupyter not being up, in words, or ""
// when it is up (or starting, or restarting by itself).
func (m *Model) jupyterFix() string {
	srv := m.st.Server
	url := srv.JupyterURL
	if url == "" {
		url = m.info.JupyterURL
	}
	switch srv.Jupyter {
	case event.JupyterRefused:
		return fmt.Sprintf("Jupyter at %s refused the token (%s): start jupyter-mcp-server again with the token that Jupyter printed (`jupyter server list` shows it) in JUPYTER_TOKEN or --jupyter-token-file. Calls that need Jupyter fail until then.", url, srv.JupyterCause)
	case event.JupyterUnreachable:
		why := srv.JupyterCause
		if why == "" {
			why = oneLine(srv.JupyterProblem)
		}
		return fmt.Sprintf("Jupyter at %s is not answering (%s): start it, or point --jupyter-url at a server that runs. Calls that need it fail until it answers; it is checked again every %s.", url, why, event.JupyterCheckInterval)
	case event.JupyterFailed:
		first, _, _ := strings.Cut(srv.JupyterProblem, "\n")
		fix := "The managed Jupyter server failed to start: " + strings.TrimSpace(first)
		if m.startView() || m.jupyterFailurePane() {
			fix += " The whole message, with the ways to install it, is below."
		} else {
			fix += " Fix it and start again, or use --jupyter-url with --jupyter-token."
		}
		return fix
	}
	return ""
}

// healthLines is the fix line as the header draws it: wrapped to the
// width, in the error colour, at most maxHealthLines.
func (m *Model) healthLines() []string {
	fix := m.jupyterFix()
	if fix == "" {
		return nil
	}
	lines := wrapWords(fix, m.width)
	if len(lines) > maxHealthLines {
		lines = lines[:maxHealthLines]
		lines[maxHealthLines-1] = ansi.Truncate(lines[maxHealthLines-1], m.width-1, "") + "…"
	}
	for i, l := range lines {
		lines[i] = fit(m.styles.Error.Render(strings.TrimRight(l, " ")), m.width)
	}
	return lines
}
