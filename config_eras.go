package main

import (
	"net/url"
	"strings"
	"time"
)

// asPeers reads --peers: NAME=URL pairs, comma-separated, each URL an
// http(s) endpoint (mcp.Options.Peers).
func asPeers(p *map[string]string) setter {
	return setter{field: p, parse: func(s string) string {
		const allowed = "NAME=URL pairs, comma-separated, each URL an http:// or https:// endpoint, e.g. b=http://10.0.0.2:4040/mcp"
		peers := map[string]string{}
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			name, raw, ok := strings.Cut(item, "=")
			u, err := url.Parse(strings.TrimSpace(raw))
			if !ok || !validInstance(strings.TrimSpace(name)) || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return allowed
			}
			peers[strings.TrimSpace(name)] = u.String()
		}
		*p = peers
		return ""
	}}
}

// asInstance reads --instance.
func asInstance(p *string) setter {
	return setter{field: p, parse: func(s string) string {
		if s != "" && !validInstance(s) {
			return "a name of letters, digits, - and _ (at most 64)"
		}
		*p = s
		return ""
	}}
}

// validInstance says whether name may name a replica: what a requestState
// carries, so short and plain.
func validInstance(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// taskAfter is --task-after as mcp.Options takes it: 0 (off) is negative
// there, where 0 is the default.
func taskAfter(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
