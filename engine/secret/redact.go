package secret

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// Secrets an agent hands over in arguments (connect_to_jupyter's token, a
// sandbox's proxy token, a URL with ?token= or user:password@) must reach the
// tool and nothing else: the call events feed the workbench, the live feed
// and the --record file, so the copy of the arguments given to the engine is
// redacted. What the workbench copies or exports is redacted again, results
// too, by the same rules: this file is the one policy for both.

// Redacted is what a secret is replaced with.
const Redacted = "[redacted]"

var (
	// userinfoPattern matches the password of a URL's userinfo.
	userinfoPattern = regexp.MustCompile(`(://[^/\s:@]*:)[^@\s/]+@`)
	// urlTokenPattern matches a token in a URL query.
	urlTokenPattern = regexp.MustCompile(`(?i)([?&][a-z_]*token=)[^\s&"'#]+`)
	// assignedPattern matches what must never reach an agent or a file:
	// a token assigned (token=VALUE, as in a URL query or a command line)
	// or an Authorization header's value.
	assignedPattern = regexp.MustCompile(`(?i)(token=|authorization:\s*\S+\s+)[^\s&"',;)]+`)
	// wordPattern matches a word after the words token or bearer in prose
	// ("refused the token abc123…"): redacted only when it looks like a
	// secret (looksSecret), so that "the token matches" keeps its words.
	wordPattern = regexp.MustCompile(`(?i)(\btoken\s+|\bbearer\s+)([A-Za-z0-9._~+/=-]+)`)
)

// looksSecret reports whether a word is shaped like a token rather than an
// English word: at least 8 characters with a digit in them, or at least 24
// (a long random string without digits).
func looksSecret(w string) bool {
	if len(w) >= 24 {
		return true
	}
	return len(w) >= 8 && strings.ContainsAny(w, "0123456789")
}

// RedactURLs removes passwords and query tokens from URLs in text, leaving
// every other word alone (it is safe on messages that quote code).
func RedactURLs(text string) string {
	text = userinfoPattern.ReplaceAllString(text, "${1}"+Redacted+"@")
	return urlTokenPattern.ReplaceAllString(text, "${1}"+Redacted)
}

// Redact removes tokens from a text: URL secrets, a value assigned to a
// token (token=…) or given in an Authorization header, and a word after
// the words token or bearer that looks like a secret. It replaces secret
// values only: the prose around them stays ("refused the token (403) …
// check that the token matches the server's" is left as it is). It is
// meant for error texts and results, not for code, where it may hide more
// than a secret.
func Redact(text string) string {
	text = assignedPattern.ReplaceAllString(RedactURLs(text), "${1}"+Redacted)
	return wordPattern.ReplaceAllStringFunc(text, func(m string) string {
		sub := wordPattern.FindStringSubmatch(m)
		if !looksSecret(sub[2]) || sub[2] == Redacted {
			return m
		}
		return sub[1] + Redacted
	})
}

// IsSecretName reports whether an argument or key name holds a secret.
func IsSecretName(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "token") || strings.Contains(n, "password") || strings.Contains(n, "secret")
}

// RedactArgs returns tool arguments with secret values replaced and URLs
// cleaned. Arguments without secrets come back as the same bytes.
func RedactArgs(raw json.RawMessage) json.RawMessage {
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
		case IsSecretName(k):
			m[k] = Redacted
			changed = true
		case strings.Contains(strings.ToLower(k), "url"):
			if r := RedactURLs(s); r != s {
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

// RedactText is Redact that also replaces every occurrence of the known
// secrets given (the workbench's own bearer token, say), whatever words
// surround them. Empty and very short known secrets are ignored: replacing
// every "a" would hide the text, not a secret.
func RedactText(text string, known ...string) string {
	for _, k := range known {
		if len(k) >= 8 {
			text = strings.ReplaceAll(text, k, Redacted)
		}
	}
	return Redact(text)
}

// RedactJSON returns a JSON document with every string value under a
// secret-named key replaced and every string (keys' values at any depth,
// and array items) passed through RedactText. Object keys keep their
// order. A document that is not valid JSON comes back as a JSON string of
// its redacted text, so the result is always valid JSON.
func RedactJSON(raw json.RawMessage, known ...string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	if err := redactValue(dec, &out, false, known); err != nil || dec.More() {
		b, _ := json.Marshal(RedactText(string(raw), known...))
		return b
	}
	if _, err := dec.Token(); err == nil {
		// Something follows the value: not one JSON document.
		b, _ := json.Marshal(RedactText(string(raw), known...))
		return b
	}
	return out.Bytes()
}

// redactValue copies one JSON value from dec to out, redacting strings;
// secret says the value sits under a secret-named key.
func redactValue(dec *json.Decoder, out *bytes.Buffer, secret bool, known []string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		out.WriteByte(byte(t))
		first := true
		for dec.More() {
			if !first {
				out.WriteByte(',')
			}
			first = false
			childSecret := false
			if t == '{' {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				kb, _ := json.Marshal(k)
				out.Write(kb)
				out.WriteByte(':')
				childSecret = IsSecretName(k)
			}
			if err := redactValue(dec, out, childSecret, known); err != nil {
				return err
			}
		}
		end, err := dec.Token()
		if err != nil {
			return err
		}
		out.WriteByte(byte(end.(json.Delim)))
	case string:
		s := RedactText(t, known...)
		if secret && t != "" {
			s = Redacted
		}
		b, _ := json.Marshal(s)
		out.Write(b)
	case json.Number:
		out.WriteString(t.String())
	case bool:
		if t {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	}
	return nil
}
