package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		args     []string
		env      map[string]string
		opt      string
		want     string
		wantFrom string
	}{
		{"default", nil, nil, "port", "4040", "default"},
		{"env beats default", nil, map[string]string{"PORT": "5000"}, "port", "5000", "env"},
		{"flag beats env", []string{"--port", "6000"}, map[string]string{"PORT": "5000"}, "port", "6000", "flag"},
		{"flag with =", []string{"--port=6001"}, nil, "port", "6001", "flag"},
		{"jupyter url env", nil, map[string]string{"JUPYTER_URL": "http://h:8888"}, "jupyter-url", "http://h:8888", "env"},
		{"transport flag", []string{"--transport", "stdio"}, map[string]string{"TRANSPORT": "streamable-http"}, "transport", "stdio", "flag"},
		{"switch alone", []string{"--tui"}, nil, "tui", "true", "flag"},
		{"switch with spaced value", []string{"--start-new-code-sandbox", "false", "--transport", "stdio"}, nil, "start-new-code-sandbox", "false", "flag"},
		{"switch with spaced true", []string{"--kernel-auto-restart", "true"}, nil, "kernel-auto-restart", "true", "flag"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parseConfig(c.args, env(c.env), &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			o := cfg.get(c.opt)
			if o.value != c.want || o.from != c.wantFrom {
				t.Fatalf("%s = %q from %s, want %q from %s", c.opt, o.value, o.from, c.want, c.wantFrom)
			}
			if len(cfg.args) != 0 {
				t.Fatalf("positional args left: %q", cfg.args)
			}
		})
	}
}

func TestConfigRefusesBadValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--transport", "sse"}, nil, "stdio or streamable-http"},
		{[]string{"--port", "99999"}, nil, "0-65535"},
		{nil, map[string]string{"PORT": "abc"}, "PORT="},
		{[]string{"--timeout", "0"}, nil, ">= 1"},
		{[]string{"--approve", "some"}, nil, "off, destructive or all"},
		{[]string{"--jupyter-url", "localhost:8888"}, nil, "http://"},
		{[]string{"--timeout", "500", "--max-timeout", "100"}, nil, "below"},
		{[]string{"--nope"}, nil, "not defined"},
		{[]string{"--images=maybe"}, nil, "true or false"},
	}
	for _, c := range cases {
		_, err := parseConfig(c.args, env(c.env), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: err %v, want it to mention %q", c.args, c.env, err, c.want)
		}
	}
}

func TestHelpListsEveryFlagWithEnvAndDefault(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_, err := parseConfig([]string{"--help"}, env(nil), &out)
	if !errors.Is(err, errHelp) {
		t.Fatalf("err %v", err)
	}
	for _, o := range newOptions() {
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "  --"+o.name+" ") {
				line = l
			}
		}
		if line == "" || (o.env != "" && !strings.Contains(line, o.env)) || !strings.Contains(line, "default") {
			t.Errorf("help line for --%s is %q", o.name, line)
		}
	}
}
