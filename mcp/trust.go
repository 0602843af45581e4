package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
)

// Whose answer counts. A held call may be put to the person using the
// calling client (elicitation), but a client is whatever presents the
// bearer token, and code running in a kernel as our own OS user may have
// found it (a client's config file, a log). So a session's answer to the
// approval of its own call counts only when the operator said that
// session's host is the person's: the stdio host spawned us, so that is
// implied; over HTTP it takes Options.TrustClientApproval. The stdio host
// also confirms pairings of attached workbenches (engine/observe/pairing.go):
// it is the one channel to the person a kernel cannot open itself.

// asker returns the engine's way to ask the person at this call's client,
// or nil and why not when their answer would not count.
func (s *Server) asker(ss *sdk.ServerSession, d *toolDef, session, tool string, args json.RawMessage) (calls.AskClient, string) {
	if !s.trusted(ss) {
		if !canElicit(ss) {
			return nil, ""
		}
		return nil, "this server takes an HTTP client's own answer to the approval of its call only when started with --trust-client-approval, since any process that has the bearer token is such a client"
	}
	return s.askClient(ss, d, session, tool, args), ""
}

// trusted says whether the person using ss's client may approve its calls.
func (s *Server) trusted(ss *sdk.ServerSession) bool {
	if s.opts.TrustClientApproval {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return ss != nil && ss == s.host
}

// pairingSchema is the pairing question's form: the code the attaching
// terminal shows.
var pairingSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "code": {
      "type": "string",
      "title": "Pairing code",
      "description": "The code shown in the terminal where you ran jupyter-mcp-server attach"
    }
  },
  "required": ["code"]
}`)

// errPairingDeclined is the person declining a pairing question.
var errPairingDeclined = errors.New("the person at the MCP host declined it")

// HostCanPair says why the stdio host cannot be asked to confirm a pairing
// now, "" when it can.
func (s *Server) HostCanPair() string {
	s.mu.Lock()
	host := s.host
	s.mu.Unlock()
	switch {
	case host == nil || host.InitializeParams() == nil:
		return "the MCP host has not connected yet"
	case !canElicit(host):
		return "the MCP host cannot be asked (it did not declare elicitation, or speaks a protocol version where a server asks only within a call)"
	}
	return ""
}

// AskHostToPair asks the person at the stdio host to type the code that
// the attaching terminal shows; peers describe the workbenches asking.
func (s *Server) AskHostToPair(ctx context.Context, peers []string) (string, error) {
	s.mu.Lock()
	host := s.host
	s.mu.Unlock()
	if why := s.HostCanPair(); why != "" {
		return "", errors.New(why)
	}
	res, err := host.Elicit(ctx, &sdk.ElicitParams{Mode: "form", Message: pairingQuestion(peers), RequestedSchema: pairingSchema})
	if err != nil {
		return "", errors.New("asking the MCP host failed: " + redact(err.Error()))
	}
	if res.Action != "accept" {
		return "", errPairingDeclined
	}
	code, _ := res.Content["code"].(string)
	return code, nil
}

// pairingQuestion is what the person at the host reads.
func pairingQuestion(peers []string) string {
	var b strings.Builder
	b.WriteString("A workbench asks to act for you on this Jupyter MCP server: to allow or deny the calls it holds for approval, undo, interrupt, cancel and pause.")
	b.WriteString("\nAsking: " + strings.Join(peers, "; ") + ".")
	b.WriteString("\nIf you just ran `jupyter-mcp-server attach`, type the code it shows in that terminal. If you did not, decline: code running in a notebook may be trying to approve its own calls.")
	return b.String()
}
