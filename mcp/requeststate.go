package mcp

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The requestState of an input_required answer (2026-07-28, multi
// round-trip requests) binds the client's answer to the one question it was
// asked about. The client echoes it back with its answer, and it is
// attacker-controlled input: the agent's code runs as our OS user and may
// send a retry of its own. So the state is signed (HMAC-SHA256, with a key
// that exists only in this process's memory: nothing on disk, in the
// environment or on a socket the kernel can read gives it away) and carries
// what the retry must match: this process, the call and the question, the
// tool, the arguments, the client, and an expiry. A signature cannot make
// an answer single-use, so that is kept here: each state's nonce is spent
// by its first retry, and the call's question is consumed by the first
// answer (run.answer).

// statePayload is what a requestState carries. Nothing in it is secret.
type statePayload struct {
	V    int    `json:"v"`
	Inst string `json:"i"`           // the server process that holds the call
	Kind string `json:"kind"`        // stateCall or stateHost
	Run  string `json:"r,omitempty"` // the held call's id (stateCall)
	Key  string `json:"k"`           // the input request it answers
	Tool string `json:"t"`
	Args string `json:"a"` // argsHash of the call's arguments
	Who  string `json:"p"` // principalHash of the caller
	Exp  int64  `json:"e"` // unix seconds
	N    string `json:"n"` // nonce
}

// What a requestState answers: a held call's approval question, or a
// question the server put to its stdio host (pairing a workbench) in front
// of one of the host's calls.
const (
	stateCall = "call"
	stateHost = "host"
)

// stateDomain separates our MACs from any other use of the key.
const stateDomain = "jupyter-mcp requestState v1\x00"

// stateKeeper signs and checks requestStates and remembers spent nonces.
type stateKeeper struct {
	key  []byte
	inst string

	mu    sync.Mutex
	spent map[string]time.Time // nonce -> expiry
}

func newStateKeeper(inst string) *stateKeeper {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand does not fail on the platforms we build for
	}
	if inst == "" {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		inst = hex.EncodeToString(b)
	}
	return &stateKeeper{key: key, inst: inst, spent: map[string]time.Time{}}
}

// sign returns the requestState for p, stamped with this process and a
// fresh nonce.
func (k *stateKeeper) sign(p statePayload) string {
	p.V, p.Inst = 1, k.inst
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	p.N = base64.RawURLEncoding.EncodeToString(b)
	body, _ := json.Marshal(p)
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(k.mac(body))
}

func (k *stateKeeper) mac(body []byte) []byte {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte(stateDomain))
	m.Write(body)
	return m.Sum(nil)
}

// stateError is a refused requestState, in words for the agent.
type stateError struct{ why string }

func (e *stateError) Error() string { return e.why }

// maxStateBytes bounds a requestState read: ours are a few hundred bytes.
const maxStateBytes = 4096

// peekInstance is the process a requestState names, unverified: for
// forwarding it to that process, which verifies it.
func peekInstance(state string) string {
	if len(state) > maxStateBytes {
		return ""
	}
	body64, _, _ := strings.Cut(state, ".")
	body, err := base64.RawURLEncoding.DecodeString(body64)
	if err != nil {
		return ""
	}
	var p struct {
		Inst string `json:"i"`
	}
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	return p.Inst
}

// verify checks a retry's requestState against the retry itself: its
// signature, its expiry, and that it was given for this tool with these
// arguments to this caller. It spends nothing (spend does).
func (k *stateKeeper) verify(state, tool string, args []byte, who string, now time.Time) (statePayload, error) {
	var p statePayload
	notOurs := &stateError{"the requestState is not one this server issued"}
	if len(state) > maxStateBytes {
		return p, notOurs
	}
	body64, mac64, ok := strings.Cut(state, ".")
	if !ok {
		return p, notOurs
	}
	body, err1 := base64.RawURLEncoding.DecodeString(body64)
	mac, err2 := base64.RawURLEncoding.DecodeString(mac64)
	if err1 != nil || err2 != nil {
		return p, notOurs
	}
	if !hmac.Equal(mac, k.mac(body)) {
		// Say whether another process issued it (a replica, or this
		// server before a restart), trusting nothing else in it.
		if inst := peekInstance(state); inst != "" && inst != k.inst {
			return p, &stateError{"the requestState was issued by another server process (a replica behind the same address, or this server before a restart), which holds that call; this one cannot take its answer"}
		}
		return p, &stateError{"the requestState failed verification (it was altered or forged)"}
	}
	if err := json.Unmarshal(body, &p); err != nil || p.V != 1 {
		return p, notOurs
	}
	switch {
	case now.Unix() > p.Exp:
		return p, &stateError{"the request it answers expired"}
	case p.Tool != tool:
		return p, &stateError{fmt.Sprintf("the answer was given for a call to %s, not %s", p.Tool, tool)}
	case p.Args != argsHash(args):
		return p, &stateError{"the answer was given for this tool with other arguments"}
	case p.Who != principalHash(who):
		return p, &stateError{"the answer was given to another client"}
	}
	return p, nil
}

// spend uses up a state's nonce; it reports false when it was spent
// already (a replay). Nonces are forgotten once their state expired.
func (k *stateKeeper) spend(p statePayload, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for n, exp := range k.spent {
		if now.After(exp) {
			delete(k.spent, n)
		}
	}
	if _, ok := k.spent[p.N]; ok {
		return false
	}
	k.spent[p.N] = time.Unix(p.Exp, 0).Add(time.Second)
	return true
}

// argsHash is the sha256 of a call's arguments in a canonical form (decoded
// with numbers as written, encoded again, which sorts object keys), so that
// a client encoding the same arguments anew still matches.
func argsHash(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil {
		if canon, err := json.Marshal(v); err == nil {
			raw = canon
		}
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// principalHash is a short digest of a caller's key.
func principalHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}
