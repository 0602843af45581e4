package main

// End-to-end tests of the binary as a person uses it: the workbench running
// in a real terminal (tmux) against a real managed Jupyter server, driven by
// a real MCP client, with the screen read back; and `attach` opening the
// workbench on a stdio server.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// needTmux fails in CI (which installs tmux) and skips elsewhere.
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is required for the workbench end-to-end tests (apt-get install tmux)")
		}
		t.Skip("tmux is not installed")
	}
}

// tmuxSession runs command in a detached tmux session of the given size, on
// a tmux server of its own (tmux -L): a tmux someone else runs on the
// machine can neither delay it nor be disturbed by it. The server is killed
// at cleanup.
type tmuxSession struct {
	t      *testing.T
	socket string // the -L name of the session's own server
	name   string
}

// tmux returns a tmux command on the session's own server.
func (s *tmuxSession) tmux(args ...string) *exec.Cmd {
	return exec.Command("tmux", append([]string{"-L", s.socket}, args...)...)
}

// workbenchRun is the binary's workbench in a real terminal (tmux) on a
// managed Jupyter rooted at a fresh directory, which is also its working
// directory, with an agent connected to it over HTTP.
type workbenchRun struct {
	tm    *tmuxSession
	cs    *sdk.ClientSession
	root  string
	port  int
	token string
}

// startWorkbench starts it: env is added to the token and the quiet
// kernels, args come after the port, root and log file. It returns once
// the header shows the MCP URL and every one of wait, with agent connected
// (closed at cleanup).
func startWorkbench(t *testing.T, agent string, env, args, wait []string) *workbenchRun {
	t.Helper()
	needTmux(t)
	bin := harness.Binary(t)
	w := &workbenchRun{root: t.TempDir(), token: agent + "-token-0123456789"}
	var err error
	if w.port, err = harness.FreePort(); err != nil {
		t.Fatal(err)
	}
	command := fmt.Sprintf("cd %s && exec %s --port %d --root-dir %s --log-file %s", w.root, bin, w.port, w.root, filepath.Join(w.root, "server.log"))
	for _, a := range args {
		command += " " + a
	}
	// CI is set as CI machines set it: termenv then takes no output for a
	// terminal, and the workbench must still draw in colour.
	w.tm = startTmux(t, append([]string{"MCP_TOKEN=" + w.token, "PYDEVD_DISABLE_FILE_VALIDATION=1", "CI=true"}, env...), command)
	w.tm.waitScreen(60*time.Second, append([]string{fmt.Sprintf("127.0.0.1:%d/mcp", w.port)}, wait...)...)
	w.cs, err = harness.ConnectHTTP(context.Background(), agent, fmt.Sprintf("http://127.0.0.1:%d/mcp", w.port), harness.AuthClient(w.token, nil), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.cs.Close() })
	return w
}

func startTmux(t *testing.T, env []string, command string) *tmuxSession {
	t.Helper()
	name := fmt.Sprintf("jms-e2e-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	s := &tmuxSession{t: t, socket: name, name: name}
	args := []string{"new-session", "-d", "-s", name, "-x", "160", "-y", "50"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	args = append(args, command)
	t.Cleanup(s.kill)
	if out, err := s.tmux(args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	return s
}

// quit presses q and waits for the workbench to exit.
func (s *tmuxSession) quit() {
	s.t.Helper()
	s.key("q")
	deadline := time.Now().Add(20 * time.Second)
	for s.alive() && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if s.alive() {
		s.t.Fatalf("the workbench did not exit on q:\n%s", s.screen())
	}
}

// quitLeavingNothing quits the workbench and checks that nothing it started
// (the managed Jupyter server, its kernels) is left running under root.
// The test's own tmux server was started with the workbench's command
// line, root dir included: it is the test's, not the workbench's, and goes
// with kill.
func (s *tmuxSession) quitLeavingNothing(root string) {
	s.t.Helper()
	s.quit()
	s.kill()
	ignore := "tmux -L " + s.socket + " "
	for deadline := time.Now().Add(15 * time.Second); len(leftovers(root, ignore)) > 0 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	if left := leftovers(root, ignore); len(left) > 0 {
		s.t.Fatalf("processes left behind: %q", left)
	}
}

// kill ends the session's tmux server and whatever still runs in it.
func (s *tmuxSession) kill() { _ = s.tmux("kill-server").Run() }

func (s *tmuxSession) screen() string {
	out, _ := s.tmux("capture-pane", "-p", "-t", s.name).Output()
	return string(out)
}

// key sends one key (tmux merges several printable keys into one).
func (s *tmuxSession) key(k string) {
	s.tmux("send-keys", "-t", s.name, k).Run()
}

func (s *tmuxSession) alive() bool {
	return s.tmux("has-session", "-t", s.name).Run() == nil
}

// waitScreen waits until every want is on the screen.
func (s *tmuxSession) waitScreen(timeout time.Duration, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	var scr string
	for time.Now().Before(deadline) {
		scr = s.screen()
		missing := false
		for _, w := range want {
			if !strings.Contains(scr, w) {
				missing = true
			}
		}
		if !missing {
			return scr
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("screen never showed %q; last screen:\n%s", want, scr)
	return ""
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: error result: %s", name, harness.Text(res))
	}
	return res
}

// leftovers lists processes whose command line mentions dir (the managed
// Jupyter server and its kernels carry the root dir or a runtime dir in it),
// but for those that mention one of ignore.
func leftovers(dir string, ignore ...string) []string {
	out, _ := exec.Command("ps", "-eo", "pid,args").Output()
	var found []string
lines:
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.Contains(l, dir) || strings.Contains(l, "ps -eo") {
			continue
		}
		for _, ig := range ignore {
			if strings.Contains(l, ig) {
				continue lines
			}
		}
		found = append(found, strings.TrimSpace(l))
	}
	return found
}

func TestWorkbenchEndToEnd(t *testing.T) {
	w := startWorkbench(t, "e2e-agent", nil, nil, []string{"waiting for an agent"})
	tm, cs, root, token := w.tm, w.cs, w.root, w.token
	if strings.Contains(tm.screen(), token) {
		t.Fatal("the bearer token is shown in clear on the screen")
	}

	call(t, cs, "use_notebook", map[string]any{"notebook_name": "demo", "notebook_path": "demo.ipynb", "mode": "create"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "answer = 41"})
	plot := call(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1,
		"cell_source": "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.figure(figsize=(2,2)); plt.plot([1, 3, 2]); plt.show()"})
	if sc, _ := plot.StructuredContent.(map[string]any); sc == nil || sc["images"] != float64(1) {
		t.Fatalf("plot result: %v", plot.StructuredContent)
	}
	call(t, cs, "edit_cell_source", map[string]any{"cell_index": 1, "old_string": "41", "new_string": "42"})

	// The calls appear in the timeline and the notebook pane shows the new
	// cell (edited) and the plot.
	tm.waitScreen(10*time.Second, "use_notebook", "insert_cell", "edit_cell_sou", "answer = 42", "image/png")

	// A long cell runs; the person interrupts its kernel with a double
	// press, and the agent's call returns with the KeyboardInterrupt.
	type outcome struct {
		res *sdk.CallToolResult
		err error
		dur time.Duration
	}
	done := make(chan outcome, 1)
	go func() {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "insert_execute_code_cell",
			Arguments: map[string]any{"cell_index": -1, "cell_source": "import time\nprint('sleeping', flush=True)\ntime.sleep(60)", "timeout": 90}})
		done <- outcome{res, err, time.Since(start)}
	}()
	tm.waitScreen(20*time.Second, "running", "sleeping")
	focused := false
	for i := 0; i < 6 && !focused; i++ {
		lines := strings.Split(strings.TrimRight(tm.screen(), "\n"), "\n")
		if strings.Contains(lines[len(lines)-1], "i i interrupt") {
			focused = true
			break
		}
		tm.key("Tab")
		time.Sleep(300 * time.Millisecond)
	}
	if !focused {
		t.Fatalf("no pane offered the interrupt key:\n%s", tm.screen())
	}
	tm.key("i")
	tm.waitScreen(5*time.Second, "press i again")
	tm.key("i")
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		if !strings.Contains(harness.Text(o.res), "KeyboardInterrupt") {
			t.Fatalf("interrupted call answered: %s", harness.Text(o.res))
		}
		if o.dur > 30*time.Second {
			t.Fatalf("the interrupt took %v", o.dur)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the interrupt did not stop time.sleep(60):\n%s", tm.screen())
	}

	// q quits; the managed Jupyter server and its kernels go with it.
	tm.quitLeavingNothing(root)
}

func TestAttachShowsStdioCalls(t *testing.T) {
	needTmux(t)
	bin := harness.Binary(t)
	root := t.TempDir()
	runtime := t.TempDir() // isolates the feed records from other servers

	cs := harness.StartStdio(t, []string{"--start-new-code-sandbox", "false", "--root-dir", root}, "XDG_RUNTIME_DIR="+runtime)
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "att", "notebook_path": "att.ipynb", "mode": "create"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "markdown", "cell_source": "# attached"})

	tm := startTmux(t, []string{"XDG_RUNTIME_DIR=" + runtime}, bin+" attach")
	// A workbench that attaches late sees what happened before it came.
	tm.waitScreen(20*time.Second, "stdio", "use_notebook", "insert_cell", "# attached")
	// And what happens while it watches.
	call(t, cs, "list_notebooks", map[string]any{})
	tm.waitScreen(10*time.Second, "list_notebooks")
	tm.key("q")
	deadline := time.Now().Add(10 * time.Second)
	for tm.alive() && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if tm.alive() {
		t.Fatal("attach did not exit on q")
	}
	// Quitting the attached workbench leaves the stdio server serving.
	call(t, cs, "list_notebooks", map[string]any{})

	// Closing the client ends the stdio server, its managed Jupyter and its
	// kernels, and its feed record.
	cs.Close()
	deadline = time.Now().Add(15 * time.Second)
	for len(leftovers(root)) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if left := leftovers(root); len(left) > 0 {
		t.Fatalf("processes left behind: %q", left)
	}
	if recs, _ := filepath.Glob(filepath.Join(runtime, "jupyter-mcp-server", "feed-*.json")); len(recs) > 0 {
		t.Fatalf("feed records left behind: %v", recs)
	}
}
