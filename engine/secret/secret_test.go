package secret

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	t.Parallel()
	cases := []struct{ tok, want string }{
		{"", ""},
		{"a", "••••"},
		{"abcd", "••••"},
		{"abcde", "••••"}, // a four-character prefix would be most of it
		{"s3cret-tok", "••••"},
		{"12345678901", "••••"},
		{"123456789012", "1234…"},
		{"e2e-secret-token-0123456789", "e2e-…"},
	}
	for _, c := range cases {
		got := Mask(c.tok)
		if got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.tok, got, c.want)
		}
		if c.tok != "" && strings.Contains(got, c.tok) {
			t.Errorf("Mask(%q) = %q shows the whole token", c.tok, got)
		}
	}
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		header string
		want   string
		ok     bool
	}{
		{"Bearer s3cret", "s3cret", true},
		{"bearer s3cret", "s3cret", true},
		{"BEARER s3cret", "s3cret", true},
		{"Bearer   s3cret  ", "s3cret", true},
		{"  Bearer s3cret", "s3cret", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Bearers3cret", "", false},
		{"Basic dXNlcjpwYXNz", "", false},
		{"Token s3cret", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		got, ok := BearerToken(c.header)
		if got != c.want || ok != c.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", c.header, got, ok, c.want, c.ok)
		}
	}
}

func TestAuthorized(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		header string
		url    string
		want   string
		query  string
		ok     bool
	}{
		{"right token", "Bearer s3cret", "/", "s3cret", "", true},
		{"scheme in lower case", "bearer s3cret", "/", "s3cret", "", true},
		{"wrong token", "Bearer nope", "/", "s3cret", "", false},
		{"prefix of the token", "Bearer s3cre", "/", "s3cret", "", false},
		{"token plus more", "Bearer s3cretX", "/", "s3cret", "", false},
		{"no header", "", "/", "s3cret", "", false},
		{"other scheme", "Basic s3cret", "/", "s3cret", "", false},
		{"nothing wanted is nothing presented", "Bearer ", "/", "", "", false},
		{"query when allowed", "", "/?token=s3cret", "s3cret", "token", true},
		{"query when not allowed", "", "/?token=s3cret", "s3cret", "", false},
		{"header wins over query", "Bearer nope", "/?token=s3cret", "s3cret", "token", false},
		{"wrong query", "", "/?token=nope", "s3cret", "token", false},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", c.url, nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		if got := Authorized(r, c.want, c.query); got != c.ok {
			t.Errorf("%s: Authorized = %v, want %v", c.name, got, c.ok)
		}
	}
}
