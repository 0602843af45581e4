package secret

import (
	"encoding/json"
	"testing"
)

func TestRedactJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		known    []string
	}{
		{`{}`, `{}`, nil},
		{`{"b":1,"a":[true,false,null,2.50]}`, `{"b":1,"a":[true,false,null,2.50]}`, nil},
		{`{"url":"http://u:pw@h/?token=abc&x=1","proxy_token":"t","nested":{"password":"p","n":3,"pw":""}}`,
			`{"url":"http://u:[redacted]@h/?token=[redacted]\u0026x=1","proxy_token":"[redacted]","nested":{"password":"[redacted]","n":3,"pw":""}}`, nil},
		{`["Authorization: Bearer abc.def", "key 0123456789abcdef here"]`, `["Authorization: Bearer [redacted]","key [redacted] here"]`, []string{"0123456789abcdef", "short"}},
		{`{"token":{"value":"x"}}`, `{"token":{"value":"x"}}`, nil}, // only strings under the name are replaced
		{`not json ?token=abc`, `"not json ?token=[redacted]"`, nil},
		{`{"a":1} {"b":2}`, `"{\"a\":1} {\"b\":2}"`, nil},
		{`{"a":"unterminated`, `"{\"a\":\"unterminated"`, nil},
	}
	for _, c := range cases {
		got := string(RedactJSON(json.RawMessage(c.in), c.known...))
		if got != c.want {
			t.Errorf("RedactJSON(%s) = %s, want %s", c.in, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("RedactJSON(%s) = %s: not JSON", c.in, got)
		}
	}
}

func FuzzRedactJSON(f *testing.F) {
	f.Add([]byte(`{"token":"abc","url":"http://x/?token=y"}`), "abcdefgh")
	f.Add([]byte(`[1,"two",{"three":null}]`), "")
	f.Fuzz(func(t *testing.T, raw []byte, known string) {
		got := RedactJSON(raw, known)
		if !json.Valid(got) {
			t.Fatalf("RedactJSON(%q) = %q: not JSON", raw, got)
		}
	})
}

// Redact replaces secret values, never the prose around them: a Jupyter
// error that speaks of "the token" keeps its words, and a token given as a
// word, assigned or in a header is still replaced.
func TestRedactKeepsProse(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"the Jupyter server at http://127.0.0.1:8888/ refused the token (403) on GET api/status; check that the token matches the server's (the one in the URL it printed when it started)",
			"the Jupyter server at http://127.0.0.1:8888/ refused the token (403) on GET api/status; check that the token matches the server's (the one in the URL it printed when it started)"},
		{"open http://127.0.0.1:8888/?token=... to see it", "open http://127.0.0.1:8888/?token=[redacted] to see it"},
		{"pass the token with --jupyter-token TOKEN", "pass the token with --jupyter-token TOKEN"},
		{"a bearer token is needed", "a bearer token is needed"},
		{"use token 9f86d081884c7d659a2feaa0c55ad015", "use token [redacted]"},
		{"token abcdefghijklmnopqrstuvwxyzABCD works", "token [redacted] works"},
		{"Bearer jup-bearer-secret-5", "Bearer [redacted]"},
		{"Authorization: Bearer abc.def", "Authorization: Bearer [redacted]"},
		{"http://h:8888/lab?token=s3cr3t&x=1", "http://h:8888/lab?token=[redacted]&x=1"},
		{"jupyter server --ServerApp.token=abc", "jupyter server --ServerApp.token=[redacted]"},
		{"the token [redacted] stays", "the token [redacted] stays"},
	}
	for _, c := range cases {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}
