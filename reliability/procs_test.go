//go:build linux

// The process helpers read /proc (see below), so they and the tests that
// use them build on Linux only.

package reliability

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Process helpers read /proc directly: the tests check which processes a
// run leaves behind, which ps would only approximate.

// procInfo is what /proc says about a process.
type procInfo struct {
	pid     int
	ppid    int
	state   string
	cmdline string
	cwd     string
}

func readProc(pid int) (procInfo, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	cmd, _ := os.ReadFile(dir + "/cmdline")
	cwd, _ := os.Readlink(dir + "/cwd")
	return procInfo{pid: pid, ppid: ppid, state: f[0], cmdline: strings.ReplaceAll(string(cmd), "\x00", " "), cwd: cwd}, true
}

func allProcs() []procInfo {
	ents, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// alive reports whether pid runs (a zombie counts as gone).
func alive(pid int) bool {
	p, ok := readProc(pid)
	return ok && p.state != "Z" && p.state != "X"
}

// descendantsOf lists every live process below root.
func descendantsOf(root int) []procInfo {
	procs := allProcs()
	kids := map[int][]procInfo{}
	for _, p := range procs {
		kids[p.ppid] = append(kids[p.ppid], p)
	}
	var out []procInfo
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range kids[p] {
			if c.state != "Z" {
				out = append(out, c)
			}
			queue = append(queue, c.pid)
		}
	}
	return out
}

// mentioning lists live processes (not this one) whose command line or
// working directory contains s.
func mentioning(s string) []procInfo {
	var out []procInfo
	for _, p := range allProcs() {
		if p.pid == os.Getpid() || p.state == "Z" {
			continue
		}
		if strings.Contains(p.cmdline, s) || strings.Contains(p.cwd, s) {
			out = append(out, p)
		}
	}
	return out
}

// killAll SIGKILLs the processes (cleanup of what a crash test orphaned).
func killAll(ps []procInfo) {
	for _, p := range ps {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}
