package mcp

import (
	"strings"
	"testing"
	"time"
)

// A state verifies for the retry it was given for and no other, and is
// spent once.
func TestRequestStateBindsItsRetry(t *testing.T) {
	t.Parallel()
	k := newStateKeeper("a")
	args := []byte(`{"cell_indices":[0],"notebook_name":"x"}`)
	now := time.Now()
	p := statePayload{Kind: stateCall, Run: "c-1", Key: "approval-1", Tool: "delete_cell", Args: argsHash(args), Who: principalHash("@agent 1"), Exp: now.Add(time.Minute).Unix()}
	state := k.sign(p)
	got, err := k.verify(state, "delete_cell", []byte(` { "notebook_name" : "x", "cell_indices" : [ 0 ] } `), "@agent 1", now)
	if err != nil || got.Run != "c-1" || got.Key != "approval-1" {
		t.Fatalf("the state's own retry (keys reordered, blanks added): %+v %v", got, err)
	}
	for _, tt := range []struct {
		name, state, tool, who string
		args                   []byte
		at                     time.Time
		want                   string
	}{
		{"another tool", state, "clear_cell_output", "@agent 1", args, now, "for a call to delete_cell, not clear_cell_output"},
		{"other arguments", state, "delete_cell", "@agent 1", []byte(`{"cell_indices":[1],"notebook_name":"x"}`), now, "other arguments"},
		{"another number", state, "delete_cell", "@agent 1", []byte(`{"cell_indices":[0.0],"notebook_name":"x"}`), now, "other arguments"},
		{"another client", state, "delete_cell", "@other 1", args, now, "another client"},
		{"too late", state, "delete_cell", "@agent 1", args, now.Add(2 * time.Minute), "expired"},
		{"another process", newStateKeeper("b").sign(p), "delete_cell", "@agent 1", args, now, "another server process"},
		{"forged here", newStateKeeper("a").sign(p), "delete_cell", "@agent 1", args, now, "failed verification"},
		{"cut", state[:len(state)-3], "delete_cell", "@agent 1", args, now, "failed verification"},
		{"no mac", strings.Split(state, ".")[0], "delete_cell", "@agent 1", args, now, "not one this server issued"},
		{"huge", strings.Repeat("A", maxStateBytes+1), "delete_cell", "@agent 1", args, now, "not one this server issued"},
	} {
		if _, err := k.verify(tt.state, tt.tool, tt.args, tt.who, tt.at); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	if !k.spend(got, now) || k.spend(got, now) {
		t.Error("a state is spent once, and only once")
	}
	if a, b := k.sign(p), k.sign(p); a == b || peekInstance(a) != "a" {
		t.Errorf("two states of one question share a nonce, or do not name their process: %s %s", a, b)
	}
}

// No input makes verify panic or accept something this keeper did not
// sign.
func FuzzRequestState(f *testing.F) {
	k := newStateKeeper("a")
	now := time.Now()
	f.Add(k.sign(statePayload{Kind: stateCall, Run: "c-1", Key: "approval-1", Tool: "t", Args: argsHash(nil), Who: principalHash("@x 1"), Exp: now.Add(time.Hour).Unix()}), []byte(`{}`))
	f.Add("e30.AAAA", []byte(`{"a":1}`))
	f.Add("..", []byte(`null`))
	f.Fuzz(func(t *testing.T, state string, args []byte) {
		p, err := k.verify(state, "t", args, "@x 1", now)
		if err == nil && (p.Inst != "a" || p.V != 1) {
			t.Fatalf("accepted %q as %+v", state, p)
		}
		_ = peekInstance(state)
		_ = argsHash(args)
	})
}
