package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// A tools/call of the stateless era (2026-07-28). It runs as a run
// (runs.go), so that a call held for approval can answer its request with
// input_required (multi round-trip requests: the question in inputRequests,
// a signed requestState) and stay held until the client's user answers in a
// retry, or the workbench decides first. A retry's answer counts only when
// its requestState verifies against that very retry (requeststate.go).

// eras is the receiving middleware in front of the observer. A request of
// the stateless era keeps its client leased while it is served, and its
// tools/call runs apart from the request; the rest goes on as it came.
func (s *Server) eras(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if !isStateless(req) {
			if ctr, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" && legacyTaskOf(ctr) {
				return s.legacyTaskCall(ctx, method, ctr, next)
			}
			return next(ctx, method, req)
		}
		ctr, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok {
			defer s.hold(s.callerOf(req))()
			return next(ctx, method, req)
		}
		return s.statelessCall(ctx, method, ctr, next)
	}
}

// newCall is the observer's record of a tool call: of its session's, or of
// the run it executes as.
func (s *Server) newCall(ctx context.Context, ctr *sdk.CallToolRequest) *call {
	if r := runFrom(ctx); r != nil {
		return &call{id: r.id, session: r.owner.key, req: ctr, run: r}
	}
	return &call{id: newCallID(), session: s.sessionID(ctr.Session), req: ctr}
}

// callAsker is how c's client's user is asked to approve it, if they may
// be (trust.go).
func (s *Server) callAsker(c *call, d *toolDef) (calls.AskClient, string) {
	if c.run != nil {
		return s.runAsker(c.run, c.req, d, c.session)
	}
	return s.asker(c.req.Session, d, c.session, c.req.Params.Name, c.req.Params.Arguments)
}

// statelessCall serves a stateless tools/call: a retry carrying an answer,
// or a fresh call. Every tool result it answers with says resultType
// "complete".
func (s *Server) statelessCall(ctx context.Context, method string, ctr *sdk.CallToolRequest, next sdk.MethodHandler) (sdk.Result, error) {
	owner := s.callerOf(ctr)
	defer s.hold(owner)()
	var res sdk.Result
	var err error
	if ctr.Params.RequestState != "" {
		res, err = s.retry(ctx, method, ctr, next, owner)
	} else {
		res, err = s.freshCall(ctx, method, ctr, next, owner)
	}
	if r, ok := res.(*sdk.CallToolResult); ok {
		res = stampComplete(r)
	}
	return res, err
}

// freshCall starts a call and waits for it on behalf of this request. An
// inputResponses sent without a requestState answers nothing: the call
// starts afresh, and asks if it must.
func (s *Server) freshCall(ctx context.Context, method string, ctr *sdk.CallToolRequest, next sdk.MethodHandler, owner caller) (sdk.Result, error) {
	if q := s.hostQuestionFor(ctr); q != nil {
		return s.inputRequired(q, statePayload{Kind: stateHost, Tool: ctr.Params.Name, Args: argsHash(ctr.Params.Arguments), Who: principalHash(owner.key)}), nil
	}
	r := s.startRun(ctx, ctr, owner, func(rctx context.Context, r *run) (sdk.Result, error) {
		return next(withRun(rctx, r), method, ctr)
	})
	if declaresTasks(ctr) && s.opts.TaskAfter >= 0 {
		// A tasks client: a long or held call is answered as a task
		// (tasks_modern.go).
		return s.serveTaskable(ctx, ctr, r)
	}
	return s.serveRun(ctx, ctr, r)
}

// serveRun waits for a run on behalf of this request: its result, or
// input_required while it waits for its client's answer.
func (s *Server) serveRun(ctx context.Context, ctr *sdk.CallToolRequest, r *run) (sdk.Result, error) {
	sk := sinkOf(ctx, ctr)
	r.attach(sk)
	defer r.detach(sk)
	st, q, _ := r.wait(ctx, nil, false)
	if st == runAsking && q != nil {
		return s.inputRequired(q, statePayload{Kind: stateCall, Run: r.id, Tool: r.tool, Args: r.args, Who: principalHash(r.owner.key)}), nil
	}
	return r.result()
}

// inputRequired is the interim answer that puts q to the client, with the
// state that binds the answer to it. The state lives as long as the engine
// waits for a decision.
func (s *Server) inputRequired(q *question, p statePayload) sdk.Result {
	p.Key = q.key
	p.Exp = time.Now().Add(s.e.Calls().ApprovalTimeout()).Unix()
	return &inputRequiredResult{
		InputRequests: sdk.InputRequestMap{q.key: q.form},
		RequestState:  s.states.sign(p),
	}
}

// inputRequiredResult is resultType "input_required". The SDK builds one
// only for results returned from within its own tool path, which a held
// call never reaches.
type inputRequiredResult struct {
	sdk.ResultBase
	InputRequests sdk.InputRequestMap
	RequestState  string
}

func (r *inputRequiredResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Meta          sdk.Meta            `json:"_meta,omitempty"`
		ResultType    string              `json:"resultType"`
		InputRequests sdk.InputRequestMap `json:"inputRequests"`
		RequestState  string              `json:"requestState,omitempty"`
	}{r.Meta, "input_required", r.InputRequests, r.RequestState})
}

// retry serves a stateless tools/call carrying a requestState: the answer
// is taken only when the state verifies against this very retry (tool,
// arguments, client), has not been used, and its question is still open.
// A refused answer runs nothing and says why.
func (s *Server) retry(ctx context.Context, method string, ctr *sdk.CallToolRequest, next sdk.MethodHandler, owner caller) (sdk.Result, error) {
	tool := ctr.Params.Name
	now := time.Now()
	p, err := s.states.verify(ctr.Params.RequestState, tool, ctr.Params.Arguments, owner.key, now)
	if err == nil && p.Kind == stateCall && !s.trusted(ctr.Session) {
		// Whose answer counts is the same for the retry as for the
		// question (trust.go): a state read off the stdio host's pipe
		// and sent over HTTP under the host's name answers nothing,
		// and spends nothing.
		err = &stateError{"the answer came from a client whose answer to an approval does not count here (over HTTP it counts only when this server was started with --trust-client-approval)"}
	}
	if err == nil && p.Kind == stateHost && ctr.Session != s.hostSession() {
		err = &stateError{"the answer was given to another client"}
	}
	if err == nil && !s.states.spend(p, now) {
		err = &stateError{"this answer was used already (an answer counts once)"}
	}
	var r *run
	if err == nil && p.Kind == stateCall {
		if r = s.runs.get(p.Run); r == nil || r.owner.key != owner.key {
			err = &stateError{"the held call it answers is gone (it was decided, or its approval timed out)"}
		}
	}
	if err == nil && p.Kind != stateCall && p.Kind != stateHost {
		err = &stateError{"the requestState is not one this server issued"}
	}
	if err != nil {
		s.log.Warn("refused an answer to an input request", "tool", tool, "client", owner.client, "why", err.Error())
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
			Text: toolErrorText(tool, fmt.Sprintf("The call was not run: %v. Call %s again (without requestState) to be asked again.", err, tool))}}}, nil
	}
	answer, _ := ctr.Params.InputResponses[p.Key].(*sdk.ElicitResult)
	if p.Kind == stateHost {
		if q := s.hostQuestionFor(ctr); q != nil && q.key == p.Key && !validAnswer(answer, pairingCode) {
			// Missing or malformed: ask again (multi round-trip requests,
			// "Error Handling").
			return s.inputRequired(q, p), nil
		}
		s.answerHost(p.Key, answer)
		fresh := *ctr
		params := *ctr.Params
		params.RequestState, params.InputResponses = "", nil
		fresh.Params = &params
		return s.freshCall(ctx, method, &fresh, next, owner)
	}
	if st, q, _ := r.snapshot(); st == runAsking && q != nil && q.key == p.Key && !validAnswer(answer, approvalDecision) {
		return s.inputRequired(q, p), nil
	}
	if answer != nil && !r.answer(p.Key, answer) {
		// Not open any more: the person at the workbench decided
		// first. This retry waits for (and gets) what came of it.
		s.log.Info("an answer came after the call was decided", "call", r.id)
	}
	return s.serveRun(ctx, ctr, r)
}

// validAnswer says whether an elicitation answer fits its form: a decline
// or a dismissal always does; an accept must carry the form's required
// field (field) as a string, and an approval's must choose allow or deny.
// The SDK checks a legacy answer against the form; nothing checks one that
// arrives in a retry but this.
func validAnswer(a *sdk.ElicitResult, field string) bool {
	if a == nil {
		return false
	}
	if a.Action != "accept" {
		return a.Action == "decline" || a.Action == "cancel"
	}
	v, ok := a.Content[field].(string)
	if !ok {
		return false
	}
	if field == approvalDecision {
		return v == approvalAllow || v == "deny"
	}
	return true
}

// runAsker is the engine's way to ask the person at a stateless call's
// client, or nil and why not: by the same rule as a legacy client (only a
// client whose answer counts, trust.go), and only when this very request
// declared form elicitation (a server must not send an input request of a
// kind the client did not declare).
func (s *Server) runAsker(r *run, ctr *sdk.CallToolRequest, d *toolDef, session string) (calls.AskClient, string) {
	tool, args := ctr.Params.Name, ctr.Params.Arguments
	return s.askerFor(ctr.Session, declaresFormElicitation(capabilitiesOf(ctr)), func() calls.AskClient {
		return func(ctx context.Context, preview *event.CallPreview) (calls.ClientAnswer, error) {
			res, err := r.askClient(ctx, &sdk.ElicitParams{
				Mode:            "form",
				Message:         s.approvalQuestion(d, session, tool, args, preview),
				RequestedSchema: approvalSchema,
			})
			if err != nil {
				return calls.ClientAnswer{}, err
			}
			return clientAnswer(res), nil
		}
	})
}
