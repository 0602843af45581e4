package main

// Secrets we are started with (the MCP bearer token, the Jupyter token)
// must not stay where code running as our own user can read them: a
// kernel reads /proc/PID/environ and /proc/PID/cmdline of any process of
// ours, and they show what the process was started with whatever it
// unsets later. So when a secret came in our environment or on our command
// line, we start over (exec, same process, same pid, same stdin and
// stdout) without it, and hand it to ourselves through a pipe that the
// new image reads once and closes (secrets_unix.go). A token file
// (--mcp-token-file) names where to read it instead; a file on disk stays
// readable by our user, a pipe (<(...)) does not.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// secretsFDEnv names the descriptor our earlier image passed the secrets
// on. It carries a number, never a secret.
const secretsFDEnv = "JUPYTER_MCP_SECRETS_FD"

// passedSecret is a secret option's value as our earlier image resolved
// it, with where it came from (flag, env, file) for the header and logs.
type passedSecret struct {
	Value string `json:"value"`
	From  string `json:"from"`
}

// takeSecrets reads the secrets our earlier image passed (nil when it did
// not) and closes their descriptor, so nothing we start inherits it.
func takeSecrets() (map[string]passedSecret, error) {
	v := os.Getenv(secretsFDEnv)
	if v == "" {
		return nil, nil
	}
	os.Unsetenv(secretsFDEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q is not a descriptor", secretsFDEnv, v)
	}
	f := os.NewFile(uintptr(fd), "secrets")
	defer f.Close()
	var m map[string]passedSecret
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		return nil, fmt.Errorf("reading the secrets passed at start-up: %w", err)
	}
	return m, nil
}

// withSecrets is getenv with the passed secrets in place of the variables
// of their options.
func withSecrets(getenv func(string) string, passed map[string]passedSecret) func(string) string {
	if passed == nil {
		return getenv
	}
	return func(name string) string {
		if s, ok := passed[name]; ok {
			return s.Value
		}
		return getenv(name)
	}
}

// notePassed restores where each passed secret came from.
func (c *config) notePassed(passed map[string]passedSecret) {
	for _, o := range c.opts {
		if s, ok := passed[o.env]; ok && o.env != "" {
			o.from = s.From
		}
	}
}

// readTokenFiles fills the tokens from --mcp-token-file and
// --jupyter-token-file: the first line, trimmed. A token given both ways
// is refused rather than one silently winning.
func (c *config) readTokenFiles() error {
	for _, t := range []struct{ path, token *string }{{&c.MCPTokenFile, &c.MCPToken}, {&c.JupyterTokenFile, &c.JupyterToken}} {
		if *t.path == "" {
			continue
		}
		file, tok := c.origin(t.path), c.origin(t.token)
		if *t.token != "" {
			return fmt.Errorf("--%s and --%s (or %s) both give the token: give one", file.name, tok.name, tok.env)
		}
		f, err := os.Open(*t.path)
		if err != nil {
			return fmt.Errorf("--%s: %w", file.name, err)
		}
		line, err := bufio.NewReader(f).ReadString('\n')
		f.Close()
		line = strings.TrimSpace(line)
		if line == "" {
			if err != nil && err.Error() != "EOF" {
				return fmt.Errorf("--%s: %w", file.name, err)
			}
			return fmt.Errorf("--%s: %s holds no token on its first line", file.name, *t.path)
		}
		*t.token = line
		tok.raw, tok.from = line, "file"
	}
	return nil
}

// exposedSecrets says whether a secret sits in our environment or on our
// command line, where code running as our user can read it.
func exposedSecrets(c *config, args []string) bool {
	for _, field := range []*string{&c.MCPToken, &c.JupyterToken} {
		o := c.origin(field)
		if os.Getenv(o.env) != "" {
			return true
		}
		for _, a := range args {
			if a == "--" {
				break
			}
			if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == o.name {
				return true
			}
		}
	}
	return false
}

// stripSecretArgs is args without the secret options and their values.
func stripSecretArgs(c *config, args []string) []string {
	secret := map[string]bool{}
	for _, o := range c.opts {
		if o.secret {
			secret[o.name] = true
		}
	}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && secret[name] {
			if !hasValue {
				i++ // the value is the next argument
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// secretsToPass are the resolved secrets, by the variable of their option,
// for our next image.
func secretsToPass(c *config) map[string]passedSecret {
	m := map[string]passedSecret{}
	for _, field := range []*string{&c.MCPToken, &c.JupyterToken} {
		o := c.origin(field)
		if *field != "" {
			m[o.env] = passedSecret{Value: *field, From: o.from}
		}
	}
	return m
}

// cleanEnviron is our environment without the secret options' variables
// and with extra added.
func cleanEnviron(c *config, extra ...string) []string {
	drop := map[string]bool{}
	for _, o := range c.opts {
		if o.secret && o.env != "" {
			drop[o.env] = true
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}
