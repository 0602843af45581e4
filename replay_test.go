package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseReplayArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // "%+v" of the options, or the error
	}{
		{[]string{"calls.jsonl"}, "file=calls.jsonl speed=1"},
		{[]string{"calls.jsonl", "--speed", "0"}, "file=calls.jsonl speed=0"},
		{[]string{"--speed=2.5", "calls.jsonl"}, "file=calls.jsonl speed=2.5"},
		{[]string{"--against", "calls.jsonl"}, "against=calls.jsonl speed=1"},
		{[]string{"--against", "c.jsonl", "--jupyter-url", "http://h:8888", "--jupyter-token", "t"}, "against=c.jsonl url=http://h:8888 speed=1"},
		{[]string{"--against", "c.jsonl", "--from", "nbs", "--", "--max-output", "100"}, "against=c.jsonl from=nbs server=[--max-output 100] speed=1"},
		{[]string{}, "error: replay needs one file written with --record"},
		{[]string{"a", "b"}, "error: replay needs one file written with --record"},
		{[]string{"--against", "a", "b"}, `error: replay --against takes the file as its value, not "b" too`},
		{[]string{"a", "--from", "x"}, "error: --jupyter-url, --from, --follow-switches and server flags go with --against"},
		{[]string{"--against", "a", "--from", "x", "--jupyter-url", "u"}, "error: --from fills the root of a managed Jupyter; with --jupyter-url the server's own files are used"},
		{[]string{"a", "--speed", "-1"}, "error: --speed -1: want 0 (as fast as possible) or more"},
	} {
		o, err := parseReplayArgs(tc.args, io.Discard)
		var got string
		if err != nil {
			got = "error: " + err.Error()
		} else {
			var parts []string
			add := func(k, v string) {
				if v != "" {
					parts = append(parts, k+"="+v)
				}
			}
			add("file", o.file)
			add("against", o.against)
			add("url", o.jupyterURL)
			add("from", o.from)
			if len(o.serverArgs) > 0 {
				add("server", "["+strings.Join(o.serverArgs, " ")+"]")
			}
			parts = append(parts, "speed="+strconv.FormatFloat(o.speed, 'g', -1, 64))
			got = strings.Join(parts, " ")
		}
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}

// --speed 0 plays without waiting; any other speed scales the pace.
func TestReplayPace(t *testing.T) {
	t.Parallel()
	for speed, want := range map[float64]float64{0: -1, 1: 1, 2.5: 2.5, 0.5: 0.5} {
		if got := replayPace(speed).Speed; got != want {
			t.Errorf("--speed %v: ReplayOptions.Speed %v, want %v", speed, got, want)
		}
	}
}

// A recording with no call to replay fails the check (exit 2) rather than
// passing it having compared nothing; it starts no server.
func TestReplayAgainstNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(path, []byte(`{"seq":1,"time":"2026-01-01T00:00:00Z","type":"kernel.status","kernel":{"id":"k","state":"idle"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	code := replayAgainst(context.Background(), &replayOptions{against: path}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "holds no tool call to replay") || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
