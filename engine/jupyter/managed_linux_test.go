package jupyter_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// Finding the kernels a crashed server left reads /proc: this test is
// Linux's. Elsewhere ipykernel's parent poller ends such kernels itself.

// When the server itself crashes, its kernels (in sessions of their own)
// survive it; Stop must still find and kill them.
func TestManagedStopKillsOrphanedKernels(t *testing.T) {
	t.Parallel()
	m := startManaged(t, jupyter.ManagedOptions{})
	c, _ := jupyter.NewClient(m.URL, m.Token, jupyter.Options{})
	if _, err := c.StartKernel(testCtx(t), ""); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(m.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-m.Exited()
	if left := leftovers(t, m); len(left) == 0 {
		t.Fatal("expected the kernel to outlive the killed server")
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := leftovers(t, m)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left after Stop: %q", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
