package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// TestContentCannotDriveTheTerminal runs the workbench in a tmux of its own
// that honours what a hostile cell would use (set-clipboard on: OSC 52
// writes a tmux buffer; OSC 0 and 2 set the pane title; CSI 2J clears the
// screen), has an agent run a cell printing those and insert a markdown cell
// holding them raw (in its source and so in the call's arguments), and checks
// that nothing reached the terminal: no buffer, the title as it was, the
// header still on the first line.
func TestContentCannotDriveTheTerminal(t *testing.T) {
	needTmux(t)
	bin := harness.Binary(t)
	root := t.TempDir()
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	token := "e2e-token-0123456789"

	sock := fmt.Sprintf("jms-sanitize-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	conf := filepath.Join(root, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set-option -g set-clipboard on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", sock, "-f", conf}, args...)...).CombinedOutput()
		return string(out), err
	}
	socket := ""
	t.Cleanup(func() {
		tmux("kill-server")
		if socket != "" {
			os.Remove(socket) // kill-server leaves the socket file behind
		}
	})
	if out, err := tmux("new-session", "-d", "-s", "w", "-x", "160", "-y", "50",
		"-e", "MCP_TOKEN="+token, "-e", "PYDEVD_DISABLE_FILE_VALIDATION=1",
		fmt.Sprintf("%s --port %d --root-dir %s --log-file %s", bin, port, root, filepath.Join(root, "server.log"))); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	if out, err := tmux("display-message", "-p", "#{socket_path}"); err == nil {
		socket = strings.TrimSpace(out)
	}
	if out, _ := tmux("show-options", "-g", "set-clipboard"); !strings.Contains(out, "on") {
		t.Fatalf("set-clipboard is %q", out)
	}
	screen := func() string { out, _ := tmux("capture-pane", "-p", "-t", "w"); return out }
	// waitScreen waits until every want is on the screen and returns the
	// first one missing when time is up.
	waitScreen := func(timeout time.Duration, want ...string) (scr, missing string) {
		deadline := time.Now().Add(timeout)
		for {
			scr, missing = screen(), ""
			for _, w := range want {
				if !strings.Contains(scr, w) {
					missing = w
				}
			}
			if missing == "" || time.Now().After(deadline) {
				return scr, missing
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	title := func() string {
		out, _ := tmux("display-message", "-p", "-t", "w", "#{pane_title}")
		return strings.TrimSpace(out)
	}
	buffers := func() string {
		out, _ := tmux("list-buffers")
		return strings.TrimSpace(out)
	}

	if scr, missing := waitScreen(60*time.Second, fmt.Sprintf("127.0.0.1:%d/mcp", port), "waiting for an agent"); missing != "" {
		t.Fatalf("the workbench never showed %q:\n%s", missing, scr)
	}
	titleBefore := title()
	if b := buffers(); b != "" {
		t.Fatalf("tmux has buffers before the test: %s", b)
	}

	cs, err := harness.ConnectHTTP(context.Background(), "hostile-agent", fmt.Sprintf("http://127.0.0.1:%d/mcp", port), harness.AuthClient(token, nil), true)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	call(t, cs, "use_notebook", map[string]any{"notebook_name": "hostile", "notebook_path": "hostile.ipynb", "mode": "create"})
	// The escapes are in the output only: the source spells them \x1b.
	res := call(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": `print("osc52:\x1b]52;c;aGVsbG8=\x07:end")
print("title:\x1b]0;pwned-by-output\x07:end")
print("clear:\x1b[2J\x1b[H:end")`})
	if !strings.Contains(harness.Text(res), "osc52:") {
		t.Fatalf("the cell printed: %s", harness.Text(res))
	}
	// Raw escapes in a cell's source, and so in the agent's arguments.
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "markdown",
		"cell_source": "md:\x1b]52;c;d29ybGQ=\x07\x1b]2;pwned-by-source\x07\x1b[2J:end"})

	// The output is shown, its escapes dropped; the source, its escapes
	// spelled as markers. (Without the sanitizer the wait runs out: the
	// screen was cleared under the workbench.)
	_, missing := waitScreen(20*time.Second, "osc52::end", "title::end", "clear::end", "md:⟨ESC⟩]52;c;d29ybGQ=⟨BEL⟩", "insert_cell")
	// Let the terminal take in whatever was drawn.
	time.Sleep(time.Second)
	scr := screen()
	if missing != "" {
		t.Errorf("the screen does not show %q", missing)
	}
	if b := buffers(); b != "" {
		t.Errorf("a cell wrote the clipboard: tmux buffers %q", b)
	}
	if got := title(); got != titleBefore {
		t.Errorf("a cell set the pane title: %q, was %q", got, titleBefore)
	}
	if first, _, _ := strings.Cut(scr, "\n"); !strings.Contains(first, "jupyter-mcp") || !strings.Contains(first, fmt.Sprintf("127.0.0.1:%d/mcp", port)) {
		t.Errorf("the header is not on the first line any more; screen:\n%s", scr)
	}

	tmux("send-keys", "-t", "w", "q")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := tmux("has-session", "-t", "w"); err != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := tmux("has-session", "-t", "w"); err == nil {
		t.Fatalf("the workbench did not exit on q:\n%s", screen())
	}
	time.Sleep(500 * time.Millisecond)
	if left := leftovers(root); len(left) > 0 {
		t.Fatalf("processes left behind: %q", left)
	}
}
