//go:build !windows

package ui

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// probeTerminal asks the terminal probeQuery in raw mode and reads what it
// answers until the device attributes come back or timeout passes. It runs
// before bubbletea reads keys, so the answers never reach the workbench as
// key presses; the wait is bounded, so a terminal that answers nothing
// costs timeout once, at start-up.
func probeTerminal(tty *os.File, timeout time.Duration) termProbe {
	fd := int(tty.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return termProbe{}
	}
	defer term.Restore(fd, old)
	if _, err := tty.WriteString(probeQuery); err != nil {
		return termProbe{}
	}
	var got []byte
	buf := make([]byte, 256)
	deadline := time.Now().Add(timeout)
	for !probeDone(got) && len(got) < 4096 {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		var set unix.FdSet
		set.Set(fd)
		tv := unix.NsecToTimeval(left.Nanoseconds())
		// select, not poll: macOS's poll does not wait on terminals.
		n, err := unix.Select(fd+1, &set, nil, nil, &tv)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		k, err := unix.Read(fd, buf)
		if err != nil || k <= 0 {
			break
		}
		got = append(got, buf[:k]...)
	}
	return parseProbe(got)
}

// cellSizeOf is the terminal's character cell in pixels, from the window
// size the kernel keeps (0, 0 when the terminal does not say).
func cellSizeOf(tty *os.File) (w, h int) {
	ws, err := unix.IoctlGetWinsize(int(tty.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 || ws.Row == 0 {
		return 0, 0
	}
	return int(ws.Xpixel) / int(ws.Col), int(ws.Ypixel) / int(ws.Row)
}
