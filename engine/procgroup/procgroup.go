// Package procgroup starts helper processes (the managed jupyter-server, the
// eval sandbox's interpreter) so that they die with this one, on every
// platform we build for:
//
//   - Linux: the child leads its own process group (so a kill reaches what
//     it started) and the kernel sends it a signal when we die
//     (PR_SET_PDEATHSIG), even when we are SIGKILLed.
//   - macOS and the other Unixes: the same process group, killed on Stop and
//     on our SIGTERM/SIGINT (the callers stop their children when the
//     context ends). There is no parent-death signal, so WatchParent gives
//     the child's Python a thread that notices its parent is gone (it is
//     re-parented) and signals its own group: that covers a SIGKILL of us.
//   - Windows: the child goes into a Job Object with
//     JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE. Only this process holds the job's
//     handle, so when we exit, however we exit, Windows kills everything in
//     the job, including the processes the child started.
package procgroup

import (
	"fmt"
	"os"
	"syscall"
)

// watchParent is Python run by a child before anything else on platforms
// without a parent-death signal. It polls its parent pid and, once the
// parent it was started by is gone, sends sig to its own process group (or
// only to itself, when it does not lead a group: never to a group it merely
// belongs to).
const watchParent = `import os as _jm_os, threading as _jm_th, time as _jm_time
def _jm_watch_parent(ppid=%d, sig=%d):
    while _jm_os.getppid() == ppid:
        _jm_time.sleep(0.5)
    if _jm_os.getpgid(0) == _jm_os.getpid():
        _jm_os.killpg(0, sig)
    else:
        _jm_os.kill(_jm_os.getpid(), sig)
_jm_th.Thread(target=_jm_watch_parent, daemon=True, name="jupyter-mcp-parent-watch").start()
`

// parentWatchCode is watchParent for this process as the parent.
func parentWatchCode(sig syscall.Signal) string {
	return fmt.Sprintf(watchParent, os.Getpid(), int(sig))
}
