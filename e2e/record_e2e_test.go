package e2e

// End-to-end tests of --record with the real binary: whichever way a run
// ends (the host closing stdin, SIGTERM, SIGINT, q in the workbench, or a
// signal to a headless HTTP server), the recording holds every call's start
// and result, the last one included.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// recordedCalls are the calls each test makes before ending the run: none
// needs a kernel (the test is about the end, not the work), one is a tool
// error, and the last is answered just before the end.
var recordedCalls = []struct {
	tool string
	args map[string]any
	err  bool
}{
	{"list_files", map[string]any{}, false},
	{"list_notebooks", map[string]any{}, false},
	{"read_notebook", map[string]any{"notebook_name": "nope"}, true},
	{"list_kernels", map[string]any{}, false},
	{"list_files", map[string]any{"pattern": "*.ipynb"}, false},
	{"list_notebooks", map[string]any{}, false},
}

// makeRecordedCalls makes recordedCalls on cs, checking each answer.
func makeRecordedCalls(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	for i, c := range recordedCalls {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		cancel()
		if err != nil {
			t.Fatalf("call %d %s: %v", i, c.tool, err)
		}
		if res.IsError != c.err {
			t.Fatalf("call %d %s: isError %v, want %v: %s", i, c.tool, res.IsError, c.err, harness.Text(res))
		}
	}
}

// checkRecording reads the recording at path and fails unless it holds, in
// order, a start and a result for every call of recordedCalls.
func checkRecording(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		tool              string
		started, finished bool
		status            event.CallStatus
	}
	var order []string
	calls := map[string]*seen{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var ev event.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %d of the recording: %v\n%s", n, err, data)
		}
		if ev.Call == nil {
			continue
		}
		c := calls[ev.Call.ID]
		if c == nil {
			c = &seen{}
			calls[ev.Call.ID] = c
			order = append(order, ev.Call.ID)
		}
		switch ev.Type {
		case event.EvCallStarted:
			c.started, c.tool = true, ev.Call.Tool
		case event.EvCallFinished:
			c.finished, c.status = true, ev.Call.Status
		}
	}
	var got []string
	for _, id := range order {
		c := calls[id]
		d := c.tool
		if !c.started {
			d = "(no start)"
		}
		if c.finished {
			d += " " + string(c.status)
		} else {
			d += " (no result)"
		}
		got = append(got, d)
	}
	var want []string
	for _, c := range recordedCalls {
		s := "ok"
		if c.err {
			s = "error"
		}
		want = append(want, c.tool+" "+s)
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("the recording holds\n  %s\nwant\n  %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
}

// waitExit waits for a process to end on its own, failing (and killing it)
// after a minute.
func waitExit(t *testing.T, exited <-chan struct{}, kill func()) {
	t.Helper()
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		kill()
		<-exited
		t.Fatal("the server did not exit within a minute")
	}
}

// TestRecordingKeepsEveryCallOverStdio ends a stdio server each way a host
// ends one: closing its stdin, SIGTERM, SIGINT.
func TestRecordingKeepsEveryCallOverStdio(t *testing.T) {
	bin := harness.Binary(t)
	for _, end := range []string{"stdin EOF", "SIGTERM", "SIGINT"} {
		t.Run(end, func(t *testing.T) {
			root := t.TempDir()
			rec := filepath.Join(root, "calls.jsonl")
			cmd := exec.Command(bin, "--transport", "stdio", "--feed", "", "--root-dir", root, "--record", rec)
			cmd.Env = harness.CleanEnv()
			// Pipes of our own: closing the write end is the host closing
			// stdin, and Wait never closes what the client reads.
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr harness.LockedBuffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			inR.Close()
			outW.Close()
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			kill := func() { cmd.Process.Kill() }
			t.Cleanup(func() {
				inW.Close()
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					kill()
					<-exited
				}
				outR.Close()
			})

			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			cs, err := harness.NewClient("record-e2e", nil).Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, harness.SessionOptions())
			cancel()
			if err != nil {
				t.Fatalf("connecting: %v\n%s", err, stderr.String())
			}
			makeRecordedCalls(t, cs)
			switch end {
			case "stdin EOF":
				inW.Close()
			case "SIGTERM":
				cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				cmd.Process.Signal(os.Interrupt)
			}
			waitExit(t, exited, kill)
			cs.Close()
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d; stderr:\n%s", code, stderr.String())
			}
			checkRecording(t, rec)
		})
	}
}

// TestRecordingKeepsEveryCallOverHTTP ends a headless streamable HTTP
// server with SIGTERM and SIGINT.
func TestRecordingKeepsEveryCallOverHTTP(t *testing.T) {
	bin := harness.Binary(t)
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			root := t.TempDir()
			rec := filepath.Join(root, "calls.jsonl")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			p, err := harness.ServeHTTP(ctx, bin, "record-e2e-token-0123", []string{"--root-dir", root, "--record", rec}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Stop(10 * time.Second) })
			cs := p.Connect(t)
			makeRecordedCalls(t, cs)
			p.Cmd.Process.Signal(sig)
			waitExit(t, p.Exited(), func() { p.Cmd.Process.Kill() })
			checkRecording(t, rec)
		})
	}
}

// TestRecordingKeepsEveryCallInTheWorkbench quits the workbench with q.
func TestRecordingKeepsEveryCallInTheWorkbench(t *testing.T) {
	needTmux(t)
	bin := harness.Binary(t)
	root := t.TempDir()
	rec := filepath.Join(root, "calls.jsonl")
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	token := "record-e2e-token-0123"
	tm := startTmux(t, []string{"MCP_TOKEN=" + token, "PYDEVD_DISABLE_FILE_VALIDATION=1"},
		fmt.Sprintf("%s --port %d --root-dir %s --record %s", bin, port, root, rec))
	tm.waitScreen(60*time.Second, fmt.Sprintf("127.0.0.1:%d/mcp", port))
	cs, err := harness.ConnectHTTP(context.Background(), "record-e2e", fmt.Sprintf("http://127.0.0.1:%d/mcp", port), harness.AuthClient(token, nil), false)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	makeRecordedCalls(t, cs)
	tm.key("q")
	deadline := time.Now().Add(60 * time.Second)
	for tm.alive() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if tm.alive() {
		t.Fatalf("the workbench did not exit on q:\n%s", tm.screen())
	}
	checkRecording(t, rec)
}
