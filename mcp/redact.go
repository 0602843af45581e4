package mcp

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Secrets an agent hands over in arguments (connect_to_jupyter's token, a
// sandbox's proxy token, a URL with ?token= or user:password@) must reach the
// tool and nothing else: the call events feed the workbench, the live feed
// and the --record file, so the copy of the arguments given to the engine is
// redacted.

var (
	// userinfoPattern matches the password of a URL's userinfo.
	userinfoPattern = regexp.MustCompile(`(://[^/\s:@]*:)[^@\s/]+@`)
	// urlTokenPattern matches a token in a URL query.
	urlTokenPattern = regexp.MustCompile(`(?i)([?&][a-z_]*token=)[^\s&"'#]+`)
)

// redactURLs removes passwords and query tokens from URLs in text, leaving
// every other word alone (it is safe on messages that quote code).
func redactURLs(text string) string {
	text = userinfoPattern.ReplaceAllString(text, "${1}[redacted]@")
	return urlTokenPattern.ReplaceAllString(text, "${1}[redacted]")
}

// secretArg reports whether an argument name holds a secret.
func secretArg(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "token") || strings.Contains(n, "password") || strings.Contains(n, "secret")
}

// redactArgs returns the arguments with secret values replaced and URLs
// cleaned. Arguments without secrets come back as the same bytes.
func redactArgs(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	changed := false
	for k, v := range m {
		s, ok := v.(string)
		if !ok || s == "" {
			continue
		}
		switch {
		case secretArg(k):
			m[k] = "[redacted]"
			changed = true
		case strings.Contains(strings.ToLower(k), "url"):
			if r := redactURLs(s); r != s {
				m[k] = r
				changed = true
			}
		}
	}
	if !changed {
		return raw
	}
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}
