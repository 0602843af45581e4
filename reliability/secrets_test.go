package reliability

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// No token ever reaches a log, the terminal or an agent: the binary runs at
// debug level against a server with a known token, and calls that succeed and
// fail (a missing notebook, a bad server URL with a token in it) are made;
// then the log file, the record file, stderr, stdout and every tool result
// are searched for every token.
func TestSecretsNeverLeak(t *testing.T) {
	const mcpToken = "mcp-secret-7a3c91e0d2b4f6a8"
	// Tokens an agent hands to connect_to_jupyter, in the URL and beside it.
	const urlToken = "url-secret-0b1c2d3e4f5a6b7c"
	const argToken = "arg-secret-9f8e7d6c5b4a3928"
	const userinfoPass = "userinfo-secret-5566778899aa"

	dir := t.TempDir()
	logFile := filepath.Join(dir, "server.log")
	recordFile := filepath.Join(dir, "calls.jsonl")
	p, srv := startShared(t, mcpToken, "--log-level", "debug", "--log-file", logFile, "--record", recordFile)
	secrets := []string{srv.Token, mcpToken, urlToken, argToken, userinfoPass}

	sub := srv.Subdir(t)
	nb := writeNotebook(t, srv, sub+"/s.ipynb", "print('hello')")
	cs := p.Connect(t)
	var results []string
	record := func(name string, args map[string]any) string {
		res := callTool(t, cs, name, args)
		results = append(results, allOf(res))
		return textOf(res)
	}

	record("list_notebooks", nil)
	if text := record("use_notebook", map[string]any{"notebook_name": "ghost", "notebook_path": sub + "/missing.ipynb"}); !strings.Contains(text, "missing.ipynb") {
		t.Errorf("use_notebook of a missing file: %q", text)
	}
	record("use_notebook", map[string]any{"notebook_name": "s", "notebook_path": nb})
	record("execute_cell", map[string]any{"cell_index": 0})
	record("execute_code", map[string]any{"code": "import os; print(sorted(k for k in os.environ if 'TOKEN' in k))"})
	record("execute_code", map[string]any{"code": "raise ValueError('boom')"})
	record("read_cell", map[string]any{"cell_index": 99})
	record("list_kernels", nil)

	// Bad servers, with the token in the query, in the userinfo and as an
	// argument: each must fail, and say which server without the secret.
	badPort := freePort(t)
	for _, args := range []map[string]any{
		{"jupyter_url": "http://127.0.0.1:" + strconv.Itoa(badPort) + "/?token=" + urlToken, "jupyter_token": argToken},
		{"jupyter_url": "http://admin:" + userinfoPass + "@127.0.0.1:" + strconv.Itoa(badPort) + "/", "jupyter_token": argToken},
		{"jupyter_url": srv.URL, "jupyter_token": argToken},                                            // right server, wrong token
		{"jupyter_url": "http://127.0.0.1:" + strconv.Itoa(badPort) + "/", "jupyter_token": srv.Token}, // the real token, wrong server
		{"jupyter_url": "htp://127.0.0.1:" + strconv.Itoa(badPort) + "/?token=" + urlToken},
	} {
		res := callTool(t, cs, "connect_to_jupyter", args)
		results = append(results, allOf(res))
		if !res.IsError {
			t.Errorf("connect_to_jupyter(%v) succeeded", args)
		}
	}
	// Back to the real server (the real token as an argument), and a call
	// that uses it.
	record("connect_to_jupyter", map[string]any{"jupyter_url": srv.URL, "jupyter_token": srv.Token})
	record("list_files", map[string]any{"path": sub})

	// A request with a wrong bearer token, which the log might quote.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	newRPC(t, p.Endpoint, "wrong-"+mcpToken[:6]).post(ctx, initializeBody(), nil)

	// Resources carry notebook JSON and server details.
	for _, uri := range []string{"capabilities://", "notebook://s"} {
		if rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err == nil {
			for _, c := range rr.Contents {
				results = append(results, c.Text)
			}
		}
	}
	cs.Close()

	// Stop the binary so that everything is flushed.
	stopGracefully(t, p)

	logData, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logData), "level=") {
		t.Errorf("the log file is empty: nothing was searched")
	}
	recData, _ := os.ReadFile(recordFile)
	if len(recData) == 0 {
		t.Errorf("the record file is empty")
	}
	where := map[string]string{
		"log file":     string(logData),
		"record file":  string(recData),
		"stderr":       p.Stderr.String(),
		"stdout":       p.Stdout.String(),
		"tool results": strings.Join(results, "\n"),
	}
	for name, text := range where {
		for _, s := range secrets {
			if i := strings.Index(text, s); i >= 0 {
				t.Errorf("the %s holds the secret %q: …%s…", name, s, text[max(0, i-200):min(len(text), i+len(s)+50)])
			}
		}
	}
	// And nothing that looks like a token in a URL slipped through
	// unredacted, whatever its value.
	tokenInURL := regexp.MustCompile(`token=[0-9a-zA-Z_-]{8,}`)
	for name, text := range where {
		if m := tokenInURL.FindString(text); m != "" {
			t.Errorf("the %s holds %q", name, m)
		}
	}
}

// stopGracefully sends SIGTERM and waits for the binary to exit.
func stopGracefully(t testing.TB, p *harness.Process) {
	t.Helper()
	_ = p.Cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.Exited():
	case <-time.After(15 * time.Second):
		t.Fatalf("the binary did not exit within 15s of SIGINT")
	}
}
