package calls

import (
	"encoding/json"
	"testing"
)

// HoldsRedacted finds a redaction where secret.RedactArgs makes one, and
// only there: the same word in code is code.
func TestHoldsRedacted(t *testing.T) {
	for _, c := range []struct {
		args string
		want bool
	}{
		{`{"jupyter_token": "[redacted]"}`, true},
		{`{"jupyter_url": "http://h:8888/lab?token=[redacted]"}`, true},
		{`{"jupyter_url": "http://u:[redacted]@h:8888/"}`, true},
		{`{"jupyter_token": "abc123"}`, false},
		{`{"code": "print('[redacted]')"}`, false},
		{`{"code": "1+1"}`, false},
		{`not json [redacted]`, false},
	} {
		if got := HoldsRedacted(json.RawMessage(c.args)); got != c.want {
			t.Errorf("HoldsRedacted(%s) = %v, want %v", c.args, got, c.want)
		}
	}
}
