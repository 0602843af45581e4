package mcp

import (
	"context"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Asking the stdio host outside a call. A legacy host is asked by
// elicitation whenever the server likes (trust.go: pairing a workbench). A
// host of 2026-07-28 cannot be sent a request at all: a server asks only in
// the answer to one of the client's own requests. So the question waits for
// the host's next tool call, which answers input_required with it; the
// host's user answers, the retry delivers the answer, and the call goes on
// as if nothing had been asked. Only the host that spawned us is asked
// this way, never an HTTP client: it is the one channel to the person that
// code in a kernel cannot open itself.

// hostQuestions holds the one question open for a stateless host.
type hostQuestions struct {
	mu   sync.Mutex
	open *question
	n    int
	// declares says whether the host's latest tool call declared form
	// elicitation.
	declares bool
	seen     bool // the host made a stateless tool call
}

// hostSession is the stdio host's session (nil before it connected).
func (s *Server) hostSession() *sdk.ServerSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

// hostIsStateless says whether the stdio host speaks 2026-07-28 or later.
func hostIsStateless(host *sdk.ServerSession) bool {
	p := host.InitializeParams()
	return p != nil && p.ProtocolVersion >= eraStateless
}

// noteHostCall records what the host's stateless tool call declared, and
// returns the question to put to it first, if one is open and the call
// allows asking.
func (s *Server) hostQuestionFor(ctr *sdk.CallToolRequest) *question {
	if ctr.Session == nil || ctr.Session != s.hostSession() {
		return nil
	}
	declares := declaresFormElicitation(capabilitiesOf(ctr))
	h := &s.hostAsk
	h.mu.Lock()
	defer h.mu.Unlock()
	h.declares, h.seen = declares, true
	if !declares {
		return nil
	}
	return h.open
}

// askStatelessHost puts form to the stateless host at its next tool call
// and waits for the answer, or for ctx.
func (s *Server) askStatelessHost(ctx context.Context, form *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	h := &s.hostAsk
	h.mu.Lock()
	if h.open != nil {
		h.mu.Unlock()
		return nil, fmt.Errorf("another question is waiting for the MCP host's next tool call")
	}
	h.n++
	q := &question{key: fmt.Sprintf("host-%d", h.n), form: form, answer: make(chan *sdk.ElicitResult, 1)}
	h.open = q
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if h.open == q {
			h.open = nil
		}
		h.mu.Unlock()
	}()
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// answerHost delivers the host's answer to its open question key; an
// answer to a question no longer open is dropped.
func (s *Server) answerHost(key string, a *sdk.ElicitResult) {
	if a == nil {
		return
	}
	h := &s.hostAsk
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open == nil || h.open.key != key {
		return
	}
	select {
	case h.open.answer <- a:
	default:
	}
	h.open = nil
}

// statelessHostCanAsk says why a stateless host cannot be asked now ("" when
// it can).
func (s *Server) statelessHostCanAsk(host *sdk.ServerSession) string {
	h := &s.hostAsk
	h.mu.Lock()
	declares, seen := h.declares, h.seen
	h.mu.Unlock()
	if !seen {
		// No tool call yet: what its first request declared.
		declares = declaresFormElicitation(host.InitializeParams().Capabilities)
	}
	if !declares {
		return "the MCP host cannot be asked (its requests declare no form elicitation)"
	}
	return ""
}
