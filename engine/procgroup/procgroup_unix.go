//go:build unix && !linux

package procgroup

import (
	"os"
	"syscall"
)

// Attr puts the child in a process group of its own. There is no
// parent-death signal outside Linux: see WatchParent.
func Attr(onParentDeath syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// WatchParent is the Python a child runs first so that it (and its process
// group) gets sig when this process dies, the nearest this platform has to
// Linux's parent-death signal: a thread that polls the parent pid twice a
// second.
func WatchParent(sig syscall.Signal) string { return parentWatchCode(sig) }

// Group is a started child and the processes it started (its process
// group).
type Group struct{ p *os.Process }

// Adopt takes charge of p, started with Attr. On Unix there is nothing to
// do after the start.
func Adopt(p *os.Process) (*Group, error) { return &Group{p: p}, nil }
