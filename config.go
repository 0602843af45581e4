package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// option is one setting: a flag, the environment variable that can also set
// it, its default and its help. A flag beats the environment, which beats the
// default.
type option struct {
	group string
	name  string // flag name
	env   string // environment variable ("" = none)
	def   string
	help  string
	value string // resolved
	from  string // default, flag or env
}

// config is the resolved command line.
type config struct {
	opts []*option
	args []string // positional arguments left after the flags
}

func newOptions() []*option {
	return []*option{
		{group: "MCP", name: "transport", env: "TRANSPORT", def: "", help: "stdio or streamable-http; empty: the workbench TUI (MCP over HTTP) in a terminal, stdio otherwise"},
		{group: "MCP", name: "port", env: "PORT", def: "4040", help: "port of the streamable HTTP endpoint (/mcp)"},
		{group: "MCP", name: "bind", env: "MCP_BIND", def: "127.0.0.1", help: "address the HTTP endpoint listens on; anything but loopback prints a warning"},
		{group: "MCP", name: "mcp-token", env: "MCP_TOKEN", def: "", help: "bearer token HTTP clients must send; empty: a random one is generated and shown"},
		{group: "MCP", name: "no-auth-loopback-only", env: "MCP_NO_AUTH_LOOPBACK_ONLY", def: "false", help: "INSECURE: accept HTTP requests without a bearer token (only allowed when bound to loopback)"},
		{group: "MCP", name: "session-timeout", env: "MCP_SESSION_TIMEOUT", def: "21600", help: "seconds after which an HTTP session that sent nothing is closed (a client that vanished without ending it)"},
		{group: "MCP", name: "tui", env: "MCP_TUI", def: "false", help: "with --transport streamable-http: also show the workbench TUI"},
		{group: "MCP", name: "feed", env: "MCP_FEED", def: "127.0.0.1:0", help: "stdio mode: address of the live feed that 'attach' connects to (empty: none)"},
		{group: "Jupyter", name: "jupyter-url", env: "JUPYTER_URL", def: "", help: "Jupyter server to use (e.g. http://localhost:8888 or a JupyterHub http://hub/user/NAME/); empty: start a managed local jupyter-server"},
		{group: "Jupyter", name: "jupyter-token", env: "JUPYTER_TOKEN", def: "", help: "token of the Jupyter server"},
		{group: "Jupyter", name: "root-dir", env: "JUPYTER_ROOT_DIR", def: "", help: "root directory of the managed Jupyter server (default: the working directory)"},
		{group: "Jupyter", name: "start-new-code-sandbox", env: "START_NEW_CODE_SANDBOX", def: "false", help: "accepted for compatibility with the reference's client config; sandboxes are launched with launch_sandbox"},
		{group: "Jupyter", name: "sandbox-variant", env: "SANDBOX_VARIANT", def: "", help: "default variant of launch_sandbox (eval or jupyter-server here; empty or jupyter-server: eval, as the reference does)"},
		{group: "Execution", name: "timeout", env: "EXECUTION_TIMEOUT", def: "300", help: "default execution timeout in seconds (a tool's timeout of 0 means this)"},
		{group: "Execution", name: "max-timeout", env: "MAX_EXECUTION_TIMEOUT", def: "3600", help: "upper bound in seconds on any execution timeout"},
		{group: "Execution", name: "images", env: "OUTPUT_IMAGES", def: "true", help: "return image/png and image/jpeg outputs as image content"},
		{group: "Execution", name: "max-output", env: "MAX_OUTPUT_BYTES", def: "20000", help: "text outputs longer than this many bytes are cut in tool results (the notebook keeps them whole)"},
		{group: "Execution", name: "kernel-auto-restart", env: "KERNEL_AUTO_RESTART", def: "false", help: "replace a kernel that died mid-execution with a fresh one (its state is lost; results say so)"},
		{group: "Workbench", name: "approve", env: "APPROVE", def: "off", help: "hold calls for a person to allow: off, destructive or all"},
		{group: "Workbench", name: "approve-timeout", env: "APPROVE_TIMEOUT", def: "120", help: "seconds a held call waits for a decision before it is denied"},
		{group: "Workbench", name: "record", env: "RECORD_FILE", def: "", help: "write every call and result as JSON lines to this file (tokens redacted)"},
		{group: "Logging", name: "log-file", env: "LOG_FILE", def: "", help: "write logs to this file (default: stderr, or nowhere while the TUI runs)"},
		{group: "Logging", name: "log-level", env: "LOG_LEVEL", def: "info", help: "debug, info, warn or error"},
	}
}

const usageHead = `jupyter-mcp-server: let an AI agent read, edit and run Jupyter notebooks over
MCP while you watch and steer in a terminal workbench.

Usage:
  jupyter-mcp-server [flags]             run (the workbench in a terminal)
  jupyter-mcp-server --transport stdio   headless MCP on stdin/stdout
  jupyter-mcp-server attach [ADDRESS]    open the workbench on a running stdio server
  jupyter-mcp-server replay FILE         play a --record file in the workbench
  jupyter-mcp-server --version

Every flag can also be set by its environment variable; a flag beats the
environment, which beats the default.
`

// parseConfig resolves flags, environment and defaults.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, error) {
	opts := newOptions()
	fs := flag.NewFlagSet("jupyter-mcp-server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, o := range opts {
		if o.isBool() {
			fs.Var(&boolString{s: o.def}, o.name, o.help)
		} else {
			fs.String(o.name, o.def, o.help)
		}
	}
	version := fs.Bool("version", false, "print the version and exit")
	help := fs.Bool("help", false, "show this help")
	fs.BoolVar(help, "h", false, "show this help")
	if err := fs.Parse(joinBoolValues(args, opts)); err != nil {
		return nil, fmt.Errorf("%v (see --help)", err)
	}
	if *help {
		printUsage(out, opts)
		return nil, errHelp
	}
	if *version {
		return nil, errVersion
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, o := range opts {
		o.value, o.from = o.def, "default"
		if set[o.name] {
			o.value, o.from = fs.Lookup(o.name).Value.String(), "flag"
		} else if v := envValue(getenv, o.env); v != "" {
			o.value, o.from = v, "env"
		}
	}
	c := &config{opts: opts, args: fs.Args()}
	return c, c.validate()
}

// envValue is the option's environment variable, "" when it has none or
// it is unset or empty.
func envValue(getenv func(string) string, name string) string {
	if name == "" {
		return ""
	}
	return getenv(name)
}

var (
	errHelp    = fmt.Errorf("help shown")
	errVersion = fmt.Errorf("version asked")
)

func printUsage(w io.Writer, opts []*option) {
	fmt.Fprint(w, usageHead)
	nameW, envW := 0, 0
	for _, o := range opts {
		nameW = max(nameW, len(o.name)+2)
		envW = max(envW, len(o.env))
	}
	group := ""
	for _, o := range opts {
		if o.group != group {
			group = o.group
			fmt.Fprintf(w, "\n%s:\n", group)
		}
		def := o.def
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(w, "  %-*s  %-*s  default %s\n", nameW, "--"+o.name, envW, o.env, def)
		fmt.Fprintf(w, "      %s\n", o.help)
	}
	fmt.Fprintf(w, "\nOther:\n  --version  print the version\n  --help     this help\n")
}

func (c *config) get(name string) *option {
	for _, o := range c.opts {
		if o.name == name {
			return o
		}
	}
	panic("unknown option " + name)
}

func (c *config) str(name string) string { return c.get(name).value }

func (c *config) boolean(name string) bool {
	b, _ := strconv.ParseBool(c.get(name).value)
	return b
}

func (c *config) integer(name string) int {
	n, _ := strconv.Atoi(c.get(name).value)
	return n
}

func (c *config) seconds(name string) time.Duration {
	return time.Duration(c.integer(name)) * time.Second
}

// validate checks every value once, so the rest of main can trust them.
func (c *config) validate() error {
	bad := func(o *option, allowed string) error {
		src := "--" + o.name
		if o.from == "env" {
			src = o.env
		}
		return fmt.Errorf("%s=%q is not valid: %s", src, o.value, allowed)
	}
	for _, o := range c.opts {
		switch o.name {
		case "transport":
			if o.value != "" && o.value != "stdio" && o.value != "streamable-http" {
				return bad(o, "use stdio or streamable-http")
			}
		case "port":
			if n, err := strconv.Atoi(o.value); err != nil || n < 0 || n > 65535 {
				return bad(o, "a port number 0-65535")
			}
		case "timeout", "max-timeout", "approve-timeout", "session-timeout":
			if n, err := strconv.Atoi(o.value); err != nil || n < 1 {
				return bad(o, "a whole number of seconds >= 1")
			}
		case "max-output":
			if n, err := strconv.Atoi(o.value); err != nil || n < 100 {
				return bad(o, "a number of bytes >= 100")
			}
		case "images", "kernel-auto-restart", "start-new-code-sandbox", "tui", "no-auth-loopback-only":
			if _, err := strconv.ParseBool(o.value); err != nil {
				return bad(o, "true or false")
			}
		case "approve":
			if o.value != "off" && o.value != "destructive" && o.value != "all" {
				return bad(o, "off, destructive or all")
			}
		case "log-level":
			switch strings.ToLower(o.value) {
			case "debug", "info", "warn", "error":
			default:
				return bad(o, "debug, info, warn or error")
			}
		case "jupyter-url":
			if o.value != "" && !strings.HasPrefix(o.value, "http://") && !strings.HasPrefix(o.value, "https://") {
				return bad(o, "an http:// or https:// URL")
			}
		}
	}
	if c.integer("max-timeout") < c.integer("timeout") {
		return fmt.Errorf("--max-timeout (%d) is below --timeout (%d)", c.integer("max-timeout"), c.integer("timeout"))
	}
	return nil
}

func getenv(name string) string { return os.Getenv(name) }

// isBool reports whether the option is a switch: "--tui" alone means true,
// and "--tui false" (with a space, as the reference's client config writes
// --start-new-code-sandbox false) is accepted too.
func (o *option) isBool() bool { return o.def == "true" || o.def == "false" }

// joinBoolValues turns "--name true|false" into "--name=true|false" for
// switches, because the flag package would otherwise read the value as a
// positional argument.
func joinBoolValues(args []string, opts []*option) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name := strings.TrimLeft(a, "-")
		if strings.HasPrefix(a, "-") && !strings.Contains(name, "=") && i+1 < len(args) {
			for _, o := range opts {
				if o.name == name && o.isBool() {
					if _, err := strconv.ParseBool(args[i+1]); err == nil {
						a = a + "=" + args[i+1]
						i++
					}
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// boolString is a flag value that may be given alone (meaning true) or with
// a value.
type boolString struct{ s string }

func (b *boolString) String() string { return b.s }
func (b *boolString) Set(v string) error {
	if _, err := strconv.ParseBool(v); err != nil {
		return fmt.Errorf("want true or false, got %q", v)
	}
	b.s = v
	return nil
}
func (b *boolString) IsBoolFlag() bool { return true }
