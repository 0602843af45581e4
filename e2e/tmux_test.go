package e2e

// The workbench in a real terminal: a tmux session of its own per test,
// driven one key at a time and read back with capture-pane.

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
	t          *testing.T
	socket     string // the -L name of the session's own server
	socketPath string // where that server's socket file is
	name       string
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
	// Asked now: once the workbench quits, the server is gone and
	// cannot say where its socket was.
	if path, err := s.tmux("display-message", "-p", "#{socket_path}").Output(); err == nil {
		s.socketPath = strings.TrimSpace(string(path))
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
// tmux leaves the socket file behind: it is removed too.
func (s *tmuxSession) kill() {
	_ = s.tmux("kill-server").Run()
	if s.socketPath != "" {
		_ = os.Remove(s.socketPath)
	}
}

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

// waitAny waits until one of want is on the screen and returns the screen.
func (s *tmuxSession) waitAny(timeout time.Duration, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	var scr string
	for time.Now().Before(deadline) {
		scr = s.screen()
		for _, w := range want {
			if strings.Contains(scr, w) {
				return scr
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("screen never showed any of %q; last screen:\n%s", want, scr)
	return ""
}

// waitFor waits until ok holds for the screen, and returns that screen.
func waitFor(t *testing.T, tm *tmuxSession, timeout time.Duration, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	scr := tm.screen()
	for !ok(scr) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; the screen shows:\n%s", timeout, what, scr)
		}
		time.Sleep(200 * time.Millisecond)
		scr = tm.screen()
	}
	return scr
}

// resize sets the terminal's size.
func (s *tmuxSession) resize(w, h int) {
	s.t.Helper()
	if out, err := s.tmux("resize-window", "-t", s.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h)).CombinedOutput(); err != nil {
		s.t.Fatalf("tmux resize-window: %v %s", err, out)
	}
	s.settle()
}

// settle waits until the program has redrawn: two captures a moment apart
// are the same (a capture right after a resize may hold the frame of the
// old size).
func (s *tmuxSession) settle() {
	prev := s.screen()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		cur := s.screen()
		if cur == prev {
			return
		}
		prev = cur
	}
}

// styled is the screen with its escape sequences.
func (s *tmuxSession) styled() string {
	out, _ := s.tmux("capture-pane", "-e", "-p", "-t", s.name).Output()
	return string(out)
}
