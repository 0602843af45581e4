//go:build linux

// These tests read /proc to see which processes a run leaves behind.

package reliability

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fixedJupyter is a jupyter-server on a port and token chosen by the test,
// so that it can be killed and started again at the same address, as a
// person restarting their server would.
type fixedJupyter struct {
	t       *testing.T
	root    string
	runtime string
	port    int
	token   string
	cmd     *exec.Cmd
	exited  chan struct{}
}

func (j *fixedJupyter) url() string { return fmt.Sprintf("http://127.0.0.1:%d/", j.port) }

func (j *fixedJupyter) start() {
	t := j.t
	t.Helper()
	args := []string{"--no-browser", "--ServerApp.ip=127.0.0.1", "--ServerApp.port=" + strconv.Itoa(j.port),
		"--ServerApp.port_retries=0", "--ServerApp.root_dir=" + j.root, "--ServerApp.token=" + j.token,
		"--KernelManager.autorestart=False"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-root")
	}
	j.cmd = exec.Command("/usr/bin/python3", append([]string{"-m", "jupyter_server"}, args...)...)
	j.cmd.Env = append(harness.CleanEnv(), "JUPYTER_RUNTIME_DIR="+j.runtime)
	j.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &harness.LockedBuffer{}
	j.cmd.Stdout, j.cmd.Stderr = out, out
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	j.exited = exited
	cmd := j.cmd
	go func() { cmd.Wait(); close(exited) }()
	c, _ := jupyter.NewClient(j.url(), j.token, jupyter.Options{Timeout: 2 * time.Second})
	if !waitFor(60*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := c.Status(ctx)
		return err == nil
	}) {
		t.Fatalf("jupyter-server on port %d did not come up:\n%s", j.port, out.String())
	}
}

// crash kills the server and its kernels with SIGKILL, as a crash or a
// machine going down would.
func (j *fixedJupyter) crash() {
	victims := append(descendantsOf(j.cmd.Process.Pid), mentioning(j.runtime)...)
	_ = syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
	<-j.exited
	killAll(victims)
}

func startFixedJupyter(t *testing.T) *fixedJupyter {
	jupytertest.Shared(t) // skips with the others when Jupyter is absent and JUPYTER_TESTS=skip
	j := &fixedJupyter{t: t, root: t.TempDir(), runtime: t.TempDir(), port: freePort(t), token: "fixed-jupyter-token-31a9"}
	j.start()
	t.Cleanup(func() {
		select {
		case <-j.exited:
		default:
			j.crash()
		}
		killAll(mentioning(j.runtime))
	})
	return j
}

// The Jupyter server dies mid-session and comes back at the same address:
// while it is down, calls that need it fail fast with an error naming it;
// when it is back, editing works at once and execution after
// restart_notebook gives the notebook a kernel again.
func TestJupyterRestartMidSession(t *testing.T) {
	j := startFixedJupyter(t)
	if err := os.WriteFile(j.root+"/r.ipynb", []byte(`{"cells":[{"cell_type":"code","id":"c0","metadata":{},"source":"print(1+1)","outputs":[],"execution_count":null}],"metadata":{},"nbformat":4,"nbformat_minor":5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := harness.StartHTTP(t, "restart-token", "--jupyter-url", j.url(), "--jupyter-token", j.token, "--log-level", "debug")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("binary stderr:\n%s", p.Stderr.String())
		}
	})
	cs := p.Connect(t)
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "r", "notebook_path": "r.ipynb"})
	if text, _ := ok(t, cs, "execute_cell", map[string]any{"cell_index": 0}); !strings.Contains(text, "2") {
		t.Fatalf("execute before the crash: %q", text)
	}

	// A call in flight when Jupyter dies ends within seconds naming the
	// fault, instead of waiting out its 30 s of sleep or its timeout.
	type answer struct {
		res  *sdk.CallToolResult
		took time.Duration
		end  time.Time
	}
	inflight := make(chan answer, 1)
	go func() {
		start := time.Now()
		res := callTool(t, cs, "execute_code", map[string]any{"code": "import time; open('started', 'w').close(); time.sleep(30)", "timeout": 60})
		inflight <- answer{res, time.Since(start), time.Now()}
	}()
	// The kernel runs in the notebook's directory: the file says the
	// sleep has begun.
	if !waitFor(60*time.Second, func() bool {
		_, err := os.Stat(j.root + "/started")
		return err == nil
	}) {
		t.Fatal("the kernel never started the sleep")
	}
	crashed := time.Now()
	j.crash()
	server := fmt.Sprintf("127.0.0.1:%d", j.port)
	select {
	case a := <-inflight:
		text := textOf(a.res)
		t.Logf("in flight: execute_code ended %v after the crash (%v in all): error=%v %s", a.end.Sub(crashed).Round(time.Millisecond), a.took.Round(time.Millisecond), a.res.IsError, text)
		if !a.res.IsError || !strings.Contains(text, server) {
			t.Errorf("the execution in flight when Jupyter died says %q: it should fail naming the server", text)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("the execution in flight when Jupyter died did not end within 25 s")
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "x = 1"}},
		{"execute_cell", map[string]any{"cell_index": 0, "timeout": 60}},
		{"execute_code", map[string]any{"code": "1", "timeout": 60}},
		{"list_kernels", nil},
		{"list_files", nil},
		{"use_notebook", map[string]any{"notebook_name": "r2", "notebook_path": "new.ipynb", "mode": "create"}},
	} {
		start := time.Now()
		res := callTool(t, cs, c.tool, c.args)
		took := time.Since(start)
		text := textOf(res)
		t.Logf("down: %s took %v: %s", c.tool, took.Round(time.Millisecond), text)
		if !res.IsError {
			t.Errorf("%s succeeded while Jupyter is down: %s", c.tool, text)
		}
		if took > 10*time.Second {
			t.Errorf("%s took %v to fail while Jupyter is down", c.tool, took)
		}
		if !strings.Contains(text, "is not answering") || strings.Contains(text, j.token) {
			t.Errorf("%s error should say Jupyter is not answering, without its token: %q", c.tool, text)
		}
		if !strings.Contains(text, server) {
			if c.tool == "execute_code" {
				t.Errorf("with Jupyter down, execute_code says %q: it does not name the server and says to retry shortly", text)
			} else {
				t.Errorf("%s error does not name the server: %q", c.tool, text)
			}
		}
	}
	// Reads check the file on the server (issue 13, section 3), so a read
	// either says Jupyter is not answering or serves the cell as it was.
	if res := callTool(t, cs, "read_cell", map[string]any{"cell_index": 0}); res.IsError {
		if text := textOf(res); !strings.Contains(text, "is not answering") || !strings.Contains(text, server) {
			t.Errorf("read_cell while down: %q", text)
		}
	} else if text := textOf(res); !strings.Contains(text, "print(1+1)") {
		t.Errorf("read_cell while down: %q", text)
	}

	j.start()
	// Edits work again at once, with no reconnect.
	ok(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "print('back')"})
	// The old kernel died with the server. Executing should say so and
	// what to do; restart_notebook should give the notebook a kernel again.
	res := callTool(t, cs, "execute_cell", map[string]any{"cell_index": 1, "timeout": 30})
	t.Logf("execute after the restart: error=%v %s", res.IsError, textOf(res))
	if !res.IsError && !strings.Contains(textOf(res), "back") {
		t.Errorf("execute after the restart neither failed nor ran: %s", textOf(res))
	}
	if res.IsError {
		text := strings.ToLower(textOf(res))
		if !strings.Contains(text, "restart_notebook") && !strings.Contains(text, "use_notebook") {
			t.Errorf("after a Jupyter restart, execute_cell on the lost kernel says %q: it should say the kernel is gone and to call restart_notebook", textOf(res))
		}
		// restart_notebook gives the notebook a fresh kernel in place of
		// the one that went with the server.
		ok(t, cs, "restart_notebook", map[string]any{"notebook_name": "r"})
	}
	if text, _ := ok(t, cs, "execute_cell", map[string]any{"cell_index": 1, "timeout": 30}); !strings.Contains(text, "back") {
		t.Errorf("execute after the recovery: %q", text)
	}
	nb := parseFile(t, j.root+"/r.ipynb")
	if len(nb.Cells) != 2 {
		t.Errorf("the notebook has %d cells after the restart, want 2", len(nb.Cells))
	}
}
