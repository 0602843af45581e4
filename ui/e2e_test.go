package ui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// colourSGR matches an SGR sequence that sets a colour (tmux writes them
// as 38;5;N, 38;2;R;G;B, or 30-37, 90-97 and their backgrounds).
var colourSGR = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m`)

// TestTmuxEndToEnd runs the workbench in a real terminal (a detached tmux
// session on a private socket), plays the scenario into it, and drives it
// with keys: it checks the screen, that actions reach the backend once, and
// that quitting ends the program.
func TestTmuxEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed: the end-to-end test needs it (apt-get install tmux)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "e2e")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/e2e").CombinedOutput(); err != nil {
		t.Fatalf("build the e2e program: %v\n%s", err, out)
	}
	recording := filepath.Join(dir, "scenario.jsonl")
	f, err := os.Create(recording)
	if err != nil {
		t.Fatal(err)
	}
	rec := observe.NewRecordWriter(f, nil)
	for _, ev := range scenario(t) {
		if err := rec.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	actions := filepath.Join(dir, "actions.log")

	socket := fmt.Sprintf("ui-e2e-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", socket}, args...)...).CombinedOutput()
		return string(out), err
	}
	var socketPath string
	t.Cleanup(func() {
		_, _ = tm("kill-server")
		// tmux leaves the socket file behind.
		if socketPath != "" {
			_ = os.Remove(socketPath)
		}
	})
	// TERM is set so the workbench draws the same in any CI environment.
	cmd := fmt.Sprintf("env TERM=xterm-256color NO_COLOR=1 %s %s %s", bin, recording, actions)
	if out, err := tm("new-session", "-d", "-s", "wb", "-x", "120", "-y", "36", cmd); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	if path, err := tm("display-message", "-p", "#{socket_path}"); err == nil {
		socketPath = strings.TrimSpace(path)
	}
	screen := func() string {
		out, _ := tm("capture-pane", "-t", "wb", "-p")
		return out
	}
	waitScreen := func(what string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s := screen()
			if strings.Contains(s, what) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("the screen never showed %q; it shows:\n%s", what, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	keys := func(ks ...string) {
		t.Helper()
		for _, k := range ks {
			if out, err := tm("send-keys", "-t", "wb", k); err != nil {
				t.Fatalf("send-keys %s: %v\n%s", k, err, out)
			}
			// Keys sent in one burst can arrive as one read; space them so
			// each is its own key press.
			time.Sleep(60 * time.Millisecond)
		}
	}
	readActions := func() []string {
		data, _ := os.ReadFile(actions)
		return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(data)), " ", "_"))
	}
	waitActions := func(n int) []string {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for len(readActions()) < n && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		return readActions()
	}

	s := waitScreen("stream ended") // the whole recording has been played
	// The held call's card took the right column; esc puts it aside
	// (the call stays held) and shows the notebook again.
	for _, want := range []string{"Held delete_cell c6", "delete 1 of 4 cells"} {
		if !strings.Contains(s, want) {
			t.Errorf("the card is not on screen: it lacks %q:\n%s", want, s)
		}
	}
	keys("Escape")
	s = waitScreen("sales · 4 cells")
	for _, want := range []string{"delete_cell", "held", "e2e-…", "sales · 4 cells"} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "e2e-secret-token") {
		t.Fatal("the raw token is on screen")
	}
	// NO_COLOR is set: the terminal holds no colour at all.
	if styled, _ := tm("capture-pane", "-t", "wb", "-p", "-e"); colourSGR.MatchString(styled) {
		t.Errorf("NO_COLOR is set but the screen has colours: %q", colourSGR.FindString(styled))
	}

	// Shrunk below 80x24 the workbench says what it needs; grown back, it
	// draws the panes again.
	if out, err := tm("resize-window", "-t", "wb", "-x", "70", "-y", "20"); err != nil {
		t.Fatalf("tmux resize-window: %v\n%s", err, out)
	}
	waitScreen("the workbench needs at least 80x24; this terminal is 70x20")
	if out, err := tm("resize-window", "-t", "wb", "-x", "120", "-y", "36"); err != nil {
		t.Fatalf("tmux resize-window: %v\n%s", err, out)
	}
	waitScreen("Calls 6")

	// Bring the card back, allow the held call, then interrupt with a
	// double press.
	keys("H")
	waitScreen("Held delete_cell c6")
	time.Sleep(cardSettle) // a key right after the card changed asks again
	keys("y")
	keys("i", "i")
	got := waitActions(2)
	if strings.Join(got, ",") != "decide_c6_true,interrupt_k-5e6f7a8b9c" {
		t.Fatalf("actions %v", got)
	}

	// Search the calls, then open and close help.
	keys("/", "l", "i", "s", "t", "Enter")
	waitScreen("/list 1 of 6 match")
	keys("?")
	waitScreen("Keys (focus: calls")
	keys("Escape")
	waitScreen("Calls 6")

	// Quit: the program ends and takes the tmux session with it.
	keys("q")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := tm("has-session", "-t", "wb"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workbench did not quit on q; screen:\n%s", screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := readActions(); len(got) != 2 {
		t.Errorf("actions after quitting %v, want the two from before", got)
	}
}
