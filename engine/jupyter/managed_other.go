//go:build !linux

package jupyter

import "syscall"

// childProcAttr puts the server in its own process group so Stop can kill
// the group. Outside Linux there is no parent-death signal.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

type procRef struct{}

// descendants is only implemented with /proc; elsewhere the server's own
// shutdown of its kernels has to do.
func descendants(root int) []procRef { return nil }

func (procRef) kill() {}

func processesMentioning(s string) []procRef { return nil }
