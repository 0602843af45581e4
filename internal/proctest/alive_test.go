package proctest

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// A child is alive while it runs, and gone once it exited and was reaped.
func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	name, args := "sleep", []string{"30"}
	if runtime.GOOS == "windows" {
		name, args = "ping", []string{"-n", "30", "127.0.0.1"}
	}
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Errorf("running child %d not alive", pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if Alive(pid) {
		t.Errorf("reaped child %d still alive", pid)
	}
}
