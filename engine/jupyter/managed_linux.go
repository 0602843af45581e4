package jupyter

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procRef names a process by pid and start time, so that a pid reused by
// an unrelated process after ours exited is never killed.
type procRef struct {
	pid   int
	start string
}

// procStat returns the parent pid and start time of pid from /proc.
func procStat(pid int) (ppid int, start string, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	// The command name (field 2) may hold spaces and parentheses; the
	// fields after the last ')' are plain.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22
	// (starttime).
	if len(f) < 20 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, "", false
	}
	return ppid, f[19], true
}

// descendants lists every process below root (kernels and whatever they
// spawned).
func descendants(root int) []procRef {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]procRef{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, start, ok := procStat(pid)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], procRef{pid: pid, start: start})
	}
	var out []procRef
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// kill SIGKILLs the process if it is still the one recorded.
func (p procRef) kill() {
	if _, start, ok := procStat(p.pid); ok && start == p.start {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

// processesMentioning lists processes whose command line contains s.
func processesMentioning(s string) []procRef {
	if s == "" {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procRef
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), s) {
			continue
		}
		if _, start, ok := procStat(pid); ok {
			out = append(out, procRef{pid: pid, start: start})
		}
	}
	return out
}
