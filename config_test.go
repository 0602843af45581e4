package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
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
		field    func(*config) any // a pointer to the option's field
		want     any               // the typed value
		wantRaw  string
		wantFrom string
	}{
		{"default", nil, nil, func(c *config) any { return &c.Port }, 4040, "4040", "default"},
		{"env beats default", nil, map[string]string{"PORT": "5000"}, func(c *config) any { return &c.Port }, 5000, "5000", "env"},
		{"flag beats env", []string{"--port", "6000"}, map[string]string{"PORT": "5000"}, func(c *config) any { return &c.Port }, 6000, "6000", "flag"},
		{"flag with =", []string{"--port=6001"}, nil, func(c *config) any { return &c.Port }, 6001, "6001", "flag"},
		{"jupyter url env", nil, map[string]string{"JUPYTER_URL": "http://h:8888"}, func(c *config) any { return &c.JupyterURL }, "http://h:8888", "http://h:8888", "env"},
		{"transport flag", []string{"--transport", "stdio"}, map[string]string{"TRANSPORT": "streamable-http"}, func(c *config) any { return &c.Transport }, "stdio", "stdio", "flag"},
		{"switch alone", []string{"--tui"}, nil, func(c *config) any { return &c.TUI }, true, "true", "flag"},
		{"switch with spaced value", []string{"--start-new-code-sandbox", "false", "--transport", "stdio"}, nil, func(c *config) any { return &c.StartNewCodeSandbox }, false, "false", "flag"},
		{"switch with spaced true", []string{"--kernel-auto-restart", "true"}, nil, func(c *config) any { return &c.KernelAutoRestart }, true, "true", "flag"},
		{"seconds", nil, map[string]string{"EXECUTION_TIMEOUT": "42"}, func(c *config) any { return &c.Timeout }, 42 * time.Second, "42", "env"},
		{"log level", []string{"--log-level", "WARN"}, nil, func(c *config) any { return &c.LogLevel }, slog.LevelWarn, "WARN", "flag"},
		{"bool env", nil, map[string]string{"OUTPUT_IMAGES": "0"}, func(c *config) any { return &c.Images }, false, "0", "env"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parseConfig(c.args, env(c.env), &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			field := c.field(cfg)
			if got := reflect.ValueOf(field).Elem().Interface(); got != c.want {
				t.Errorf("value %v (%T), want %v (%T)", got, got, c.want, c.want)
			}
			o := cfg.origin(field)
			if o.raw != c.wantRaw || o.from != c.wantFrom {
				t.Fatalf("--%s = %q from %s, want %q from %s", o.name, o.raw, o.from, c.wantRaw, c.wantFrom)
			}
			if len(cfg.args) != 0 {
				t.Fatalf("positional args left: %q", cfg.args)
			}
		})
	}
}

// Every option fills a field of its own: two options writing one field
// would make origin (and the help) lie.
func TestEveryOptionHasItsOwnField(t *testing.T) {
	t.Parallel()
	c := &config{}
	seen := map[any]string{}
	for _, o := range c.options() {
		if o.set.field == nil || o.set.parse == nil {
			t.Errorf("--%s has no field", o.name)
		}
		if prev, dup := seen[o.set.field]; dup {
			t.Errorf("--%s and --%s fill the same field", prev, o.name)
		}
		seen[o.set.field] = o.name
		if o.set.parse(o.def) != "" {
			t.Errorf("--%s: its default %q is not valid", o.name, o.def)
		}
	}
}

func TestCapabilitiesSayWhereEachValueCameFrom(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]string{"--kernel-auto-restart"}, env(map[string]string{"OUTPUT_IMAGES": "false"}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]engine.Capability{}
	for _, c := range capabilities(cfg) {
		got[c.Name] = c
	}
	if c := got[engine.CapKernelAutoRestart]; !c.Enabled || c.Value != "true" || c.Source != "flag" {
		t.Errorf("kernel auto-restart: %+v", c)
	}
	if c := got[engine.CapImages]; c.Enabled || c.Value != "false" || c.Source != "env" {
		t.Errorf("images: %+v", c)
	}
}

func TestAllowedHostsAndMaxBody(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]string{"--max-body", "8192"}, env(map[string]string{"MCP_ALLOWED_HOSTS": " a.example, ,10.0.0.2:4040 "}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.AllowedHosts, "|") != "a.example|10.0.0.2:4040" || cfg.MaxBody != 8192 {
		t.Fatalf("allowed hosts %q, max body %d", cfg.AllowedHosts, cfg.MaxBody)
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
		{[]string{"--approve", "some"}, nil, "off, destructive, execute or all"},
		{[]string{"--theme", "solarized"}, nil, "auto, light or dark"},
		{nil, map[string]string{"MCP_THEME": "Light"}, "MCP_THEME=\"Light\" is not valid: auto, light or dark"},
		{[]string{"--jupyter-url", "localhost:8888"}, nil, "http://"},
		{[]string{"--timeout", "500", "--max-timeout", "100"}, nil, "below"},
		{[]string{"--nope"}, nil, "not defined"},
		{[]string{"--images=maybe"}, nil, "true or false"},
		{[]string{"--max-timeout", "86401"}, nil, "at most 86400 seconds"},
		{nil, map[string]string{"MCP_MAX_BODY": "100"}, "MCP_MAX_BODY=\"100\" is not valid: a number of bytes >= 4096"},
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
	for _, o := range (&config{}).options() {
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

// The README's flag reference is the --help text; a new or changed option
// must be written there too.
func TestREADMEFlagsAreTheHelp(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Flags and environment\n")
	_, block, ok2 := strings.Cut(section, "```text\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no ```text block under \"## Flags and environment\"")
	}
	var out bytes.Buffer
	if _, err := parseConfig([]string{"--help"}, env(nil), &out); !errors.Is(err, errHelp) {
		t.Fatal(err)
	}
	_, want, _ := strings.Cut(out.String(), "environment, which beats the default.\n\n")
	if block != want {
		t.Errorf("README.md's flags block differs from --help; replace it with the options part of `jupyter-mcp-server --help`:\n%s", want)
	}
}

// The test harness starts the binary without the developer's option
// variables; it must know every one.
func TestHarnessDropsEveryOptionVariable(t *testing.T) {
	t.Parallel()
	for _, o := range (&config{}).options() {
		if o.env != "" && !slices.Contains(harness.OptionEnv(), o.env) {
			t.Errorf("%s (--%s) is missing from internal/harness's configEnv", o.env, o.name)
		}
	}
}

// TestEnvTheme checks the theme of attach and replay, which take no flags:
// MCP_THEME, checked like --theme.
func TestEnvTheme(t *testing.T) {
	for _, c := range []struct{ env, want, err string }{
		{"", "auto", ""},
		{"light", "light", ""},
		{"dark", "dark", ""},
		{"blue", "", `MCP_THEME="blue" is not valid: auto, light or dark`},
	} {
		t.Setenv("MCP_THEME", c.env)
		got, err := envTheme()
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("MCP_THEME=%q: err %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("MCP_THEME=%q: %q, %v; want %q", c.env, got, err, c.want)
		}
	}
}

func TestEnvImageProtocol(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"", "auto"},
		{"sixel", "sixel"},
		{"kitty", "kitty"},
		{"halfblocks", "halfblocks"},
		{"png", "auto"}, // refused: attach and replay detect
	} {
		t.Setenv("MCP_IMAGE_PROTOCOL", c.env)
		if got := envImageProtocol(); got != c.want {
			t.Errorf("MCP_IMAGE_PROTOCOL=%q: %q, want %q", c.env, got, c.want)
		}
	}
	cfg, err := parseConfig([]string{"--image-protocol", "iterm2"}, func(string) string { return "" }, &bytes.Buffer{})
	if err != nil || cfg.ImageProtocol != "iterm2" {
		t.Fatalf("--image-protocol iterm2: %v %q", err, cfg.ImageProtocol)
	}
	if _, err := parseConfig([]string{"--image-protocol", "ascii"}, func(string) string { return "" }, &bytes.Buffer{}); err == nil {
		t.Fatal("--image-protocol ascii should be refused")
	}
}
