package proctest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether pid runs: it answers signal 0 and /proc does not
// show it as a zombie.
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	// The command name may hold spaces: the state follows the last ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
