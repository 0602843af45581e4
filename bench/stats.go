package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// samples are call latencies of one path.
type samples []time.Duration

// pct is the p-th percentile (0..1) by the nearest-rank method.
func (s samples) pct(p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	i := int(float64(len(c))*p+0.999999) - 1
	return c[max(0, min(len(c)-1, i))]
}

func (s samples) p50() time.Duration { return s.pct(0.50) }

// ms is a duration in milliseconds, as the table prints it.
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// procStatus reads one "Key:   123 kB" field of /proc/PID/status, in bytes.
func procStatus(pid int, key string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				break
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, err
			}
			return n * 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", key, pid)
}

// rss is the resident set size of a process (VmRSS), in bytes.
func rss(pid int) (int64, error) { return procStatus(pid, "VmRSS") }

// cpuTime is the CPU time (user + system) a process has used so far.
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields we want come
	// after its closing parenthesis: utime and stime are fields 14 and 15.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	// USER_HZ is 100 on every Linux we run on.
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// contextSwitches counts the context switches of all live threads of a
// process: every wake-up of a parked thread is one, and on a small VM they
// cost more than the work they carry.
func contextSwitches(pid int) int64 {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0
	}
	var n int64
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			continue // the thread exited meanwhile
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "ctxt_switches:") {
				if f := strings.Fields(line); len(f) == 2 {
					v, _ := strconv.ParseInt(f[1], 10, 64)
					n += v
				}
			}
		}
	}
	return n
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// progress tells the person waiting what is happening, on stderr: stdout
// carries the table.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}
