//go:build unix

package procgroup

import "syscall"

// Interrupt sends SIGINT to the child itself (not its group).
func (g *Group) Interrupt() error { return g.p.Signal(syscall.SIGINT) }

// Terminate asks the child itself to stop (SIGTERM), so that it can shut
// down what it started. It reports whether a request was sent: when it
// was, the caller waits a while before Kill.
func (g *Group) Terminate() bool { return g.p.Signal(syscall.SIGTERM) == nil }

// Kill SIGKILLs the child's whole process group, and the child.
func (g *Group) Kill() {
	_ = syscall.Kill(-g.p.Pid, syscall.SIGKILL)
	_ = g.p.Kill()
}
