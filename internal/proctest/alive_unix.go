//go:build unix && !linux

package proctest

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether pid runs: it answers signal 0 and ps does not show
// it as a zombie (there is no /proc to read here).
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return false // ps exits 1 when the pid is gone
	}
	st := strings.TrimSpace(string(out))
	return st != "" && !strings.HasPrefix(st, "Z")
}
