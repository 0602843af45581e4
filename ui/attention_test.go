package ui

import (
	"bytes"
	"strings"
	"testing"
)

func TestNoticeProtocol(t *testing.T) {
	t.Parallel()
	env := fakeEnv
	for _, tc := range []struct {
		name, mode  string
		getenv      func(string) string
		passthrough bool
		want        string
	}{
		{"iTerm2", NotifyAuto, env("TERM_PROGRAM", "iTerm.app"), false, NotifyOSC9},
		{"WezTerm", "", env("TERM_PROGRAM", "WezTerm"), false, NotifyOSC777},
		{"foot", NotifyAuto, env("TERM", "foot"), false, NotifyOSC777},
		{"VTE", NotifyAuto, env("VTE_VERSION", "7600"), false, NotifyOSC777},
		{"kitty", NotifyAuto, env("TERM", "xterm-kitty"), false, NotifyOSC99},
		{"unknown terminal", NotifyAuto, env("TERM", "xterm-256color"), false, ""},
		{"tmux without passthrough", NotifyAuto, env("TMUX", "/tmp/s,1,0", "LC_TERMINAL", "iTerm2"), false, ""},
		{"tmux in iTerm2 with passthrough", NotifyAuto, env("TMUX", "/tmp/s,1,0", "LC_TERMINAL", "iTerm2"), true, NotifyOSC9},
		{"tmux, outer terminal unknown", NotifyAuto, env("TMUX", "/tmp/s,1,0", "TERM_PROGRAM", "tmux"), true, ""},
		{"off", NotifyOff, env("TERM_PROGRAM", "iTerm.app"), false, ""},
		{"forced", NotifyOSC777, env(), false, NotifyOSC777},
	} {
		if got := noticeProtocol(tc.mode, tc.getenv, tc.passthrough); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNoticeSeq(t *testing.T) {
	t.Parallel()
	if got := noticeSeq(NotifyOSC9, "jupyter-mcp", "a call waits", false); got != "\x1b]9;jupyter-mcp: a call waits\x1b\\" {
		t.Errorf("osc9 %q", got)
	}
	if got := noticeSeq(NotifyOSC777, "t", "b;\x07x", false); got != "\x1b]777;notify;t;b  x\x1b\\" {
		t.Errorf("osc777 %q", got)
	}
	if got := noticeSeq(NotifyOSC9, "t", "b", true); got != "\x1bPtmux;\x1b\x1b]9;t: b\x1b\x1b\\\x1b\\" {
		t.Errorf("tmux %q", got)
	}
	var out bytes.Buffer
	bell, notify := terminalAttention(&out, NotifyOSC9, func(string) string { return "" }, false)
	bell()
	notify("jupyter-mcp", "x")
	if !strings.HasPrefix(out.String(), "\a\x1b]9;") {
		t.Errorf("wrote %q", out.String())
	}
	if _, n := terminalAttention(&out, NotifyOff, func(string) string { return "" }, false); n != nil {
		t.Error("notices on with --notify off")
	}
}

// fakeEnv is a getenv over the given key, value pairs.
func fakeEnv(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}
