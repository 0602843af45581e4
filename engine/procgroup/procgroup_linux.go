package procgroup

import (
	"os"
	"syscall"
)

// Attr puts the child in a process group of its own and has Linux send it
// onParentDeath when this process dies.
func Attr(onParentDeath syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: onParentDeath}
}

// WatchParent is the Python a child runs first so that it gets sig when
// this process dies. On Linux Attr's parent-death signal does it: nothing.
func WatchParent(sig syscall.Signal) string { return "" }

// Group is a started child and the processes it started (its process
// group).
type Group struct{ p *os.Process }

// Adopt takes charge of p, started with Attr. On Unix there is nothing to
// do after the start.
func Adopt(p *os.Process) (*Group, error) { return &Group{p: p}, nil }
