package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui"
)

// config is the resolved command line: every option as a typed field. Each
// field is declared as an option once, in options, with its flag, its
// environment variable, its default and its help.
type config struct {
	// MCP
	Transport          string // "", "stdio" or "streamable-http"
	Port               int
	Bind               string
	MCPToken           string
	MCPTokenFile       string   // read into MCPToken
	AllowedHosts       []string // extra Host names, besides loopback ones
	MaxBody            int64    // bytes
	NoAuthLoopbackOnly bool
	SessionTimeout     time.Duration
	MaxSessions        int
	TUI                bool
	Feed               string
	// TrustClientApproval: an HTTP client's user may approve its own
	// held calls (mcp.Options.TrustClientApproval).
	TrustClientApproval bool
	// Instance and Peers: this replica's name and the others' endpoints
	// (mcp.Options.Instance, mcp.Options.Peers; config_eras.go).
	Instance string
	Peers    map[string]string
	// TaskAfter, MaxTasks, MaxTaskBytes: long runs as MCP tasks
	// (mcp.Options.TaskAfter etc.; TaskAfter 0 turns the 2026-07-28 tasks
	// off).
	TaskAfter    time.Duration
	MaxTasks     int
	MaxTaskBytes int64
	// Jupyter
	JupyterURL          string
	JupyterToken        string
	JupyterTokenFile    string // read into JupyterToken
	RootDir             string
	Python              string
	KeepKernels         bool
	StartNewCodeSandbox bool
	SandboxVariant      string
	WatchInterval       time.Duration // 0: no polling
	// Execution
	Timeout           time.Duration
	MaxTimeout        time.Duration
	Images            bool
	MaxOutput         int // bytes
	KernelAutoRestart bool
	// InterruptOnTimeout is the execution.interrupt-on-timeout capability.
	InterruptOnTimeout bool
	// Workbench
	Approve        string // off, destructive, execute or all
	ApproveTimeout time.Duration
	Record         string
	Theme          string // auto, light or dark
	ImageProtocol  string // auto, kitty, iterm2, sixel or halfblocks
	Notify         string // auto, osc9, osc777, osc99 or off
	// Logging
	LogFile  string
	LogLevel slog.Level

	opts []*option // the options above, in help order, with their origins
	args []string  // positional arguments left after the flags
}

// option is one setting: a flag, the environment variable that can also set
// it, its default and its help, and the typed field it fills. A flag beats
// the environment, which beats the default.
type option struct {
	group string
	name  string // flag name
	env   string // environment variable ("" = none)
	def   string
	help  string
	set   setter
	// secret: the value is a secret (or names where one is), kept out of
	// our command line and environment (secrets.go).
	secret bool
	raw    string // the value as given, before parsing
	from   string // default, flag, env or file
}

// options declares every option of c, bound to its field.
func (c *config) options() []*option {
	return []*option{
		{group: "MCP", name: "transport", env: "TRANSPORT", def: "", set: asOneOf(&c.Transport, "use stdio or streamable-http", "", "stdio", "streamable-http"), help: "stdio or streamable-http; empty: the workbench TUI (MCP over HTTP) in a terminal, stdio otherwise"},
		{group: "MCP", name: "port", env: "PORT", def: "4040", set: asPort(&c.Port), help: "port of the streamable HTTP endpoint (/mcp)"},
		{group: "MCP", name: "bind", env: "MCP_BIND", def: "127.0.0.1", set: asText(&c.Bind), help: "address the HTTP endpoint listens on; anything but loopback prints a warning"},
		{group: "MCP", name: "mcp-token", env: "MCP_TOKEN", def: "", set: asText(&c.MCPToken), secret: true, help: "bearer token HTTP clients must send; empty: a random one is generated and shown (given here or in MCP_TOKEN, it is moved out of this process's command line and environment at start-up, where notebook code could read it)"},
		{group: "MCP", name: "mcp-token-file", env: "MCP_TOKEN_FILE", def: "", set: asText(&c.MCPTokenFile), secret: true, help: "read the bearer token from this file's first line instead, e.g. a pipe: --mcp-token-file <(pass show mcp)"},
		{group: "MCP", name: "allowed-hosts", env: "MCP_ALLOWED_HOSTS", def: "", set: asList(&c.AllowedHosts), help: "more Host names the HTTP endpoint answers to, comma-separated (besides loopback names and, with a non-loopback --bind, this machine's host name and addresses)"},
		{group: "MCP", name: "max-body", env: "MCP_MAX_BODY", def: "4194304", set: asBytes(&c.MaxBody, 4096, "a number of bytes >= 4096"), help: "largest HTTP request body in bytes; a bigger one is refused with 413"},
		{group: "MCP", name: "no-auth-loopback-only", env: "MCP_NO_AUTH_LOOPBACK_ONLY", def: "false", set: asBool(&c.NoAuthLoopbackOnly), help: "INSECURE: accept HTTP requests without a bearer token (only allowed when bound to loopback)"},
		{group: "MCP", name: "session-timeout", env: "MCP_SESSION_TIMEOUT", def: "21600", set: asSeconds(&c.SessionTimeout), help: "seconds after which an HTTP session that sent nothing is closed (a client that vanished without ending it); its next request gets 404 and it must initialize again"},
		{group: "MCP", name: "max-sessions", env: "MCP_MAX_SESSIONS", def: "256", set: asAtLeast(&c.MaxSessions, 1, "a number of sessions >= 1"), help: "most live HTTP sessions; opening one more closes the least recently used session of the client holding the most, whose next request gets 404 saying so"},
		{group: "MCP", name: "tui", env: "MCP_TUI", def: "false", set: asBool(&c.TUI), help: "with --transport streamable-http: also show the workbench TUI"},
		{group: "MCP", name: "feed", env: "MCP_FEED", def: "auto", set: asText(&c.Feed), help: "stdio mode: the live feed that 'attach' connects to: auto (a unix socket in a private directory; loopback TCP on Windows), HOST:PORT (TCP, with a token in the record), or off"},
		{group: "MCP", name: "trust-client-approval", env: "MCP_TRUST_CLIENT_APPROVAL", def: "false", set: asBool(&c.TrustClientApproval), help: "over HTTP, let a client's user approve its own held calls (elicitation) when no workbench is attached; only when every process that can get the bearer token is yours to trust (a stdio host always may)"},
		{group: "MCP", name: "instance", env: "MCP_INSTANCE", def: "", set: asInstance(&c.Instance), help: "this replica's name among --peers (letters, digits, - and _); empty: a random one"},
		{group: "MCP", name: "peers", env: "MCP_PEERS", def: "", set: asPeers(&c.Peers), help: "other replicas serving the same clients behind one address, as NAME=URL of their /mcp, comma-separated: a 2026-07-28 client's answer to a call another replica holds, or its poll of a task another holds, is passed to it"},
		{group: "MCP", name: "task-after", env: "MCP_TASK_AFTER", def: "2", set: asSecondsOrOff(&c.TaskAfter), help: "seconds a call that runs code is waited for before a client that declared the tasks extension (2026-07-28) gets a task to poll instead; fractions allowed; 0: never a task"},
		{group: "MCP", name: "max-tasks", env: "MCP_MAX_TASKS", def: "1000", set: asAtLeast(&c.MaxTasks, 1, "a number of tasks >= 1"), help: "most tasks kept at once; over it the finished ones that ended first go (their ids then answer that they expired)"},
		{group: "MCP", name: "max-task-bytes", env: "MCP_MAX_TASK_BYTES", def: "67108864", set: asBytes(&c.MaxTaskBytes, 1<<20, "a number of bytes >= 1048576"), help: "most bytes of finished tasks' results kept; over it the finished ones that ended first go"},
		{group: "Jupyter", name: "jupyter-url", env: "JUPYTER_URL", def: "", set: asURL(&c.JupyterURL), help: "Jupyter server to use (e.g. http://localhost:8888 or a JupyterHub http://hub/user/NAME/); empty: start a managed local jupyter-server"},
		{group: "Jupyter", name: "jupyter-token", env: "JUPYTER_TOKEN", def: "", set: asText(&c.JupyterToken), secret: true, help: "token of the Jupyter server (moved out of the command line and environment at start-up, like --mcp-token)"},
		{group: "Jupyter", name: "jupyter-token-file", env: "JUPYTER_TOKEN_FILE", def: "", set: asText(&c.JupyterTokenFile), secret: true, help: "read the Jupyter server's token from this file's first line instead"},
		{group: "Jupyter", name: "root-dir", env: "JUPYTER_ROOT_DIR", def: "", set: asText(&c.RootDir), help: "root directory of the managed Jupyter server (default: the working directory)"},
		{group: "Jupyter", name: "python", env: "JUPYTER_PYTHON", def: "", set: asText(&c.Python), help: "Python with jupyter_server and ipykernel that runs the managed server and the eval sandbox; empty: the active virtualenv or conda env, else the interpreter of jupyter-server (or jupyter) on PATH, else python3 (or python) on PATH, else /usr/bin/python3"},
		{group: "Jupyter", name: "keep-kernels", env: "KEEP_KERNELS", def: "false", set: asBool(&c.KeepKernels), help: "leave running the kernels this server started when their notebook is released and when it exits (default: shut them down; kernels it attached to by id are always left alone)"},
		{group: "Jupyter", name: "start-new-code-sandbox", env: "START_NEW_CODE_SANDBOX", def: "false", set: asBool(&c.StartNewCodeSandbox), help: "accepted for compatibility with the reference's client config; sandboxes are launched with launch_sandbox"},
		{group: "Jupyter", name: "sandbox-variant", env: "SANDBOX_VARIANT", def: "", set: asText(&c.SandboxVariant), help: "default variant of launch_sandbox (eval or jupyter-server here; empty or jupyter-server: eval, as the reference does)"},
		{group: "Jupyter", name: "watch-interval", env: "WATCH_INTERVAL", def: "2", set: asSecondsOrOff(&c.WatchInterval), help: "seconds between checks of each notebook in use for changes made elsewhere (JupyterLab, an editor, git checkout); 0: check only before each call"},
		{group: "Execution", name: "timeout", env: "EXECUTION_TIMEOUT", def: "300", set: asSeconds(&c.Timeout), help: "default execution timeout in seconds (a tool's timeout of 0 means this)"},
		{group: "Execution", name: "max-timeout", env: "MAX_EXECUTION_TIMEOUT", def: "3600", set: asSeconds(&c.MaxTimeout), help: "upper bound in seconds on any execution timeout"},
		{group: "Execution", name: "images", env: "OUTPUT_IMAGES", def: "true", set: asBool(&c.Images), help: "return image/png and image/jpeg outputs as image content"},
		{group: "Execution", name: "max-output", env: "MAX_OUTPUT_BYTES", def: "20000", set: asAtLeast(&c.MaxOutput, 100, "a number of bytes >= 100"), help: "text outputs longer than this many bytes are cut in tool results and the workbench (the notebook keeps them whole)"},
		{group: "Execution", name: "interrupt-on-timeout", env: "INTERRUPT_ON_TIMEOUT", def: "false", set: asBool(&c.InterruptOnTimeout), help: "interrupt the kernel when an execution outlasts its timeout and return what it produced, as the reference does (default: leave the run going; its outputs keep being saved into the notebook)"},
		{group: "Execution", name: "kernel-auto-restart", env: "KERNEL_AUTO_RESTART", def: "false", set: asBool(&c.KernelAutoRestart), help: "replace a kernel that died mid-execution with a fresh one (its state is lost; results say so)"},
		{group: "Workbench", name: "approve", env: "APPROVE", def: "off", set: asOneOf(&c.Approve, "off, destructive, execute or all", "off", "destructive", "execute", "all"), help: "hold calls for a person to allow: off, destructive, execute (calls that run code or decide where it runs) or all"},
		{group: "Workbench", name: "approve-timeout", env: "APPROVE_TIMEOUT", def: "120", set: asSeconds(&c.ApproveTimeout), help: "seconds a held call waits for a decision before it is denied"},
		{group: "Workbench", name: "record", env: "RECORD_FILE", def: "", set: asText(&c.Record), help: "write every call and result as JSON lines to this file (tokens redacted)"},
		{group: "Workbench", name: "theme", env: "MCP_THEME", def: "auto", set: asOneOf(&c.Theme, "auto, light or dark", "auto", "light", "dark"), help: "workbench colours: auto (follow the terminal's background), light or dark; NO_COLOR=1 turns colours off"},
		{group: "Workbench", name: "image-protocol", env: "MCP_IMAGE_PROTOCOL", def: "auto", set: asOneOf(&c.ImageProtocol, "auto, kitty, iterm2, sixel or halfblocks", ui.ImageProtocols...), help: "how the workbench draws an image opened full-window: auto (from the environment, else asked of the terminal at start-up; half blocks inside tmux unless allow-passthrough is on), kitty, iterm2, sixel or halfblocks"},
		{group: "Workbench", name: "notify", env: "MCP_NOTIFY", def: "auto", set: asOneOf(&c.Notify, "auto, osc9, osc777, osc99 or off", ui.NotifyModes...), help: "desktop notice when a call is held for you (the bell rings either way): auto (iTerm2, WezTerm, Ghostty, kitty, foot, urxvt, VTE terminals; inside tmux only with allow-passthrough), osc9, osc777, osc99 (kitty) or off"},
		{group: "Logging", name: "log-file", env: "LOG_FILE", def: "", set: asText(&c.LogFile), help: "write logs to this file (default: stderr, or nowhere while the TUI runs)"},
		{group: "Logging", name: "log-level", env: "LOG_LEVEL", def: "info", set: asLogLevel(&c.LogLevel), help: "debug, info, warn or error"},
	}
}

const usageHead = `jupyter-mcp-server: let an AI agent read, edit and run Jupyter notebooks over
MCP while you watch and steer in a terminal workbench.

Usage:
  jupyter-mcp-server [flags]             run (the workbench in a terminal)
  jupyter-mcp-server --transport stdio   headless MCP on stdin/stdout
  jupyter-mcp-server attach [ADDRESS]    open the workbench on a running stdio server
  jupyter-mcp-server replay FILE         play a --record file in the workbench (--speed N)
  jupyter-mcp-server replay --against FILE
                                         run its calls against this build, exit 1 on a difference
  jupyter-mcp-server --version

Every flag can also be set by its environment variable; a flag beats the
environment, which beats the default.
`

// parseConfig resolves flags, environment and defaults into typed fields,
// checking every value once so that the rest of main can trust them.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, error) {
	c := &config{}
	c.opts = c.options()
	fs := flag.NewFlagSet("jupyter-mcp-server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, o := range c.opts {
		if o.set.isBool {
			fs.Var(&boolString{s: o.def}, o.name, o.help)
		} else {
			fs.String(o.name, o.def, o.help)
		}
	}
	version := fs.Bool("version", false, "print the version and exit")
	help := fs.Bool("help", false, "show this help")
	fs.BoolVar(help, "h", false, "show this help")
	if err := fs.Parse(joinBoolValues(args, c.opts)); err != nil {
		return nil, fmt.Errorf("%v (see --help)", err)
	}
	if *help {
		printUsage(out, c.opts)
		return nil, errHelp
	}
	if *version {
		return nil, errVersion
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, o := range c.opts {
		o.raw, o.from = o.def, "default"
		if set[o.name] {
			o.raw, o.from = fs.Lookup(o.name).Value.String(), "flag"
		} else if v := envValue(getenv, o.env); v != "" {
			o.raw, o.from = v, "env"
		}
		if allowed := o.set.parse(o.raw); allowed != "" {
			src := "--" + o.name
			if o.from == "env" {
				src = o.env
			}
			return nil, fmt.Errorf("%s=%q is not valid: %s", src, o.raw, allowed)
		}
	}
	c.args = fs.Args()
	if err := c.readTokenFiles(); err != nil {
		return nil, err
	}
	if c.MaxTimeout > mcp.MaxTimeoutSeconds*time.Second {
		// The tools' schemas refuse timeouts above this; a larger cap
		// would promise what no call can ask for.
		return nil, fmt.Errorf("--max-timeout=%d is not valid: at most %d seconds (one day)", int(c.MaxTimeout/time.Second), mcp.MaxTimeoutSeconds)
	}
	if c.MaxTimeout < c.Timeout {
		return nil, fmt.Errorf("--max-timeout (%d) is below --timeout (%d)", int(c.MaxTimeout/time.Second), int(c.Timeout/time.Second))
	}
	return c, nil
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

// origin is the option that fills field (a pointer to one of c's option
// fields): its value as given and where it came from, for capabilities://
// and for saying where a token came from.
func (c *config) origin(field any) *option {
	for _, o := range c.opts {
		if o.set.field == field {
			return o
		}
	}
	panic(fmt.Sprintf("config.origin: %T is not an option field", field))
}

// setter parses an option's text into its typed field. parse answers ""
// when the text is valid, else what is allowed.
type setter struct {
	field  any // the pointer parse writes through, for origin
	isBool bool
	parse  func(string) (allowed string)
}

func asText(p *string) setter {
	return setter{field: p, parse: func(s string) string { *p = s; return "" }}
}

func asOneOf(p *string, allowed string, values ...string) setter {
	return setter{field: p, parse: func(s string) string {
		if !slices.Contains(values, s) {
			return allowed
		}
		*p = s
		return ""
	}}
}

// asList reads a comma-separated list; blanks around items are dropped.
func asList(p *[]string) setter {
	return setter{field: p, parse: func(s string) string {
		*p = nil
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				*p = append(*p, item)
			}
		}
		return ""
	}}
}

func asBytes(p *int64, least int64, allowed string) setter {
	return setter{field: p, parse: func(s string) string {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < least {
			return allowed
		}
		*p = n
		return ""
	}}
}

func asPort(p *int) setter {
	return setter{field: p, parse: func(s string) string {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 65535 {
			return "a port number 0-65535"
		}
		*p = n
		return ""
	}}
}

func asAtLeast(p *int, least int, allowed string) setter {
	return setter{field: p, parse: func(s string) string {
		n, err := strconv.Atoi(s)
		if err != nil || n < least {
			return allowed
		}
		*p = n
		return ""
	}}
}

func asSeconds(p *time.Duration) setter {
	return setter{field: p, parse: func(s string) string {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return "a whole number of seconds >= 1"
		}
		*p = time.Duration(n) * time.Second
		return ""
	}}
}

// asSecondsOrOff reads seconds, fractions allowed; 0 turns the thing off.
func asSecondsOrOff(p *time.Duration) setter {
	return setter{field: p, parse: func(s string) string {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 86400 || (f > 0 && f < 0.01) {
			return "a number of seconds, 0 (off) or from 0.01 to 86400"
		}
		*p = time.Duration(f * float64(time.Second))
		return ""
	}}
}

func asBool(p *bool) setter {
	return setter{field: p, isBool: true, parse: func(s string) string {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return "true or false"
		}
		*p = b
		return ""
	}}
}

func asURL(p *string) setter {
	return setter{field: p, parse: func(s string) string {
		if s != "" && !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
			return "an http:// or https:// URL"
		}
		*p = s
		return ""
	}}
}

func asLogLevel(p *slog.Level) setter {
	return setter{field: p, parse: func(s string) string {
		switch strings.ToLower(s) {
		case "debug", "info", "warn", "error":
		default:
			return "debug, info, warn or error"
		}
		if err := p.UnmarshalText([]byte(s)); err != nil {
			return "debug, info, warn or error"
		}
		return ""
	}}
}

func getenv(name string) string { return os.Getenv(name) }

// joinBoolValues turns "--name true|false" into "--name=true|false" for
// switches ("--tui" alone means true, and "--tui false" with a space, as the
// reference's client config writes --start-new-code-sandbox false, is
// accepted too), because the flag package would otherwise read the value as
// a positional argument.
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
				if o.name == name && o.set.isBool {
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
