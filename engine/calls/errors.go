package calls

import (
	"context"
	"fmt"
	"time"
)

// Refusal is why a call, or a person's action on one, was refused: a
// problem the caller can fix, worded without naming a tool's arguments.
// The engine's IsUserError knows it by CallerCanFix.
type Refusal struct{ Msg string }

func (e *Refusal) Error() string { return e.Msg }

// CallerCanFix marks a refusal as the caller's to fix.
func (*Refusal) CallerCanFix() bool { return true }

func refusef(format string, args ...any) error {
	return &Refusal{Msg: fmt.Sprintf(format, args...)}
}

// Identity is which call a context belongs to. Begin puts it into the
// call's context; whoever records what the call changes (undo) reads it.
type Identity struct {
	ID      string
	Tool    string
	Session string
	Started time.Time
}

type identityKey struct{}

// IdentityOf returns the call ctx belongs to, if Begin made it.
func IdentityOf(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// cut is the start of s, at most n bytes and whole runes, marked "…" when
// cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	at := n
	for at > 0 && s[at]&0xC0 == 0x80 {
		at--
	}
	return s[:at] + "…"
}
