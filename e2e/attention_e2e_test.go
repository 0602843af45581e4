package e2e

// End-to-end tests of what a person must not miss (issue 24), read from the
// screen of the binary's workbench in a real terminal (tmux) at 200x60 and
// at 80x24, against real Jupyter servers, driven by a go-sdk client: how to
// connect, Jupyter's health, failures, the time held, the interrupt told to
// the agent, the smaller wrongs, and the room the layout gives to what runs.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// benchRun is the workbench in tmux, with or without an agent yet.
type benchRun struct {
	t        *testing.T
	tm       *tmuxSession
	root     string
	endpoint string
}

// startBench starts the workbench on a managed Jupyter rooted at a fresh
// directory (unless args name another server), in a terminal of w×h, and
// waits for every one of wait. env comes after the quiet kernels; no token
// is set unless env sets MCP_TOKEN.
func startBench(t *testing.T, env, args []string, w, h int, wait ...string) *benchRun {
	t.Helper()
	needTmux(t)
	bin := harness.Binary(t)
	b := &benchRun{t: t, root: t.TempDir()}
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	b.endpoint = fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	command := fmt.Sprintf("cd %s && exec %s --port %d --root-dir %s --log-file %s", b.root, bin, port, b.root, filepath.Join(b.root, "server.log"))
	for _, a := range args {
		command += " " + a
	}
	b.tm = startTmux(t, append([]string{"PYDEVD_DISABLE_FILE_VALIDATION=1", "CI=true", "XDG_STATE_HOME=" + filepath.Join(b.root, "..", "state")}, env...), command)
	b.tm.resize(w, h)
	b.tm.waitScreen(60*time.Second, wait...)
	return b
}

// typeText types s into the terminal.
func (s *tmuxSession) typeText(text string) {
	s.t.Helper()
	if out, err := s.tmux("send-keys", "-t", s.name, "-l", text).CombinedOutput(); err != nil {
		s.t.Fatalf("send-keys: %v %s", err, out)
	}
}

// waitGone waits until none of gone is on the screen.
func (s *tmuxSession) waitGone(timeout time.Duration, gone ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	var scr string
	for time.Now().Before(deadline) {
		scr = s.screen()
		left := false
		for _, g := range gone {
			if strings.Contains(scr, g) {
				left = true
			}
		}
		if !left {
			return scr
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("the screen still shows one of %q:\n%s", gone, scr)
	return ""
}

// connect opens an agent's session with the given token.
func (b *benchRun) connect(name, token string) *sdk.ClientSession {
	b.t.Helper()
	cs, err := harness.ConnectHTTP(context.Background(), name, b.endpoint, harness.AuthClient(token, nil), true)
	if err != nil {
		b.t.Fatalf("connecting with the token from the screen: %v", err)
	}
	b.t.Cleanup(func() { cs.Close() })
	return cs
}

// callInBackground makes a call on a goroutine; the channel gets its result.
func callInBackground(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) <-chan *sdk.CallToolResult {
	out := make(chan *sdk.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			res = &sdk.CallToolResult{IsError: true}
		}
		out <- res
	}()
	return out
}

// await takes a result, failing when none comes.
func await(t *testing.T, tm *tmuxSession, ch <-chan *sdk.CallToolResult) *sdk.CallToolResult {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-time.After(100 * time.Second):
		t.Fatalf("no result; the screen shows:\n%s", tm.screen())
	}
	return nil
}

var hexToken = regexp.MustCompile(`[0-9a-f]{48}`)

// Connect in one look: before any agent, the screen has the endpoint and
// the lines to paste, the generated token masked; t shows it and the lines
// with it (an agent connects with what the screen shows), t masks it again;
// c says it used OSC 52, and tmux got it; the first call ends the screen.
func TestConnectInOneLookE2E(t *testing.T) {
	b := startBench(t, nil, nil, 200, 60, "Connect an agent", "jupyter up")
	tm := b.tm
	for _, sz := range [][2]int{{200, 60}, {80, 24}} {
		tm.resize(sz[0], sz[1])
		scr := tm.waitScreen(10*time.Second, "Connect an agent", "MCP endpoint  "+b.endpoint, "claude mcp add --transport http jupyter "+b.endpoint, `{"mcpServers": {"jupyter": {"type": "http",`)
		if hexToken.MatchString(scr) {
			t.Fatalf("%dx%d: the token is on the screen before t:\n%s", sz[0], sz[1], scr)
		}
	}
	tm.resize(200, 60)
	tm.key("t")
	scr := tm.waitScreen(10*time.Second, "t hides it")
	tok := hexToken.FindString(scr)
	if tok == "" || strings.Count(scr, tok) < 4 {
		t.Fatalf("after t the token is not in the header, its line, the claude line and mcp.json:\n%s", scr)
	}
	if !strings.Contains(scr, `claude mcp add --transport http jupyter `+b.endpoint+` --header "Authorization: Bearer `+tok+`"`) {
		t.Errorf("the claude line at 200x60:\n%s", scr)
	}
	// At 80x24 the lines break where a shell and JSON allow: joined, they
	// are the same command and entry.
	tm.resize(80, 24)
	scr = tm.waitScreen(10*time.Second, "t hides it")
	var claude []string
	for _, l := range strings.Split(scr, "\n") {
		l = strings.TrimRight(l, " ")
		if strings.HasPrefix(l, "claude mcp add") || (len(claude) > 0 && strings.HasSuffix(claude[len(claude)-1], `\`)) {
			claude = append(claude, l)
		}
	}
	joined := strings.Join(strings.Fields(strings.ReplaceAll(strings.Join(claude, "\n"), "\\\n", " ")), " ")
	if joined != `claude mcp add --transport http jupyter `+b.endpoint+` --header "Authorization: Bearer `+tok+`"` {
		t.Errorf("the claude lines at 80x24 join to %q", joined)
	}
	tm.key("t")
	scr = tm.waitGone(10*time.Second, tok)
	if !strings.Contains(scr, "t shows it") {
		t.Errorf("after t again:\n%s", scr)
	}

	// c: tmux with set-clipboard on turns the OSC 52 into a buffer.
	if out, err := tm.tmux("set-option", "-g", "set-clipboard", "on").CombinedOutput(); err != nil {
		t.Fatalf("set-clipboard: %v %s", err, out)
	}
	tm.key("c")
	tm.waitScreen(10*time.Second, "token sent to the terminal clipboard (OSC 52); if nothing")
	deadline := time.Now().Add(10 * time.Second)
	for {
		buf, _ := tm.tmux("show-buffer").Output()
		if strings.TrimSpace(string(buf)) == tok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tmux's buffer holds %q, not the token", buf)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// An agent connects with the token read off the screen.
	cs := b.connect("connect-agent", tok)
	call(t, cs, "list_files", map[string]any{"path": ""})
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		tm.resize(sz[0], sz[1])
		scr = tm.waitScreen(10*time.Second, "list_files", "Calls 1")
		if strings.Contains(scr, "Connect an agent") {
			t.Errorf("%dx%d: the start screen is still shown after a call:\n%s", sz[0], sz[1], scr)
		}
	}
	tm.quitLeavingNothing(b.root)
}

// Jupyter's health is in the header from the start, before any agent call,
// with the fix in words: token refused (403), not answering, failed to
// start (its whole message on screen, never cut), and it is kept current:
// a server that goes away is seen going. Headless, a failed start reaches
// stderr as readable lines.
func TestJupyterHealthE2E(t *testing.T) {
	srv := jupytertest.Start(t)

	t.Run("token refused", func(t *testing.T) {
		b := startBench(t, []string{"MCP_TOKEN=health-token-0123456789"}, []string{"--jupyter-url", srv.URL, "--jupyter-token", "not-the-token"}, 200, 60,
			"jupyter token refused (403)")
		for _, sz := range [][2]int{{200, 60}, {80, 24}} {
			b.tm.resize(sz[0], sz[1])
			scr := b.tm.waitScreen(10*time.Second, "jupyter token refused (403)", "refused the token (403)", "--jupyter-token")
			if flat := strings.Join(strings.Fields(scr), " "); !strings.Contains(flat, "start jupyter-mcp-server again with the token that Jupyter printed") {
				t.Errorf("%dx%d: no fix in words:\n%s", sz[0], sz[1], scr)
			}
		}
		b.tm.quitLeavingNothing(b.root)
	})

	t.Run("not answering, kept current", func(t *testing.T) {
		other := jupytertest.Start(t)
		b := startBench(t, []string{"MCP_TOKEN=health-token-0123456789"}, []string{"--jupyter-url", other.URL, "--jupyter-token", other.Token}, 200, 60, "jupyter up")
		if err := other.Managed.Stop(); err != nil {
			t.Fatal(err)
		}
		for _, sz := range [][2]int{{200, 60}, {80, 24}} {
			b.tm.resize(sz[0], sz[1])
			scr := b.tm.waitScreen(20*time.Second, "jupyter not answering", "is not answering (connection refused)")
			if flat := strings.Join(strings.Fields(scr), " "); !strings.Contains(flat, "start it, or point --jupyter-url at a server that runs") {
				t.Errorf("%dx%d: no fix in words:\n%s", sz[0], sz[1], scr)
			}
		}
		b.tm.quitLeavingNothing(b.root)
	})

	t.Run("failed to start", func(t *testing.T) {
		b := startBench(t, []string{"MCP_TOKEN=health-token-0123456789"}, []string{"--python", "/nonexistent/python3"}, 200, 60, "jupyter failed to start")
		want := []string{"no Python that can import jupyter_server and ipykernel was found", "--python: /nonexistent/python3", "Install Jupyter with one of:",
			"pip (in a virtualenv):", "--jupyter-url URL --jupyter-token TOKEN", "Connect an agent"}
		scr := b.tm.waitScreen(10*time.Second, want...)
		if strings.Contains(scr, "more lines below") {
			t.Errorf("200x60 does not show the whole message at once:\n%s", scr)
		}
		// At 80x24 it wraps, and what does not fit scrolls: every line of
		// it is seen, none cut.
		b.tm.resize(80, 24)
		seen := ""
		for i := 0; i < 12; i++ {
			seen += b.tm.screen()
			b.tm.key("Down")
			time.Sleep(100 * time.Millisecond)
		}
		flat := strings.Join(strings.Fields(seen), " ")
		for _, w := range want {
			if !strings.Contains(flat, w) {
				t.Errorf("80x24: %q is never on the screen", w)
			}
		}
		b.tm.quitLeavingNothing(b.root)
	})

	t.Run("headless stderr", func(t *testing.T) {
		port, err := harness.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, harness.Binary(t), "--transport", "streamable-http", "--port", fmt.Sprint(port), "--python", "/nonexistent/python3", "--root-dir", t.TempDir())
		cmd.Env = harness.CleanEnv("MCP_TOKEN=health-token-0123456789")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		sc := bufio.NewScanner(stderr)
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.HasPrefix(sc.Text(), "MCP keeps answering") {
				break
			}
		}
		text := strings.Join(lines, "\n")
		for _, want := range []string{"ERROR: the managed Jupyter server failed to start:", "  Install Jupyter with one of:", "    pip (in a virtualenv):"} {
			found := false
			for _, l := range lines {
				if strings.HasPrefix(l, want) {
					found = true
				}
			}
			if !found {
				t.Errorf("stderr has no line starting %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, `\n`) {
			t.Errorf("stderr holds a literal \\n:\n%s", text)
		}
	})
}

// Failures show as failures, the time held apart from the run, and the
// person's interrupt named in the agent's result; stats and search tell
// cell errors apart.
func TestFailuresHeldTimeInterruptE2E(t *testing.T) {
	const token = "failures-token-0123456789"
	b := startBench(t, []string{"MCP_TOKEN=" + token}, []string{"--approve", "execute"}, 200, 60, "Connect an agent", "approval execute")
	tm := b.tm
	cs := b.connect("failures-agent", token)
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "fail", "notebook_path": "fail.ipynb", "mode": "create"})

	// A cell that raises, held first for 2 s.
	ch := callInBackground(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": "x = 1\n1/0"})
	tm.waitScreen(30*time.Second, "insert_execute_code_cell  held")
	time.Sleep(2 * time.Second)
	tm.key("y")
	res := await(t, tm, ch)
	if res.IsError || !strings.Contains(harness.Text(res), "ZeroDivisionError") {
		t.Fatalf("the cell's result: %s", harness.Text(res))
	}
	scr := tm.waitScreen(20*time.Second, "ok · ZeroDivisionError · held ")
	row := lineWith(scr, "ZeroDivisionError · held")
	m := regexp.MustCompile(`(\S+) ok · ZeroDivisionError · held (\S+)`).FindStringSubmatch(row)
	if m == nil {
		t.Fatalf("no took and held on the row: %q", row)
	}
	took, err1 := time.ParseDuration(m[1])
	held, err2 := time.ParseDuration(m[2])
	if err1 != nil || err2 != nil || held < 2*time.Second || took >= held {
		t.Errorf("the row does not measure the run (%v) apart from the 2 s held (%v): %q", took, held, row)
	}
	tm.resize(80, 24)
	tm.waitScreen(10*time.Second, "ZeroDivisionError")
	tm.resize(200, 60)

	// Stats count it as a cell error, the time held beside.
	tm.key("s")
	scr = tm.waitScreen(10*time.Second, "cell err", "held", "Slowest calls")
	if r := lineWith(scr, "  insert_execute_code_cell"); !regexp.MustCompile(`insert_execute_code_cell\s+1\s+0\s+1\s+0\s+0`).MatchString(r) {
		t.Errorf("the stats row (calls ok cell-err tool-err proto-err): %q\n%s", r, scr)
	}
	tm.key("s")
	tm.waitGone(10*time.Second, "Slowest calls")
	// Search finds it. The typed query is waited for on screen before
	// Enter: under load a key sent while the stats view closes can land
	// before the search field opens.
	tm.key("/")
	tm.typeText("status:cell-error")
	tm.waitScreen(10*time.Second, "/status:cell-error")
	tm.key("Enter")
	tm.waitScreen(10*time.Second, "/status:cell-error 1 of 2 match")
	tm.key("Escape")
	tm.waitGone(10*time.Second, "/status:cell-error")

	// The person interrupts a long run: the agent is told, the timeline
	// names the KeyboardInterrupt.
	ch = callInBackground(t, cs, "execute_code", map[string]any{"code": "import time\nprint('sleeping', flush=True)\ntime.sleep(60)", "timeout": 90})
	tm.waitScreen(30*time.Second, "execute_code  held")
	decide(tm, "y") // after reading the card (card_e2e_test.go)
	// The held card shows the code (and its "sleeping"): wait for the run.
	tm.waitScreen(30*time.Second, "Executions 1 running", "│  sleeping")
	tm.key("i")
	tm.key("i")
	res = await(t, tm, ch)
	if text := harness.Text(res); !strings.Contains(text, "KeyboardInterrupt") || !strings.Contains(text, "the person supervising at the workbench interrupted the kernel while this code ran") {
		t.Errorf("the agent is not told the person interrupted: %s", text)
	}
	for _, sz := range [][2]int{{200, 60}, {80, 24}} {
		tm.resize(sz[0], sz[1])
		tm.waitScreen(10*time.Second, "KeyboardInterrupt")
	}
	tm.quitLeavingNothing(b.root)
}

// lineWith is the first line of screen that holds s.
func lineWith(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// The smaller wrongs: code arguments as code and leading the args column;
// redaction keeps the prose of an error; more-above / more-below marks; E
// writes outside the served root and replay plays it, with the recorded
// times and without the keys that do nothing there; NO_COLOR strips the
// kernel's colours.
func TestSmallerWrongsE2E(t *testing.T) {
	const token = "wrongs-token-0123456789"
	b := startBench(t, []string{"MCP_TOKEN=" + token, "NO_COLOR=1", "TERM=xterm-256color"}, nil, 200, 60, "Connect an agent")
	tm := b.tm
	cs := b.connect("wrongs-agent", token)
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "w", "notebook_path": "w.ipynb", "mode": "create"})
	call(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1,
		"cell_source": "colour = chr(27) + '[31m'\nprint(colour + 'RED-TEXT' + chr(27) + '[0m')\nresult = 6 * 7"})
	scr := tm.waitScreen(20*time.Second, "RED-TEXT", "│ colour = chr(27) + '[31m'", "cell_source:", "colour = chr(27) + '[31m' cell_inde")
	if strings.Contains(scr, `\nprint`) {
		t.Errorf("the code is shown as an escaped string:\n%s", scr)
	}
	if st := tm.styled(); regexp.MustCompile(`\x1b\[[0-9;]*3[0-9]m|\x1b\[[0-9;]*38;`).MatchString(st) {
		t.Errorf("NO_COLOR, and the screen has colours: %q", regexp.MustCompile(`\x1b\[[0-9;]*m`).FindAllString(st, 5))
	}

	// Redaction replaces values, not the words around "token".
	jupyterURL := regexp.MustCompile(`jupyter (http://127\.0\.0\.1:\d+/)`).FindStringSubmatch(tm.screen())
	if jupyterURL == nil {
		t.Fatalf("no Jupyter URL in the header:\n%s", tm.screen())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "connect_to_jupyter", Arguments: map[string]any{"jupyter_url": jupyterURL[1], "jupyter_token": "wrong-token-42"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := harness.Text(res); !res.IsError || !strings.Contains(text, "refused the token (403)") || !strings.Contains(text, "check that the token matches the server's") || strings.Contains(text, "wrong-token-42") {
		t.Errorf("connect_to_jupyter with a wrong token answered: %s", text)
	}

	// Enough calls to leave some out of view at 80x24.
	for i := 0; i < 25; i++ {
		call(t, cs, "list_files", map[string]any{"path": ""})
	}
	tm.resize(80, 24)
	tm.waitScreen(10*time.Second, "more above")
	tm.key("g")
	tm.waitScreen(10*time.Second, "more below")
	tm.key("G")

	// E: the export goes to a folder of our own, outside the served root,
	// and the status line says where; the agent does not see it.
	tm.resize(200, 60)
	tm.key("E")
	scr = tm.waitScreen(10*time.Second, "exported ")
	m := regexp.MustCompile(`exported (\d+) calls to (\S+\.jsonl)`).FindStringSubmatch(scr)
	if m == nil {
		t.Fatalf("the status line does not say where the export went:\n%s", scr)
	}
	path := m[2]
	if rel, err := filepath.Rel(b.root, path); err == nil && !strings.HasPrefix(rel, "..") {
		t.Errorf("the export %s is inside the served root %s", path, b.root)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the export: %v", err)
	}
	if text := harness.Text(call(t, cs, "list_files", map[string]any{"path": "", "max_depth": 3})); strings.Contains(text, "jupyter-mcp-calls") {
		t.Errorf("the agent lists the export: %s", text)
	}
	tm.quitLeavingNothing(b.root)

	// replay plays the export: its calls, at the times they were made,
	// without resend or undo on offer.
	first := ""
	if data, err := os.ReadFile(path); err == nil {
		if mm := regexp.MustCompile(`"started":"([^"]+)"`).FindStringSubmatch(string(data)); mm != nil {
			if at, err := time.Parse(time.RFC3339Nano, mm[1]); err == nil {
				first = at.Local().Format("15:04:05")
			}
		}
	}
	if first == "" {
		t.Fatal("the export holds no start time")
	}
	rp := startTmux(t, []string{"NO_COLOR=1"}, fmt.Sprintf("exec %s replay --speed 0 %s", harness.Binary(t), path))
	rp.resize(200, 60)
	rp.waitScreen(30*time.Second, "replaying "+filepath.Base(path), "use_notebook", first, "connect_to_jupyter", "recorded ")
	rp.key("?")
	help := rp.waitScreen(10*time.Second, "Keys")
	if strings.Contains(help, "resend call") || strings.Contains(help, "undo the call") {
		t.Errorf("the replay offers resend or undo:\n%s", help)
	}
	rp.key("Escape") // any key but q closes the help
	rp.resize(80, 24)
	rp.waitScreen(10*time.Second, "list_files")
	rp.quit()
}

// Room for what is active: at 200x60 a running cell's output fills the
// executions pane instead of a third of it, and a plot is drawn larger than
// at 80x24.
func TestRoomForTheActiveE2E(t *testing.T) {
	const token = "room-token-0123456789"
	b := startBench(t, []string{"MCP_TOKEN=" + token, "TERM=xterm-256color"}, nil, 200, 60, "Connect an agent")
	tm := b.tm
	cs := b.connect("room-agent", token)
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "room", "notebook_path": "room.ipynb", "mode": "create"})
	ch := callInBackground(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1, "timeout": 60,
		"cell_source": "import time\nfor i in range(45):\n    print(f'line-{i:02d}', flush=True)\ntime.sleep(20)"})
	scr := tm.waitScreen(30*time.Second, "line-44", "running")
	shown := regexp.MustCompile(`line-\d\d`).FindAllString(scr, -1)
	if len(shown) < 40 {
		t.Errorf("200x60: the running cell's output shows %d of 45 lines:\n%s", len(shown), scr)
	}
	tm.resize(80, 24)
	tm.waitScreen(10*time.Second, "line-44")
	tm.key("x") // nothing is held; x x cancels the running call
	tm.key("x")
	await(t, tm, ch)

	tm.resize(200, 60)
	call(t, cs, "insert_execute_code_cell", map[string]any{"cell_index": -1,
		"cell_source": "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2, 4])\nplt.show()"})
	rows := func() int {
		n := 0
		for _, l := range strings.Split(tm.screen(), "\n") {
			if strings.Count(l, "▀") > 10 {
				n++
			}
		}
		return n
	}
	tm.waitScreen(30*time.Second, "display_data image/png")
	deadline := time.Now().Add(15 * time.Second)
	for rows() < 15 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	big := rows()
	tm.resize(80, 24)
	time.Sleep(time.Second)
	tm.waitScreen(10*time.Second, "display_data")
	small := rows()
	if big < 15 || small >= big {
		t.Errorf("the plot is %d rows at 200x60 and %d at 80x24", big, small)
	}
	tm.quitLeavingNothing(b.root)
}
