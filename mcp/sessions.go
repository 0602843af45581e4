package mcp

import (
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// The words for what one session's call did to other sessions (engine/
// sessions.go): the answers of unuse_notebook and connect_to_jupyter, and
// the note another session reads on its next call.

// textUnused is unuse_notebook's answer.
func textUnused(u engine.Released) string {
	text := fmt.Sprintf("Notebook '%s' unused successfully. Its kernel keeps running; use_notebook it again to continue.", u.Name)
	switch {
	case len(u.AlsoOpenAs) > 0:
		text = fmt.Sprintf("Notebook '%s' unused successfully. %s is still in use as %s, which keeps it and its kernel %s.", u.Name, u.Path, quotedList(u.AlsoOpenAs), u.KernelID)
	case u.KernelShutDown:
		text = fmt.Sprintf("Notebook '%s' unused successfully. Its kernel %s was shut down (this server started it and nothing else used it); use_notebook it again to continue on a fresh kernel.", u.Name, u.KernelID)
	}
	if len(u.Others) > 0 {
		text += fmt.Sprintf(" It was also the current notebook of %s, which now %s no current notebook and will be told so on %s next call.",
			sessionsPhrase(u.Others), plural(len(u.Others), "has", "have"), plural(len(u.Others), "its", "their"))
	}
	return text
}

// textConnected is connect_to_jupyter's answer.
func textConnected(sw engine.ServerSwitch) string {
	if sw.Same {
		text := fmt.Sprintf("Already connected to the Jupyter server at %s with this token; nothing changed.", sw.URL)
		if len(sw.InUse) > 0 {
			text += fmt.Sprintf(" The notebooks in use (%s) stay open and every session keeps its current notebook.", strings.Join(sw.InUse, ", "))
		}
		return text
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Successfully connected to Jupyter server at %s.", sw.URL)
	if len(sw.Closed) == 0 {
		fmt.Fprintf(&b, " No notebooks were in use on the previous server (%s).", sw.Previous)
		return b.String()
	}
	fmt.Fprintf(&b, " The %d %s in use on the previous server (%s) %s closed; call use_notebook to open notebooks on this one:",
		len(sw.Closed), plural(len(sw.Closed), "notebook", "notebooks"), sw.Previous, plural(len(sw.Closed), "was", "were"))
	for _, c := range sw.Closed {
		fmt.Fprintf(&b, "\n- '%s' (%s), %s; kernel %s %s", c.Name, c.Path, whoseCurrent(c), c.KernelID, kernelFate(c.Kernel))
	}
	return b.String()
}

// whoseCurrent says whose current notebook a closed notebook was.
func whoseCurrent(c engine.ClosedInSwitch) string {
	var who []string
	if c.Caller {
		who = append(who, "this session")
	}
	if len(c.Others) > 0 {
		who = append(who, sessionsPhrase(c.Others)+" (told on "+plural(len(c.Others), "its", "their")+" next call)")
	}
	if len(who) == 0 {
		return "no session's current notebook"
	}
	return "the current notebook of " + strings.Join(who, " and of ")
}

// kernelFate says what a server switch did with a kernel.
func kernelFate(f engine.KernelFate) string {
	switch {
	case f.ShutDown:
		return "shut down (this server had started it)"
	case f.Attached:
		return "left running (it was already running when the notebook was opened on it, so it is not this server's to stop)"
	case f.Kept:
		return "left running (--keep-kernels)"
	case f.InUse:
		return "left running (another client is connected to it)"
	}
	return fmt.Sprintf("left running: shutting it down failed (%s)", redact(f.Err.Error()))
}

// noticeText is what a session reads on its next call after another
// session closed its current notebook.
func noticeText(n *engine.ClosedNotice) string {
	at := n.At.UTC().Format("15:04:05 UTC")
	switch n.Cause {
	case engine.ClosedBySwitch:
		return fmt.Sprintf("Note: notebook '%s' (%s), this session's current notebook, was closed at %s when session %s switched to the Jupyter server at %s; this session has no current notebook now: call use_notebook to open one there.",
			n.Notebook, n.Path, at, n.By, redact(n.Server))
	}
	return fmt.Sprintf("Note: notebook '%s' (%s), this session's current notebook, was closed at %s by session %s with unuse_notebook; this session has no current notebook now: call use_notebook to open it again.",
		n.Notebook, n.Path, at, n.By)
}

// withNotices adds what the session has not yet been told to a result:
// that another session closed its current notebook (unless the result is
// a refusal that says so already), and, on a result that acted on a
// notebook, what happened to that notebook (a person reverted one of the
// session's changes, the file was edited outside): one line each in the
// text, and the same lines in _meta under io.jupyter-mcp/notices for a
// client that reads them apart. A failed call takes no notebook lines:
// they wait for a result on the notebook.
func (s *Server) withNotices(c *call, res *sdk.CallToolResult, err error) {
	notebook := c.notebook
	if err != nil {
		notebook = ""
	}
	n := s.e.TakeNotices(c.session, notebook)
	if res == nil {
		return
	}
	if nn, ok := as[*engine.NoNotebookError](err); n.Closed != nil && !(ok && nn.Closed != nil) {
		res.Content = append(res.Content, &sdk.TextContent{Text: noticeText(n.Closed)})
	}
	if len(n.Lines) == 0 {
		return
	}
	res.Content = append(res.Content, &sdk.TextContent{Text: "Note: " + strings.Join(n.Lines, "\nNote: ")})
	if res.Meta == nil {
		res.Meta = sdk.Meta{}
	}
	res.Meta[metaNotices] = n.Lines
}

// sessionsPhrase is "session 4MVH2K1X (agent-b 1)" or "sessions A, B".
func sessionsPhrase(refs []engine.SessionRef) string {
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.String()
	}
	return plural(len(refs), "session ", "sessions ") + strings.Join(names, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
