package e2e

// End-to-end tests of `replay --against`: a recording made by this build
// with a real client replays clean against it, and one whose result was
// edited fails naming the difference.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// seedNotebook is a notebook the recorded session finds in its root and
// opens, as a session on an existing project does.
const seedNotebook = `{"cells": [{"cell_type": "markdown", "id": "5eed0001", "metadata": {}, "source": ["# seed"]}],
 "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`

// recordSession records a short session of a go-sdk client with the real
// binary over stdio, in a root holding seed.ipynb, and returns the
// recording's path and a folder with seed.ipynb as it was before (for
// --from). The calls address the new cell by the id the server gave it, so
// a replay must map recorded ids to its own.
func recordSession(t *testing.T) (rec, from string) {
	t.Helper()
	rec = filepath.Join(t.TempDir(), "session.jsonl")
	root, from := t.TempDir(), t.TempDir()
	for _, dir := range []string{root, from} {
		if err := os.WriteFile(filepath.Join(dir, "seed.ipynb"), []byte(seedNotebook), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cs := harness.StartStdio(t, []string{"--feed", "", "--root-dir", root, "--record", rec})
	do := func(name string, args map[string]any, wantErr bool) *sdk.CallToolResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError != wantErr {
			t.Fatalf("%s: isError %v: %s", name, res.IsError, harness.Text(res))
		}
		return res
	}
	do("use_notebook", map[string]any{"notebook_name": "seed", "notebook_path": "seed.ipynb"}, false)
	do("read_notebook", map[string]any{"notebook_name": "seed"}, false)
	do("use_notebook", map[string]any{"notebook_name": "demo", "notebook_path": "demo.ipynb", "mode": "create"}, false)
	ins := do("insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "x = 6*7\nprint(x)"}, false)
	id, _ := ins.Meta["io.jupyter-mcp/cell_id"].(string)
	if id == "" {
		t.Fatalf("insert_cell named no cell: %v", ins.Meta)
	}
	do("execute_cell", map[string]any{"cell_id": id}, false)
	do("read_cell", map[string]any{"cell_id": id}, false)
	do("read_cell", map[string]any{"cell_index": 7}, true)
	do("list_notebooks", map[string]any{}, false)
	// Closing the session ends the process; the recording is complete
	// when it has exited.
	cs.Close()
	return rec, from
}

// runReplayAgainst runs `replay --against path` and returns its output
// and exit code.
func runReplayAgainst(t *testing.T, path, from string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Binary(t), "replay", "--against", path, "--from", from)
	cmd.Env = harness.CleanEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("replay --against did not end:\n%s", out.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

func TestReplayAgainstThisBuild(t *testing.T) {
	rec, from := recordSession(t)

	out, code := runReplayAgainst(t, rec, from)
	t.Logf("replay of the recording as made:\n%s", out)
	if code != 0 || !strings.Contains(out, "replay: all 8 calls of "+rec+" answered as recorded") {
		t.Fatalf("exit %d, want 0 and the summary:\n%s", code, out)
	}

	// Change what execute_cell answered: the replay must say so.
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	edited := false
	for i, l := range lines {
		var ev event.Event
		if err := json.Unmarshal(l, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != event.EvCallFinished || ev.Call == nil || ev.Call.Text != "42\n" {
			continue
		}
		ev.Call.Text = "43\n"
		ev.Call.Structured = json.RawMessage(bytes.ReplaceAll(ev.Call.Structured, []byte(`42\n`), []byte(`43\n`)))
		if lines[i], err = json.Marshal(ev); err != nil {
			t.Fatal(err)
		}
		edited = true
		break
	}
	if !edited {
		t.Fatalf("no result \"42\\n\" in the recording:\n%s", data)
	}
	changed := filepath.Join(t.TempDir(), "changed.jsonl")
	if err := os.WriteFile(changed, append(bytes.Join(lines, []byte("\n")), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = runReplayAgainst(t, changed, from)
	t.Logf("replay of the edited recording:\n%s", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "#") {
			rows = append(rows, strings.Join(strings.Fields(l), " "))
		}
	}
	want := []string{`#5 execute_cell text 43\n 42\n`, `#5 execute_cell structuredContent …e","outputs":["43\n"],"result":["43\n"]} …e","outputs":["42\n"],"result":["42\n"]}`}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("difference rows\n%s\nwant\n%s\nin:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"), out)
	}
	if !strings.Contains(out, "replay: 1 of 8 calls of "+changed+" answered differently (2 differences)") {
		t.Fatalf("no summary:\n%s", out)
	}
}
