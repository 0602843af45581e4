package ui

import (
	"fmt"
	"io"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// A call held for the person is announced beyond the screen: the terminal's
// bell (tmux and most terminals mark the window, some flash or sound), and a
// desktop notice where the terminal shows one (OSC 9, OSC 777, kitty's OSC
// 99). Both are written by us, to our terminal, with words of our own: no
// text from the agent, a kernel or a file is ever part of them (a tool name
// is the agent's to choose), so the notice can carry no escape of theirs.

// Notice protocols: which escape shows a desktop notice, and the values of
// --notify.
const (
	NotifyAuto   = "auto"
	NotifyOSC9   = "osc9"   // iTerm2, WezTerm, Ghostty, ConEmu
	NotifyOSC777 = "osc777" // urxvt, foot, Ghostty, WezTerm, VTE terminals that carry the patch
	NotifyOSC99  = "osc99"  // kitty
	NotifyOff    = "off"
)

// NotifyModes lists the values --notify takes.
var NotifyModes = []string{NotifyAuto, NotifyOSC9, NotifyOSC777, NotifyOSC99, NotifyOff}

// announceCmd rings the bell and shows a notice for calls newly held, off
// the UI goroutine (both write to the terminal).
func (m *Model) announceCmd(held int) tea.Cmd {
	bell, notify := m.bell, m.notify
	if bell == nil && notify == nil {
		return nil
	}
	body := "A call is waiting for your approval in the workbench."
	if held > 1 {
		body = fmt.Sprintf("%d calls are waiting for your approval in the workbench.", held)
	}
	return func() tea.Msg {
		if bell != nil {
			bell()
		}
		if notify != nil {
			notify("jupyter-mcp", body)
		}
		return nil
	}
}

// noticeProtocol picks the notice escape for the terminal the environment
// describes (getenv), given --notify; "" for none. Inside tmux the outer
// terminal is told only by LC_TERMINAL (tmux sets TERM_PROGRAM to itself),
// and a notice passes only with allow-passthrough (passthrough).
func noticeProtocol(mode string, getenv func(string) string, passthrough bool) string {
	switch mode {
	case NotifyOff:
		return ""
	case NotifyOSC9, NotifyOSC777, NotifyOSC99:
		return mode
	}
	inTmux := getenv("TMUX") != ""
	if inTmux && !passthrough {
		return ""
	}
	switch term, prog := getenv("TERM"), getenv("TERM_PROGRAM"); {
	case getenv("LC_TERMINAL") == "iTerm2", prog == "iTerm.app", getenv("ConEmuANSI") == "ON":
		return NotifyOSC9
	case inTmux:
		return "" // the terminal around tmux is not known
	case prog == "WezTerm", prog == "ghostty", strings.HasPrefix(term, "foot"), strings.HasPrefix(term, "rxvt"),
		getenv("VTE_VERSION") != "":
		return NotifyOSC777
	case getenv("KITTY_WINDOW_ID") != "", term == "xterm-kitty":
		return NotifyOSC99
	}
	return ""
}

// noticeSeq is the escape that shows title and body as a notice, wrapped for
// tmux's passthrough when tmux is true. title and body are our own words:
// the separators and terminators of the escapes are taken out all the same.
func noticeSeq(proto, title, body string, tmux bool) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || r == ';' {
				return ' '
			}
			return r
		}, s)
	}
	title, body = clean(title), clean(body)
	var seq string
	switch proto {
	case NotifyOSC9:
		seq = "\x1b]9;" + title + ": " + body + "\x1b\\"
	case NotifyOSC777:
		seq = "\x1b]777;notify;" + title + ";" + body + "\x1b\\"
	case NotifyOSC99:
		seq = "\x1b]99;i=jupyter-mcp:d=0;" + title + "\x1b\\" + "\x1b]99;i=jupyter-mcp:d=1:p=body;" + body + "\x1b\\"
	default:
		return ""
	}
	if tmux {
		seq = "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
	}
	return seq
}

// terminalAttention returns the bell and the notice that Run gives the
// model, writing to tty.
func terminalAttention(tty io.Writer, mode string, getenv func(string) string, passthrough bool) (bell func(), notify func(title, body string)) {
	bell = func() { _, _ = io.WriteString(tty, "\a") }
	if proto := noticeProtocol(mode, getenv, passthrough); proto != "" {
		inTmux := getenv("TMUX") != ""
		notify = func(title, body string) { _, _ = io.WriteString(tty, noticeSeq(proto, title, body, inTmux)) }
	}
	return bell, notify
}
