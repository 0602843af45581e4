package sandbox

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The eval sandbox runs in the active virtualenv, as the managed server
// does: its code sees that environment's sys.prefix.
func TestEvalRunsInTheVirtualenv(t *testing.T) {
	// No t.Parallel: it sets VIRTUAL_ENV for the process.
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages", venv).CombinedOutput(); err != nil {
		t.Skipf("cannot make a virtualenv with /usr/bin/python3 -m venv: %v: %s", err, out)
	}
	t.Setenv("VIRTUAL_ENV", venv)
	s := launchEval(t)
	res := execEval(t, s, "import sys\nprint(sys.prefix)", 30*time.Second, nil)
	if got := strings.TrimSpace(outputText(res.Outputs)); got != venv {
		t.Errorf("sys.prefix in the sandbox = %q, want the virtualenv %s", got, venv)
	}
}

// A --python that cannot run Jupyter is refused, saying what was tried.
func TestEvalPythonWithoutJupyter(t *testing.T) {
	t.Parallel()
	_, err := LaunchEval(context.Background(), EvalOptions{Python: "/bin/false"})
	if !IsRefusal(err) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if want := "\n  --python: /bin/false: cannot import jupyter_server, ipykernel"; !strings.Contains(err.Error(), want) {
		t.Errorf("refusal %q does not say %q", err, want)
	}
}
