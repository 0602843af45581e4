package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The experimental tasks of 2025-11-25 (SEP-1686): the client asks for a
// task by params.task on a tool whose execution.taskSupport allows it; the
// answer is the task at once; tasks/get polls it, tasks/result waits for
// its result (and asks the client what a held call needs, on its own
// stream), tasks/list and tasks/cancel. What the TypeScript SDK's
// client.experimental.tasks and VS Code speak.

// relatedTaskMeta ties a message to its task (SEP-1686).
const relatedTaskMeta = "io.modelcontextprotocol/related-task"

// legacyTaskMeta is where params.task is moved before the SDK decodes a
// tools/call: its CallToolParamsRaw has no field for it and would drop it.
// The router (HTTP) and checkedLines (stdio) move it.
const legacyTaskMeta = "io.jupyter-mcp/task"

// legacyTaskOf says whether a session's tools/call asked to be a task.
func legacyTaskOf(ctr *sdk.CallToolRequest) bool {
	if ctr.Params == nil || ctr.Params.Meta == nil {
		return false
	}
	_, ok := ctr.Params.Meta[legacyTaskMeta]
	return ok
}

// legacyTaskCall starts a session's tools/call as a task and answers the
// task at once (CreateTaskResult), as SEP-1686 requires of a receiver that
// accepts a task-augmented request. The call runs apart from the request,
// as the session's call (its current notebook); the task belongs to the
// client identity.
func (s *Server) legacyTaskCall(ctx context.Context, method string, ctr *sdk.CallToolRequest, next sdk.MethodHandler) (sdk.Result, error) {
	delete(ctr.Params.Meta, legacyTaskMeta)
	owner := legacyOwner(ctr.Session)
	if !s.tasks.room(owner) {
		// Refused before the call starts, so nothing of it runs.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "this server holds as many running tasks as it may for this client (--max-tasks, a quarter of it per client); call the tool without a task, or once a task has ended"}
	}
	r := s.startRun(ctx, ctr, s.callerOf(ctr), func(rctx context.Context, r *run) (sdk.Result, error) {
		return next(withRun(rctx, r), method, ctr)
	})
	t := s.tasks.add(r, owner, s.sessionID(ctr.Session), taskLegacy)
	if t == nil {
		// Full of running tasks: SEP-1686 lets a receiver refuse.
		r.stop(errClientCancelled)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "this server holds as many running tasks as it may (--max-tasks); call the tool without a task, or later"}
	}
	s.taskChanged(t)
	go s.followTask(t)
	return &rawResult{fields: map[string]any{"task": t.view1686(s.tasks.keep)}}, nil
}

// view1686 is the SEP-1686 Task.
func (t *task) view1686(keep time.Duration) map[string]any {
	created, updated, ttl := t.times(keep)
	v := map[string]any{
		"taskId":        t.id,
		"status":        t.status(),
		"ttl":           ttl.Milliseconds(),
		"createdAt":     created,
		"lastUpdatedAt": updated,
		"pollInterval":  taskPoll.Milliseconds(),
	}
	if m := t.statusMessage(); m != "" {
		v["statusMessage"] = m
	}
	return v
}

// taskResult waits for a task to end and answers exactly its call's
// result (or error), tagged with the task. A held call is asked here: the
// approval form goes to the client by elicitation on this request's
// stream, tagged with the task, and its answer races the workbench as a
// plain call's does.
func (s *Server) taskResult(ctx context.Context, ss *sdk.ServerSession, p *taskParams) (*rawResult, error) {
	t, _, err := s.findTask(ss, p, taskModern, "Method not found: tasks/result is not part of the 2026-07-28 tasks extension; poll tasks/get, whose completed task carries the result")
	if err != nil {
		return nil, err
	}
	for {
		st, q, _ := t.r.wait(ctx, nil, true)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if st == runDone {
			break
		}
		if q == nil {
			continue
		}
		form := *q.form
		form.Meta = sdk.Meta{relatedTaskMeta: map[string]any{"taskId": t.id}}
		a, err := ss.Elicit(ctx, &form)
		if err != nil || !validAnswer(a, approvalDecision) {
			// No answer (the client failed, or the answer does not fit):
			// the question stays open for the workbench, and for the
			// client's next tasks/result.
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.log.Info("a task's elicitation got no usable answer", "task", t.id, "err", err)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Second):
			}
			continue
		}
		t.r.answer(q.key, a)
	}
	res, rerr := t.r.result()
	if rerr != nil {
		return nil, rerr
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	meta, _ := m["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[relatedTaskMeta] = map[string]any{"taskId": t.id}
	m["_meta"] = meta
	return &rawResult{fields: m}, nil
}

// taskListPage is how many tasks a tasks/list page holds.
const taskListPage = 100

// taskList lists the client's tasks, newest first, a page at a time.
func (s *Server) taskList(_ context.Context, ss *sdk.ServerSession, p *taskParams) (*rawResult, error) {
	owner, era, err := s.taskCaller(ss, p)
	if err != nil {
		return nil, err
	}
	if era == taskModern {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: tasks/list is not part of the 2026-07-28 tasks extension (a client keeps its task ids)"}
	}
	all := s.tasks.list(owner, s.sessionID(ss))
	from := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil || n < 0 || n > len(all) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: cursor is not one tasks/list gave; call tasks/list without a cursor"}
		}
		from = n
	}
	out := []map[string]any{}
	for _, t := range all[from:min(from+taskListPage, len(all))] {
		out = append(out, t.view1686(s.tasks.keep))
	}
	res := map[string]any{"tasks": out}
	if from+taskListPage < len(all) {
		res["nextCursor"] = strconv.Itoa(from + taskListPage)
	}
	return &rawResult{fields: res}, nil
}

// legacyTasks adds to a session's initialize and tools/list what a
// SEP-1686 client looks for before it asks for a task, which the SDK's
// types cannot carry: capabilities.tasks, and execution.taskSupport
// "optional" on the tools that run code. The rest of the answer is kept
// as the SDK encoded it, byte for byte.
func (s *Server) legacyTasks(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || (method != "initialize" && method != "tools/list") || isStateless(req) {
			return res, err
		}
		b, merr := json.Marshal(res)
		if merr != nil {
			return res, err
		}
		switch method {
		case "initialize":
			b = addLegacyTaskCapability(b)
		case "tools/list":
			b = s.addTaskSupport(b)
		}
		return &encodedResult{raw: b}, nil
	}
}

// legacyTasksCapability is SEP-1686's server capability: tasks of
// tools/call, listed and cancelled.
const legacyTasksCapability = `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`

// addLegacyTaskCapability puts capabilities.tasks into an initialize
// result.
func addLegacyTaskCapability(b []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m["capabilities"] == nil {
		return b
	}
	caps := appendField(m["capabilities"], "tasks", []byte(legacyTasksCapability))
	return replaceField(b, m["capabilities"], caps)
}

// addTaskSupport marks the tools that run code as optionally tasks in a
// tools/list result.
func (s *Server) addTaskSupport(b []byte) []byte {
	var m struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	out := b
	for _, raw := range m.Tools {
		var head struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &head) != nil {
			continue
		}
		if d := s.tools[head.Name]; d != nil && d.runsCode {
			out = replaceField(out, raw, appendField(raw, "execution", []byte(`{"taskSupport":"optional"}`)))
		}
	}
	return out
}

// appendField adds "name":value at the end of a JSON object.
func appendField(obj []byte, name string, value []byte) []byte {
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[len(obj)-1] != '}' {
		return obj
	}
	out := append([]byte(nil), obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		out = append(out, ',')
	}
	key, _ := json.Marshal(name)
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, '}')
}

// replaceField replaces the one occurrence of old (a value decoded out of
// b, so present in it as it is) by repl.
func replaceField(b, old, repl []byte) []byte {
	i := bytes.Index(b, old)
	if i < 0 {
		return b
	}
	out := append([]byte(nil), b[:i]...)
	out = append(out, repl...)
	return append(out, b[i+len(old):]...)
}

// encodedResult is a result already encoded.
type encodedResult struct {
	sdk.ResultBase
	raw json.RawMessage
}

func (r *encodedResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// moveLegacyTask moves a tools/call's params.task into its _meta (where
// the SDK keeps it: legacyTaskMeta), for a JSON-RPC message line or body.
// Anything else comes back as it was.
func moveLegacyTask(msg []byte) []byte {
	if !bytes.Contains(msg, []byte(`"task"`)) || !bytes.Contains(msg, []byte(`tools/call`)) {
		return msg
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	var method string
	if json.Unmarshal(m["method"], &method) != nil || method != "tools/call" {
		return msg
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(m["params"], &params) != nil || params["task"] == nil {
		return msg
	}
	meta := map[string]json.RawMessage{}
	if raw := params["_meta"]; raw != nil && json.Unmarshal(raw, &meta) != nil {
		return msg
	}
	meta[legacyTaskMeta] = params["task"]
	delete(params, "task")
	params["_meta"], _ = json.Marshal(meta)
	m["params"], _ = json.Marshal(params)
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}
