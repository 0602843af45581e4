package observe

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"
)

// Pairing a workbench: the feed sends the workbench asking for it a code
// of its own, which its terminal shows, and asks the person at the MCP host
// to type the code they see. A workbench is paired when the typed code is
// its code. One question is open at a time; a code typed while several
// workbenches wait pairs the one whose code it is, so that a request made
// by kernel code at the same moment cannot take the person's answer.

// pairingAlphabet has no letters that read alike (0/O, 1/I/L).
const pairingAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// pairingQuiet is how long the feed waits before asking again after a
// question that paired no one, so that code opening connection after
// connection cannot flood the person with questions.
const pairingQuiet = 10 * time.Second

// newPairingCode is eight random symbols, "K7Q4-HZ2M": 31^8 (about 2^40)
// codes, and each guess costs a question a person must answer.
func newPairingCode() string {
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if i == 4 {
			b.WriteByte('-')
		}
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(pairingAlphabet))))
		if err != nil {
			panic(err) // crypto/rand does not fail on the platforms we build for
		}
		b.WriteByte(pairingAlphabet[n.Int64()])
	}
	return b.String()
}

// normalizeCode is a code as typed, without case, blanks or dashes.
func normalizeCode(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codeMatches compares a typed code with a workbench's in constant time.
func codeMatches(typed, code string) bool {
	t, c := normalizeCode(typed), normalizeCode(code)
	return len(t) == len(c) && subtle.ConstantTimeCompare([]byte(t), []byte(c)) == 1
}

// pairings puts the workbenches waiting to be paired to the person at the
// host, one question at a time.
type pairings struct {
	feed *Feed

	mu         sync.Mutex
	pending    []*pairRequest
	asking     bool
	quietUntil time.Time
}

// pairRequest is one workbench waiting to be paired.
type pairRequest struct {
	label, code string
	asked       bool       // named in the question being answered
	done        chan error // nil: paired
}

// ask waits until the person at the host paired the workbench label,
// whose terminal shows code, or did not.
func (p *pairings) ask(label, code string) error {
	req := &pairRequest{label: label, code: code, done: make(chan error, 1)}
	p.mu.Lock()
	p.pending = append(p.pending, req)
	if !p.asking {
		p.asking = true
		go p.run()
	}
	p.mu.Unlock()
	return <-req.done
}

// run asks while workbenches wait.
func (p *pairings) run() {
	for {
		p.mu.Lock()
		wait := time.Until(p.quietUntil)
		p.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
		}
		p.mu.Lock()
		if len(p.pending) == 0 {
			p.asking = false
			p.mu.Unlock()
			return
		}
		var peers []string
		for _, r := range p.pending {
			r.asked = true
			peers = append(peers, r.label)
		}
		p.mu.Unlock()

		timeout := p.feed.opts.PairTimeout
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		typed, err := p.feed.opts.Pair(ctx, peers)
		timedOut := ctx.Err() != nil
		cancel()

		p.mu.Lock()
		paired := false
		var keep []*pairRequest
		for _, r := range p.pending {
			switch {
			case err == nil && codeMatches(typed, r.code):
				r.done <- nil
				paired = true
			case !r.asked:
				keep = append(keep, r) // came during the question: ask again
			case timedOut:
				r.done <- fmt.Errorf("the person at the MCP host did not answer the pairing question within %s", timeout)
			case err != nil:
				r.done <- fmt.Errorf("the pairing was not confirmed at the MCP host: %w", err)
			default:
				r.done <- errors.New("the code typed into the MCP host's question was not this workbench's")
			}
		}
		p.pending = keep
		if !paired {
			p.quietUntil = time.Now().Add(pairingQuiet)
		}
		p.mu.Unlock()
	}
}
