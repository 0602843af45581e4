package jupyter_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// A real virtualenv, made from the machine's Python with its packages
// visible and activated the way `source bin/activate` does (VIRTUAL_ENV),
// is where the managed server is started from.
func TestManagedFromVirtualenv(t *testing.T) {
	// No t.Parallel: it sets VIRTUAL_ENV for the process.
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	// --without-pip: installing pip takes seconds and is not needed here.
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages", venv).CombinedOutput(); err != nil {
		t.Skipf("cannot make a virtualenv with /usr/bin/python3 -m venv: %v: %s", err, out)
	}
	t.Setenv("VIRTUAL_ENV", venv)
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	m, err := jupyter.StartManaged(ctx, jupyter.ManagedOptions{RootDir: root})
	if err != nil {
		t.Fatalf("StartManaged from %s: %v", venv, err)
	}
	defer m.Stop()
	if want := filepath.Join(venv, "bin", "python"); m.Python != want || m.PythonFrom != "VIRTUAL_ENV" {
		t.Errorf("server runs %s (from %s), want %s from VIRTUAL_ENV", m.Python, m.PythonFrom, want)
	}
	c, err := jupyter.NewClient(m.URL, m.Token, jupyter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if _, err := c.Status(ctx); err != nil {
		t.Fatalf("the server started from the virtualenv does not answer: %v", err)
	}
}
