// Package secret holds the one policy for showing a token and the one
// parser and comparison for bearer tokens, shared by the MCP endpoint's
// guard, the live feed, the workbench header and the logs.
package secret

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Mask shows the first four characters of a token and hides the rest.
// Short tokens are hidden whole: four characters of an eight-character
// token would be half of it. The empty token stays empty.
func Mask(tok string) string {
	switch {
	case tok == "":
		return ""
	case len(tok) < 12:
		return "••••"
	default:
		return tok[:4] + "…"
	}
}

// BearerToken is the token of an Authorization header value
// "Bearer TOKEN". The scheme is case-insensitive (RFC 6750 §2.1 uses the
// HTTP authentication scheme, RFC 9110 §11.1) and the token is trimmed of
// surrounding blanks; ok is false for any other scheme or an empty token.
func BearerToken(header string) (token string, ok bool) {
	scheme, rest, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(rest)
	return token, token != ""
}

// Authorized reports whether r presents want, compared in constant time.
// The token comes from the Authorization header; when queryParam is not
// empty and the request has no bearer header, from that URL query
// parameter instead (for websocket clients that cannot set headers). An
// empty want is never presented.
func Authorized(r *http.Request, want, queryParam string) bool {
	got, ok := BearerToken(r.Header.Get("Authorization"))
	if !ok && queryParam != "" {
		got = r.URL.Query().Get(queryParam)
	}
	if want == "" || got == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
