//go:build unix

package procgroup

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/proctest"
)

// groupChild is what the helper's Python runs after the parent watch: it
// leads a process group of its own (as Attr arranges), starts a grandchild
// in it, says both pids and waits.
const groupChild = `
import os, subprocess, sys, time
os.setpgid(0, 0)
g = subprocess.Popen(["sleep", "120"])
print("PIDS", os.getpid(), g.pid, flush=True)
time.sleep(120)
`

// TestWatchParent checks the parent watch that stands in for Linux's
// parent-death signal on macOS: a helper process (this test binary) starts
// Python with the watch, then is SIGKILLed, so no cleanup of ours runs;
// the watch must kill the child's whole group. It runs on Linux too, where
// it is not used (Pdeathsig is), because it is plain Python and POSIX.
func TestWatchParent(t *testing.T) {
	if os.Getenv("PROCGROUP_HELPER") == "1" {
		t.Skip("helper mode")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		if runtime.GOOS == "linux" {
			t.Fatalf("python3 is needed: %v", err)
		}
		t.Skip("no python3 on PATH")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperParent$", "-test.v")
	cmd.Env = append(os.Environ(), "PROCGROUP_HELPER=1", "PROCGROUP_PYTHON="+python)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var child, grandchild int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "PIDS" {
			child, _ = strconv.Atoi(f[1])
			grandchild, _ = strconv.Atoi(f[2])
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if child == 0 || grandchild == 0 || !proctest.Alive(child) || !proctest.Alive(grandchild) {
		t.Fatalf("the helper did not report a live child and grandchild (%d, %d)", child, grandchild)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	// The watch polls twice a second; the deadline only bounds a failure.
	deadline := time.Now().Add(30 * time.Second)
	for (proctest.Alive(child) || proctest.Alive(grandchild)) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range []int{child, grandchild} {
		if proctest.Alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("pid %d outlived its parent", pid)
		}
	}
}

// TestHelperParent is the parent that TestWatchParent kills: it starts the
// child with the watch for itself and no parent-death signal, and waits.
func TestHelperParent(t *testing.T) {
	if os.Getenv("PROCGROUP_HELPER") != "1" {
		t.Skip("only run by TestWatchParent")
	}
	c := exec.Command(os.Getenv("PROCGROUP_PYTHON"), "-c", parentWatchCode(syscall.SIGKILL)+groupChild)
	c.Stdout = os.Stdout
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Println("started", c.Process.Pid)
	_ = c.Wait()
}
