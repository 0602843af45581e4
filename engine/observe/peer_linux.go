package observe

import (
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// peerOf names the process at the other end of a unix socket connection,
// "pid 4242: jupyter-mcp-server attach", from the kernel's own record of
// who connected (SO_PEERCRED) and that process's command line. It is what
// the person reads in the pairing question: a kernel asking to be paired
// shows as the Python that runs it. Anything else is "".
func peerOf(v any) string {
	uc, ok := v.(*net.UnixConn)
	if !ok {
		return ""
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return ""
	}
	var cred *unix.Ucred
	_ = raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err != nil || cred == nil {
		return ""
	}
	label := fmt.Sprintf("pid %d", cred.Pid)
	if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cred.Pid)); err == nil {
		if args := strings.Fields(printable(strings.ReplaceAll(string(cmd), "\x00", " "))); len(args) > 0 {
			label += ": " + excerptWords(args, 80)
		}
	}
	return label
}
