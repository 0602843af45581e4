package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tasks extension of 2026-07-28 (io.modelcontextprotocol/tasks): the
// server decides, per request, to answer a tools/call with a task.

// declaresTasks says whether this request declared the tasks extension in
// its own capabilities (a server must not answer a task to one that did
// not).
func declaresTasks(req sdk.Request) bool {
	c := capabilitiesOf(req)
	if c == nil {
		return false
	}
	_, ok := c.Extensions[extTasks]
	return ok
}

// taskAfter is how long a call of a tool that runs code is waited for
// before it is answered as a task.
func (s *Server) taskAfter() time.Duration {
	if s.opts.TaskAfter > 0 {
		return s.opts.TaskAfter
	}
	return DefaultTaskAfter
}

// serveTaskable waits for a run of a tasks client's call: a call that ends
// sooner than taskAfter (any call, for a tool that does not run code) is
// answered with its plain result, the task never having existed for the
// client; one that goes on is answered as a task, working; one held for
// approval at once as a task, input_required, its question in the task.
// Until the task is handed out the run is the request's: the client going
// away cancels it, as for a plain call.
func (s *Server) serveTaskable(ctx context.Context, ctr *sdk.CallToolRequest, r *run) (sdk.Result, error) {
	sk := sinkOf(ctx, ctr)
	r.attach(sk)
	defer r.detach(sk)
	var deadline <-chan time.Time
	if d := s.tools[r.tool]; d != nil && d.runsCode {
		timer := time.NewTimer(s.taskAfter())
		defer timer.Stop()
		deadline = timer.C
	}
	st, _, _ := r.wait(ctx, deadline, false)
	if st == runDone {
		return r.result()
	}
	t := s.tasks.add(r, r.owner.key, "", taskModern)
	if t == nil {
		// Full of running tasks: this one stays a plain call.
		s.log.Warn("the task store is full of running tasks; a call waits as a plain call", "max", s.tasks.max)
		st, q, _ := r.wait(ctx, nil, false)
		if st == runAsking && q != nil {
			return s.inputRequired(q, statePayload{Kind: stateCall, Run: r.id, Tool: r.tool, Args: r.args, Who: principalHash(r.owner.key)}), nil
		}
		return r.result()
	}
	s.taskChanged(t)
	go s.followTask(t)
	v := t.view2026(s.tasks.keep, false)
	v["resultType"] = "task"
	return &rawResult{fields: v}, nil
}

// followTask tells the workbench of the task's changes of state until it
// ends.
func (s *Server) followTask(t *task) {
	for {
		st, _, ch := t.r.snapshot()
		if st == runDone {
			s.taskChanged(t)
			return
		}
		<-ch
		s.taskChanged(t)
	}
}

// taskChanged publishes the task's facts on its call's record.
func (s *Server) taskChanged(t *task) {
	if s.tasks.onChange != nil {
		s.tasks.onChange(t)
	}
}

// view2026 is the task as the extension's Task (detailed: a DetailedTask,
// with its inputRequests, result or error).
func (t *task) view2026(keep time.Duration, detailed bool) map[string]any {
	created, updated, ttl := t.times(keep)
	status := t.status()
	v := map[string]any{
		"taskId":         t.id,
		"status":         status,
		"createdAt":      created,
		"lastUpdatedAt":  updated,
		"ttlMs":          ttl.Milliseconds(),
		"pollIntervalMs": taskPoll.Milliseconds(),
	}
	if m := t.statusMessage(); m != "" {
		v["statusMessage"] = m
	}
	if !detailed {
		return v
	}
	st, q, _ := t.r.snapshot()
	res, err := t.r.result()
	switch {
	case st == runAsking && q != nil:
		v["inputRequests"] = map[string]any{q.key: map[string]any{"method": "elicitation/create", "params": q.form}}
	case status == "failed" && err != nil:
		v["error"] = rpcErrorOf(err)
	case status == "completed" && res != nil:
		// Exactly what the call would have returned (its resultType
		// too, as the plain answer stamps it), no related-task.
		if r, ok := res.(*sdk.CallToolResult); ok {
			res = stampComplete(r)
		}
		v["result"] = res
	}
	return v
}

// rpcErrorOf is err as a JSON-RPC error object.
func rpcErrorOf(err error) map[string]any {
	if je, ok := err.(*jsonrpc.Error); ok {
		m := map[string]any{"code": je.Code, "message": je.Message}
		if len(je.Data) > 0 {
			m["data"] = je.Data
		}
		return m
	}
	return map[string]any{"code": jsonrpc.CodeInternalError, "message": redact(err.Error())}
}

// taskParams are the params of every tasks/* method of both eras.
type taskParams struct {
	sdk.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	Cursor         string                     `json:"cursor,omitempty"`
}

// taskCaller is who sends a tasks/* request, in which era, and the
// identity that owns their tasks. On 2026-07-28 the request must itself
// declare the extension (ext-tasks, Error Handling: -32021).
func (s *Server) taskCaller(ss *sdk.ServerSession, p *taskParams) (owner string, era taskEra, err error) {
	req := &sdk.ServerRequest[*taskParams]{Session: ss, Params: p}
	if !isStateless(req) {
		return legacyOwner(ss), taskLegacy, nil
	}
	if !declaresTasks(req) {
		data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{extTasks: map[string]any{}}}})
		return "", taskModern, &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities,
			Message: "Missing required client capability: declare the " + extTasks + " extension in this request's clientCapabilities to use tasks/*", Data: data}
	}
	return s.callerOf(req).key, taskModern, nil
}

// legacyOwner is who owns a session's tasks: its client as initialize
// named it, not the session, so that a client that reconnects (a new
// session, a new process) finds its tasks again.
func legacyOwner(ss *sdk.ServerSession) string {
	var ci *sdk.Implementation
	if ss != nil && ss.InitializeParams() != nil {
		ci = ss.InitializeParams().ClientInfo
	}
	key, _ := principalKey(ci)
	return key
}

// eitherEra is findTask's "no era is refused".
const eitherEra taskEra = -1

// findTask is the caller's task p names, with the era the request speaks;
// a request of era refused is answered "method not found" saying why.
func (s *Server) findTask(ss *sdk.ServerSession, p *taskParams, refused taskEra, why string) (*task, taskEra, error) {
	owner, era, err := s.taskCaller(ss, p)
	if err != nil {
		return nil, era, err
	}
	if era == refused {
		return nil, era, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: why}
	}
	t, err := s.tasks.get(p.TaskID, owner)
	return t, era, err
}

// ack is the empty result of tasks/update and tasks/cancel on 2026-07-28.
func ack() *rawResult { return &rawResult{fields: map[string]any{"resultType": "complete"}} }

// addTaskMethods registers tasks/get, tasks/update, tasks/cancel,
// tasks/result and tasks/list. The same names mean different shapes per
// era (a flat Task or a DetailedTask; a Task or an empty ack), so each
// answers in the era its request speaks.
func (s *Server) addTaskMethods() {
	methods := map[string]func(context.Context, *sdk.ServerSession, *taskParams) (*rawResult, error){
		"tasks/get":    s.taskGet,
		"tasks/update": s.taskUpdate,
		"tasks/cancel": s.taskCancel,
		"tasks/result": s.taskResult,
		"tasks/list":   s.taskList,
	}
	for name, h := range methods {
		// Custom methods take a request without params (a tasks/list
		// sent bare) as a nil *taskParams.
		guarded := func(ctx context.Context, ss *sdk.ServerSession, p *taskParams) (*rawResult, error) {
			if p == nil {
				p = &taskParams{}
			}
			return h(ctx, ss, p)
		}
		if err := sdk.AddReceivingCustomMethod(s.srv, name, guarded); err != nil {
			panic(err)
		}
	}
}

func (s *Server) taskGet(_ context.Context, ss *sdk.ServerSession, p *taskParams) (*rawResult, error) {
	t, era, err := s.findTask(ss, p, eitherEra, "")
	if err != nil {
		return nil, err
	}
	if era == taskLegacy {
		return &rawResult{fields: t.view1686(s.tasks.keep)}, nil
	}
	v := t.view2026(s.tasks.keep, true)
	v["resultType"] = "complete"
	return &rawResult{fields: v}, nil
}

// taskUpdate delivers answers to a task's open question. Keys that are not
// open (answered, withdrawn when the workbench decided, never asked) are
// ignored, as the extension says, and so is an answer that does not fit
// the form: the task stays input_required and asks again.
func (s *Server) taskUpdate(_ context.Context, ss *sdk.ServerSession, p *taskParams) (*rawResult, error) {
	t, _, err := s.findTask(ss, p, taskLegacy, "tasks/update belongs to the 2026-07-28 tasks extension; on 2025-11-25 call tasks/result, which asks for the input")
	if err != nil {
		return nil, err
	}
	if len(p.InputResponses) > 0 && !s.trusted(ss) {
		// Whose answer counts is the same for tasks/update as for the
		// retry of a held call (mrtr.go) and the question (trust.go):
		// a task of the stdio host, answered over HTTP under its name,
		// answers nothing.
		s.log.Warn("refused a task's answer from a client whose answer does not count", "task", t.id)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: the answer came from a client whose answer to an approval does not count here (over HTTP it counts only when this server was started with --trust-client-approval); the person can decide at the workbench"}
	}
	for key, raw := range p.InputResponses {
		var a sdk.ElicitResult
		if json.Unmarshal(raw, &a) != nil || !validAnswer(&a, approvalDecision) {
			s.log.Info("a task's answer did not fit its form; it asks again", "task", t.id, "key", key)
			continue
		}
		if t.r.answer(key, &a) {
			s.log.Info("a task's question was answered by tasks/update", "task", t.id, "key", key, "action", a.Action)
		}
	}
	return ack(), nil
}

// taskCancel stops a task's call (the kernel is interrupted). 2026-07-28
// acknowledges at once (cancellation is eventually consistent); SEP-1686
// answers the Task, cancelled, so it waits (boundedly) for the call to
// stop.
func (s *Server) taskCancel(ctx context.Context, ss *sdk.ServerSession, p *taskParams) (*rawResult, error) {
	t, era, err := s.findTask(ss, p, eitherEra, "")
	if err != nil {
		return nil, err
	}
	if _, done := t.endedAt(); done {
		if era == taskLegacy {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Cannot cancel task %s: it is already %s", t.id, t.status())}
		}
		return ack(), nil
	}
	s.cancelTask(t, "the agent (tasks/cancel)")
	if era == taskModern {
		return ack(), nil
	}
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		st, _, ch := t.r.snapshot()
		if st == runDone {
			break
		}
		select {
		case <-ch:
			continue
		case <-deadline.C:
		case <-ctx.Done():
		}
		break
	}
	v := t.view1686(s.tasks.keep)
	v["status"] = "cancelled" // SEP-1686: cancelled before the answer
	return &rawResult{fields: v}, nil
}
