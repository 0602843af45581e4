package jupyter_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// leftovers lists, from ps, the processes that still belong to m: the
// server itself or anything started with its runtime dir (kernels).
func leftovers(t *testing.T, m *jupyter.Managed) []string {
	t.Helper()
	out, err := exec.Command("ps", "-eo", "pid=,stat=,args=").Output()
	if err != nil {
		t.Fatalf("ps: %v", err)
	}
	var left []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(f[1], "Z") {
			continue // zombies are dead, merely not reaped by their parent
		}
		if f[0] == strconv.Itoa(m.PID()) || strings.Contains(line, m.RuntimeDir) {
			left = append(left, strings.TrimSpace(line))
		}
	}
	return left
}

func startManaged(t *testing.T, opts jupyter.ManagedOptions) *jupyter.Managed {
	t.Helper()
	if opts.RootDir == "" {
		opts.RootDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	m, err := jupyter.StartManaged(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	return m
}

func TestManagedStopLeavesNothing(t *testing.T) {
	t.Parallel()
	m := startManaged(t, jupyter.ManagedOptions{})
	if !strings.HasPrefix(m.URL, "http://127.0.0.1:") || len(m.Token) < 32 {
		t.Fatalf("URL %q token %d chars", m.URL, len(m.Token))
	}
	if !strings.Contains(m.LastOutput(), "TCP_NODELAY on kernel websockets") {
		t.Errorf("the nodelay patch did not apply; server output:\n%s", m.LastOutput())
	}
	c, err := jupyter.NewClient(m.URL, m.Token, jupyter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	for i := 0; i < 2; i++ {
		if _, err := c.StartKernel(ctx, ""); err != nil {
			t.Fatal(err)
		}
	}
	if left := leftovers(t, m); len(left) < 3 {
		t.Fatalf("want the server and two kernels running, ps shows %q", left)
	}
	start := time.Now()
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop took %v", time.Since(start))
	if left := leftovers(t, m); len(left) > 0 {
		t.Fatalf("processes left after Stop: %q", left)
	}
	if _, err := os.Stat(m.RuntimeDir); !os.IsNotExist(err) {
		t.Errorf("runtime dir %s still there: %v", m.RuntimeDir, err)
	}
	if _, err := c.Status(ctx); !errors.Is(err, jupyter.ErrUnreachable) {
		t.Errorf("server still answers after Stop: %v", err)
	}
}

func TestManagedEarlyExitShowsOutput(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := jupyter.StartManaged(ctx, jupyter.ManagedOptions{
		RootDir:   t.TempDir(),
		ExtraArgs: []string{"--ServerApp.port_retries=lots"},
	})
	if err == nil {
		t.Fatal("a server with a bad option started")
	}
	if !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "port_retries") {
		t.Fatalf("error does not carry the server's complaint: %v", err)
	}
}

func TestManagedWithoutJupyter(t *testing.T) {
	t.Parallel()
	// An interpreter that cannot import jupyter_server stands in for a
	// machine without Jupyter.
	_, err := jupyter.StartManaged(context.Background(), jupyter.ManagedOptions{RootDir: t.TempDir(), Python: "/bin/false"})
	if !errors.Is(err, jupyter.ErrJupyterNotInstalled) {
		t.Fatalf("error %v, want ErrJupyterNotInstalled", err)
	}
	for _, want := range []string{"apt-get install jupyter-server python3-ipykernel", "--jupyter-url"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestManagedBadRoot(t *testing.T) {
	t.Parallel()
	_, err := jupyter.StartManaged(context.Background(), jupyter.ManagedOptions{RootDir: "/nonexistent/dir"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/dir") {
		t.Fatalf("error %v", err)
	}
}
