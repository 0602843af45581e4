package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Long runs as tasks on 2026-07-28, against a real kernel, with a client
// written against the ext-tasks schema (tasks_client_test.go), over stdio
// and HTTP.

// eachTransport runs f as a parallel subtest per transport.
func eachTransport(t *testing.T, f func(t *testing.T, transport string)) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			f(t, tr)
		})
	}
}

// useNotebook makes a notebook with cells current for c.
func useNotebook(t *testing.T, h *harness, c *taskConn, name string, cells ...string) (rel string) {
	t.Helper()
	rel = h.writeNotebook(name+".ipynb", cells...)
	if res, err := c.call("use_notebook", map[string]any{"notebook_name": name, "notebook_path": rel}); err != nil || res["isError"] == true {
		t.Fatalf("use_notebook: %v %v", err, res)
	}
	return rel
}

// A 20 s cell is answered as a task after the threshold; its polls say
// working with the progress (elapsed, outputs so far, newest lines), and
// the completed task carries the call's result: the outputs, the
// structuredContent and the cell id in _meta.
func TestA20sCellIsATaskPolledToItsResult(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, transport string) {
		h := trustingHarness(t)
		c := h.taskClient(transport, "agent", true)
		useNotebook(t, h, c, "long", "x = 1")
		start := time.Now()
		created, err := c.call("insert_execute_code_cell", map[string]any{
			"cell_index": -1, "notebook_name": "long", "timeout": 60, "progress_interval": 1,
			"cell_source": "import time\nfor i in range(20):\n    print('line', i, flush=True)\n    time.sleep(1)",
		})
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if created["resultType"] != "task" || created["status"] != "working" || created["taskId"] == nil {
			t.Fatalf("not a task: %v", created)
		}
		if took < time.Second || took > 5*time.Second {
			t.Errorf("the task was answered after %s (threshold 2 s)", took)
		}
		for _, f := range []string{"createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
			if created[f] == nil {
				t.Errorf("CreateTaskResult without %s: %v", f, created)
			}
		}
		id := created["taskId"].(string)
		if !regexp.MustCompile(`^t-[0-9a-f]+\.[A-Za-z0-9_-]{24}$`).MatchString(id) {
			t.Errorf("task id %q", id)
		}
		// Working, with progress in its status message.
		deadline := time.Now().Add(15 * time.Second)
		for {
			got, err := c.get(id)
			if err != nil {
				t.Fatal(err)
			}
			if got["resultType"] != "complete" || got["status"] != "working" {
				t.Fatalf("while it runs: %v", got)
			}
			msg, _ := got["statusMessage"].(string)
			if strings.Contains(msg, "Execution in progress") && strings.Contains(msg, "so far") && strings.Contains(msg, "Latest output:\nline") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no progress in the status message: %v", got)
			}
			time.Sleep(500 * time.Millisecond)
		}
		done, polls := c.pollUntil(id, 40*time.Second, "completed", "failed", "cancelled")
		if done["status"] != "completed" {
			t.Fatalf("ended %v", done)
		}
		t.Logf("completed after %s and %d more polls", time.Since(start).Round(time.Millisecond), polls)
		res, _ := done["result"].(map[string]any)
		text := resultText(res)
		if res == nil || res["isError"] == true || !strings.Contains(text, "line 0") || !strings.Contains(text, "line 19") {
			t.Fatalf("result %v", done)
		}
		meta, _ := res["_meta"].(map[string]any)
		if meta == nil || meta["io.jupyter-mcp/cell_id"] == nil || res["structuredContent"] == nil {
			t.Errorf("result without its cell id or structuredContent: %v", res)
		}
		if done["resultType"] != "complete" || done["inputRequests"] != nil || done["error"] != nil {
			t.Errorf("completed task: %v", done)
		}
	})
}

// The completed task's result is byte for byte what the same call
// returns to a client without the extension: the same text, images,
// structuredContent and _meta (only the execution count moves on).
func TestATasksResultIsThePlainResult(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, transport string) {
		h := trustingHarness(t)
		tasks := h.taskClient(transport, "agent", true)
		plain := h.taskClient(transport, "plain", false)
		// A PNG (a 1x1 pixel) and text, after the threshold.
		code := "import time, base64\nfrom IPython.display import Image, display\ntime.sleep(2.5)\nprint('done')\n" +
			"display(Image(data=base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==')))"
		useNotebook(t, h, tasks, "same", code)
		args := map[string]any{"cell_id": "cell-0", "notebook_name": "same", "timeout": 60}
		created, err := tasks.call("execute_cell", args)
		if err != nil || created["resultType"] != "task" {
			t.Fatalf("not a task: %v %v", err, created)
		}
		done, _ := tasks.pollUntil(created["taskId"].(string), 30*time.Second, "completed", "failed", "cancelled")
		viaTask, _ := json.Marshal(done["result"])
		direct, rerr := plain.requestRaw("tools/call", map[string]any{"name": "execute_cell", "arguments": args})
		if rerr != nil {
			t.Fatal(rerr)
		}
		if strings.Contains(string(direct), `"taskId"`) {
			t.Fatalf("a client without the extension got a task: %s", direct)
		}
		// The SDK stamps every answer's own _meta with serverInfo (the
		// tasks/get answer has it too): it is the envelope's, not the
		// call's result.
		norm := func(b []byte) string {
			var v map[string]any
			_ = json.Unmarshal(b, &v)
			if m, ok := v["_meta"].(map[string]any); ok {
				delete(m, "io.modelcontextprotocol/serverInfo")
			}
			out, _ := json.Marshal(v)
			return regexp.MustCompile(`(?i)(execution_count\\?"?:?\s*|\[)\d+`).ReplaceAllString(string(out), "${1}N")
		}
		a, b := norm(viaTask), norm(direct)
		if a != b {
			t.Errorf("the task's result differs from the plain one:\ntask  %s\nplain %s", a, b)
		}
		if !strings.Contains(a, `"type":"image"`) || !strings.Contains(a, "done") {
			t.Errorf("the result lacks the image or the text: %s", a)
		}
	})
}

// tasks/cancel interrupts the kernel: a time.sleep(60) stops within 2 s,
// the task says cancelled, the kernel runs the next call at once, and the
// cell shows the interrupt.
func TestTaskCancelInterruptsTheKernel(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, transport string) {
		h := trustingHarness(t)
		c := h.taskClient(transport, "agent", true)
		useNotebook(t, h, c, "cancel", "x = 1")
		sub := h.e.Bus().SubscribeTo(256, event.EvExecFinished)
		defer sub.Close()
		created, err := c.call("insert_execute_code_cell", map[string]any{"cell_index": -1, "notebook_name": "cancel", "timeout": 90,
			"cell_source": "import time\ntime.sleep(60)"})
		if err != nil || created["resultType"] != "task" {
			t.Fatalf("not a task: %v %v", err, created)
		}
		id := created["taskId"].(string)
		start := time.Now()
		ack, err := c.request("tasks/cancel", map[string]any{"taskId": id})
		delete(ack, "_meta")
		if err != nil || ack["resultType"] != "complete" || len(ack) != 1 {
			t.Fatalf("tasks/cancel: %v %v", err, ack)
		}
		done, _ := c.pollUntil(id, 10*time.Second, "completed", "failed", "cancelled")
		took := time.Since(start)
		if done["status"] != "cancelled" || took > 2*time.Second {
			t.Fatalf("after %s: %v", took, done)
		}
		t.Logf("cancelled %s after tasks/cancel: %v", took.Round(time.Millisecond), done["statusMessage"])
		select {
		case ev := <-sub.C():
			if ev.Exec.Status != "interrupted" {
				t.Errorf("the execution ended %q", ev.Exec.Status)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the execution did not end")
		}
		next, err := c.call("execute_code", map[string]any{"code": "print('next')", "timeout": 30})
		if err != nil || !strings.Contains(resultText(next), "next") {
			t.Errorf("after the cancel: %v %v", err, next)
		}
		cell, err := c.call("read_cell", map[string]any{"cell_index": 1, "notebook_name": "cancel"})
		if err != nil || !strings.Contains(resultText(cell), "KeyboardInterrupt") {
			t.Errorf("the cancelled cell reads: %v %v", err, resultText(cell))
		}
		// Cancelling an ended task is acknowledged and changes nothing.
		if again, err := c.request("tasks/cancel", map[string]any{"taskId": id}); err != nil || again["resultType"] != "complete" {
			t.Errorf("second cancel: %v %v", err, again)
		}
	})
}

// A client that drops its connection finds its task again by id from a
// new one (over stdio a new connection to the same server, over HTTP a new
// request), and gets the result; another client's tasks/get is refused as
// if the task did not exist.
func TestATaskOutlivesItsConnection(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, transport string) {
		h := trustingHarness(t)
		first := h.taskClient(transport, "agent", true)
		useNotebook(t, h, first, "drop", "x = 1")
		created, err := first.call("execute_code", map[string]any{"code": "import time\ntime.sleep(4)\nprint('survived')", "timeout": 60})
		if err != nil || created["resultType"] != "task" {
			t.Fatalf("not a task: %v %v", err, created)
		}
		id := created["taskId"].(string)
		first.close()
		again := h.taskClient(transport, "agent", true)
		done, _ := again.pollUntil(id, 30*time.Second, "completed", "failed", "cancelled")
		if done["status"] != "completed" || !strings.Contains(resultText(done["result"].(map[string]any)), "survived") {
			t.Fatalf("after reconnecting: %v", done)
		}
		other := h.taskClient(transport, "someone-else", true)
		if got, err := other.get(id); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "no task") {
			t.Errorf("another client's tasks/get: %v %v", err, got)
		}
		if _, err := again.get("t-nope.AAAA"); err == nil || err.Code != -32602 {
			t.Errorf("an unknown id: %v", err)
		}
	})
}

// A client without the extension gets today's plain result however long
// the call runs, and its tasks/* requests are refused -32021 naming the
// capability.
func TestWithoutTheExtensionThePlainResult(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, transport string) {
		h := trustingHarness(t)
		c := h.taskClient(transport, "plain", false)
		useNotebook(t, h, c, "plain", "x = 1")
		res, err := c.call("execute_code", map[string]any{"code": "import time\ntime.sleep(3)\nprint('plain')", "timeout": 60})
		if err != nil || res["resultType"] != "complete" || res["taskId"] != nil || !strings.Contains(resultText(res), "plain") {
			t.Fatalf("without the extension: %v %v", err, res)
		}
		_, rerr := c.get("t-x.y")
		if rerr == nil || rerr.Code != -32021 || !strings.Contains(string(rerr.Data), extTasks) {
			t.Errorf("tasks/get without the extension: %v", rerr)
		}
		// A short call of a tasks client is its plain result too.
		tc := h.taskClient(transport, "agent", true)
		short, err := tc.call("execute_code", map[string]any{"code": "print(6*7)", "timeout": 30})
		if err != nil || short["resultType"] != "complete" || !strings.Contains(resultText(short), "42") {
			t.Errorf("a short call of a tasks client: %v %v", err, short)
		}
	})
}

// The server advertises the extension in server/discover.
func TestDiscoverAdvertisesTasks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.taskClient("http", "agent", true)
	got, err := c.request("server/discover", nil)
	if err != nil {
		t.Fatal(err)
	}
	caps, _ := got["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if !reflect.DeepEqual(ext[extTasks], map[string]any{}) {
		t.Errorf("discover: %v", got)
	}
}

// A call held for approval becomes a task at once, input_required, the
// approval form in inputRequests; tasks/update answers it: an unknown key
// and an answer that does not fit the form are ignored (it still asks),
// the right answer runs the call once, and the same answer again changes
// nothing.
func TestAHeldCallIsATaskAnsweredByUpdate(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, transport string) {
		h := trustingHarness(t)
		c := h.taskClient(transport, "agent", true)
		rel := useNotebook(t, h, c, "held", "a = 1", "b = 2")
		h.e.Calls().SetApproval(calls.ApproveDestructive, time.Minute)
		start := time.Now()
		created, err := c.call("delete_cell", map[string]any{"cell_indices": []int{0}, "notebook_name": "held"})
		if err != nil || created["resultType"] != "task" || created["status"] != "input_required" {
			t.Fatalf("a held call: %v %v", err, created)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("the held call became a task after %s", took)
		}
		id := created["taskId"].(string)
		got, rerr := c.get(id)
		if rerr != nil {
			t.Fatal(rerr)
		}
		reqs, _ := got["inputRequests"].(map[string]any)
		q, _ := reqs["approval-1"].(map[string]any)
		params, _ := q["params"].(map[string]any)
		if q["method"] != "elicitation/create" || !strings.Contains(params["message"].(string), "An agent wants to run delete_cell") || params["requestedSchema"] == nil {
			t.Fatalf("input_required task: %v", got)
		}
		update := func(answers map[string]any) {
			t.Helper()
			ack, err := c.request("tasks/update", map[string]any{"taskId": id, "inputResponses": answers})
			if err != nil || ack["resultType"] != "complete" {
				t.Fatalf("tasks/update: %v %v", err, ack)
			}
		}
		allow := map[string]any{"action": "accept", "content": map[string]any{"decision": "allow"}}
		update(map[string]any{"approval-9": allow})
		update(map[string]any{"approval-1": map[string]any{"action": "accept", "content": map[string]any{"decision": "maybe"}}})
		if got, _ := c.get(id); got["status"] != "input_required" || !strings.Contains(string(h.file(rel)), `"a = 1"`) {
			t.Fatalf("a wrong key or a malformed answer moved the task: %v", got)
		}
		update(map[string]any{"approval-1": allow})
		done, _ := c.pollUntil(id, 30*time.Second, "completed", "failed", "cancelled")
		res, _ := done["result"].(map[string]any)
		if done["status"] != "completed" || res["isError"] == true || strings.Contains(string(h.file(rel)), `"a = 1"`) {
			t.Fatalf("after the allow: %v; the file %s", done, h.file(rel))
		}
		update(map[string]any{"approval-1": allow})
		if !strings.Contains(string(h.file(rel)), `"b = 2"`) {
			t.Error("the answer given again ran the call again")
		}
	})
}

// The person at the workbench may decide a held task first: the task ends
// with that decision, and the client's late answer counts for nothing.
func TestTheWorkbenchDecidesAHeldTask(t *testing.T) {
	t.Parallel()
	h := trustingHarness(t)
	c := h.taskClient("http", "agent", true)
	rel := useNotebook(t, h, c, "held", "a = 1", "b = 2")
	h.e.Calls().SetApproval(calls.ApproveDestructive, time.Minute)
	sub := h.e.Bus().Subscribe(256)
	defer sub.Close()
	created, err := c.call("delete_cell", map[string]any{"cell_indices": []int{0}, "notebook_name": "held"})
	if err != nil || created["status"] != "input_required" {
		t.Fatalf("a held call: %v %v", err, created)
	}
	held := heldEvent(t, sub, "delete_cell")
	detach := h.e.Calls().AttachWorkbench()
	defer detach()
	if err := h.e.Calls().Decide(held.ID, calls.Verdict{Reason: "not now", By: "the person at the workbench"}); err != nil {
		t.Fatal(err)
	}
	id := created["taskId"].(string)
	done, _ := c.pollUntil(id, 30*time.Second, "completed", "failed", "cancelled")
	if _, err := c.request("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approval-1": map[string]any{"action": "accept", "content": map[string]any{"decision": "allow"}}}}); err != nil {
		t.Fatal(err)
	}
	res, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || res["isError"] != true || !strings.Contains(resultText(res), "not now") || !strings.Contains(string(h.file(rel)), `"a = 1"`) {
		t.Errorf("the workbench's denial: %v", done)
	}
}

// Over HTTP a tasks/get, tasks/update or tasks/cancel must carry its task
// id in Mcp-Name (what a proxy routes by): a mismatch is refused -32020.
func TestTasksMcpNameMustBeTheTaskID(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, name := range []string{"", "t-other.x"} {
		body := `{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"t-a.b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
		req, _ := http.NewRequest(http.MethodPost, h.endpoint(), strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get"} {
			req.Header.Set(k, v)
		}
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"code":-32020`) || !strings.Contains(string(b), `"id":7`) {
			t.Errorf("Mcp-Name %q: %d %s", name, resp.StatusCode, b)
		}
	}
}

// Cancelling a task queued behind another run on the same kernel leaves
// the run ahead alone: it completes, uninterrupted; the queued one is
// cancelled and is interrupted as soon as the kernel starts it, so what it
// would have printed after its first statement never comes.
func TestCancellingAQueuedTaskLeavesTheRunAhead(t *testing.T) {
	t.Parallel()
	h := trustingHarness(t)
	c := h.taskClient("http", "agent", true)
	useNotebook(t, h, c, "queue", "x = 1")
	ahead, err := c.call("execute_code", map[string]any{"code": "import time\ntime.sleep(8)\nprint('ahead done')", "timeout": 60})
	if err != nil || ahead["resultType"] != "task" {
		t.Fatalf("the run ahead: %v %v", err, ahead)
	}
	queued, err := c.call("insert_execute_code_cell", map[string]any{"cell_index": -1, "notebook_name": "queue", "timeout": 60,
		"cell_source": "import time\ntime.sleep(1)\nprint('queued', 'ran')"})
	if err != nil || queued["resultType"] != "task" {
		t.Fatalf("the queued run: %v %v", err, queued)
	}
	if _, err := c.request("tasks/cancel", map[string]any{"taskId": queued["taskId"]}); err != nil {
		t.Fatal(err)
	}
	q, _ := c.pollUntil(queued["taskId"].(string), 5*time.Second, "completed", "failed", "cancelled")
	if q["status"] != "cancelled" {
		t.Fatalf("the queued task: %v", q)
	}
	a, _ := c.pollUntil(ahead["taskId"].(string), 30*time.Second, "completed", "failed", "cancelled")
	text := resultText(a["result"].(map[string]any))
	if a["status"] != "completed" || !strings.Contains(text, "ahead done") || strings.Contains(text, "KeyboardInterrupt") {
		t.Fatalf("the run ahead: %v", a)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		cell, err := c.call("read_cell", map[string]any{"cell_index": 1, "notebook_name": "queue"})
		if err != nil {
			t.Fatal(err)
		}
		got := resultText(cell)
		if strings.Contains(got, "queued ran") {
			t.Fatalf("the cancelled queued run ran on: %s", got)
		}
		if strings.Contains(got, "KeyboardInterrupt") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queued cell: %s", got)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// The workbench sees the task on its call (id, state, polls), and its
// cancel (x x, the engine's CancelCall) is the task's: the kernel is
// interrupted and the agent's next poll says cancelled.
func TestTheWorkbenchSeesAndCancelsATask(t *testing.T) {
	t.Parallel()
	h := trustingHarness(t)
	c := h.taskClient("http", "agent", true)
	useNotebook(t, h, c, "wb", "x = 1")
	sub := h.e.Bus().SubscribeTo(256, event.EvCallTask, event.EvExecFinished)
	defer sub.Close()
	created, err := c.call("execute_code", map[string]any{"code": "import time\ntime.sleep(60)", "timeout": 90})
	if err != nil || created["resultType"] != "task" {
		t.Fatalf("not a task: %v %v", err, created)
	}
	id := created["taskId"].(string)
	for range 3 {
		if _, err := c.get(id); err != nil {
			t.Fatal(err)
		}
	}
	var callID string
	deadline := time.After(10 * time.Second)
	for callID == "" {
		select {
		case ev := <-sub.C():
			if ev.Type == event.EvCallTask && ev.Call.Task.ID == id && ev.Call.Task.Polls == 3 && ev.Call.Task.State == "working" {
				callID = ev.Call.ID
			}
		case <-deadline:
			t.Fatal("no call.task event with 3 polls")
		}
	}
	start := time.Now()
	if err := h.e.Calls().Cancel(callID); err != nil {
		t.Fatal(err)
	}
	done, _ := c.pollUntil(id, 10*time.Second, "completed", "failed", "cancelled")
	if done["status"] != "cancelled" || !strings.Contains(done["statusMessage"].(string), "the person at the workbench") || time.Since(start) > 2*time.Second {
		t.Fatalf("after the workbench's cancel (%s): %v", time.Since(start), done)
	}
	for {
		select {
		case ev := <-sub.C():
			if ev.Type == event.EvExecFinished {
				if ev.Exec.Status != "interrupted" {
					t.Errorf("the execution ended %q", ev.Exec.Status)
				}
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the execution did not end")
		}
	}
}

// The sandbox path: execute_code on the sandbox the client selected
// (use_sandbox) becomes a task as a kernel's run does, polled to its
// result, and is cancelled by tasks/cancel.
func TestExecuteCodeOnASandboxIsATask(t *testing.T) {
	t.Parallel()
	h := trustingHarness(t)
	c := h.taskClient("http", "agent", true)
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"launch_sandbox", map[string]any{"sandbox_name": "py", "variant": "eval"}},
		{"use_sandbox", map[string]any{"sandbox_name": "py"}},
	} {
		if res, err := c.call(step.tool, step.args); err != nil || res["isError"] == true {
			t.Fatalf("%s: %v %v", step.tool, err, res)
		}
	}
	t.Cleanup(func() { _, _ = c.call("terminate_sandbox", map[string]any{"sandbox_name": "py"}) })
	created, err := c.call("execute_code", map[string]any{"code": "import time\ntime.sleep(3)\nprint('on the sandbox')", "timeout": 60})
	if err != nil || created["resultType"] != "task" {
		t.Fatalf("not a task: %v %v", err, created)
	}
	done, _ := c.pollUntil(created["taskId"].(string), 30*time.Second, "completed", "failed", "cancelled")
	if done["status"] != "completed" || !strings.Contains(resultText(done["result"].(map[string]any)), "on the sandbox") {
		t.Fatalf("the sandbox's task: %v", done)
	}
	long, err := c.call("execute_code", map[string]any{"code": "import time\ntime.sleep(60)", "timeout": 90})
	if err != nil || long["resultType"] != "task" {
		t.Fatalf("not a task: %v %v", err, long)
	}
	start := time.Now()
	if _, err := c.request("tasks/cancel", map[string]any{"taskId": long["taskId"]}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.pollUntil(long["taskId"].(string), 10*time.Second, "completed", "failed", "cancelled"); got["status"] != "cancelled" || time.Since(start) > 2*time.Second {
		t.Fatalf("after %s: %v", time.Since(start), got)
	}
	next, err := c.call("execute_code", map[string]any{"code": "print('next')", "timeout": 30})
	if err != nil || !strings.Contains(resultText(next), "next") {
		t.Errorf("the sandbox after the cancel: %v %v", err, next)
	}
}

// tasks/cancel of a task that waits for approval withdraws the call: it
// never runs, and the task says cancelled.
func TestCancellingAHeldTaskRunsNothing(t *testing.T) {
	t.Parallel()
	h := trustingHarness(t)
	c := h.taskClient("stdio", "agent", true)
	rel := useNotebook(t, h, c, "held", "a = 1", "b = 2")
	h.e.Calls().SetApproval(calls.ApproveDestructive, time.Minute)
	created, err := c.call("delete_cell", map[string]any{"cell_indices": []int{0}, "notebook_name": "held"})
	if err != nil || created["status"] != "input_required" {
		t.Fatalf("a held call: %v %v", err, created)
	}
	id := created["taskId"].(string)
	if _, err := c.request("tasks/cancel", map[string]any{"taskId": id}); err != nil {
		t.Fatal(err)
	}
	done, _ := c.pollUntil(id, 10*time.Second, "completed", "failed", "cancelled")
	if done["status"] != "cancelled" || done["inputRequests"] != nil || !strings.Contains(string(h.file(rel)), `"a = 1"`) {
		t.Fatalf("after cancelling the held task: %v", done)
	}
	if _, err := c.request("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"approval-1": map[string]any{"action": "accept", "content": map[string]any{"decision": "allow"}}}}); err != nil {
		t.Fatal(err)
	}
	// The run has ended: nothing is left for an answer to reach.
	if got, _ := c.get(id); got["status"] != "cancelled" || !strings.Contains(string(h.file(rel)), `"a = 1"`) {
		t.Errorf("an answer after the cancel: %v", got)
	}
}

// An execution held where only the workbench may approve it (an HTTP
// client whose own answer would not count) becomes a task after the
// threshold like a running one, and says it waits for the workbench; the
// person's allow lets it run to its result.
func TestATaskHeldAtTheWorkbench(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.taskClient("http", "agent", true)
	useNotebook(t, h, c, "wb", "x = 1")
	h.e.Calls().SetApproval(calls.ApproveExecute, time.Minute)
	detach := h.e.Calls().AttachWorkbench()
	defer detach()
	sub := h.e.Bus().Subscribe(256)
	defer sub.Close()
	created, err := c.call("execute_code", map[string]any{"code": "print('allowed')", "timeout": 30})
	if err != nil || created["resultType"] != "task" || created["status"] != "working" ||
		!strings.Contains(fmt.Sprint(created["statusMessage"]), "waiting for the person at the workbench") {
		t.Fatalf("a call held at the workbench: %v %v", err, created)
	}
	held := heldEvent(t, sub, "execute_code")
	if err := h.e.Calls().Decide(held.ID, calls.Verdict{Allow: true, By: "the person at the workbench"}); err != nil {
		t.Fatal(err)
	}
	done, _ := c.pollUntil(created["taskId"].(string), 30*time.Second, "completed", "failed", "cancelled")
	if done["status"] != "completed" || !strings.Contains(resultText(done["result"].(map[string]any)), "allowed") {
		t.Fatalf("after the allow: %v", done)
	}
}

// Whose answer counts is the same for tasks/update as for the question:
// a held task of the stdio host, answered over HTTP by a client that gives
// the host's name (without --trust-client-approval), answers nothing.
func TestATaskAnswerOverHTTPDoesNotCountForTheHost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	host := h.taskClient("stdio", "agent", true)
	rel := useNotebook(t, h, host, "held", "a = 1", "b = 2")
	h.e.Calls().SetApproval(calls.ApproveDestructive, time.Minute)
	created, err := host.call("delete_cell", map[string]any{"cell_indices": []int{0}, "notebook_name": "held"})
	if err != nil || created["status"] != "input_required" {
		t.Fatalf("a held call of the host: %v %v", err, created)
	}
	id := created["taskId"].(string)
	allow := map[string]any{"approval-1": map[string]any{"action": "accept", "content": map[string]any{"decision": "allow"}}}
	impostor := h.taskClient("http", "agent", true)
	if _, rerr := impostor.request("tasks/update", map[string]any{"taskId": id, "inputResponses": allow}); rerr == nil || !strings.Contains(rerr.Message, "--trust-client-approval") {
		t.Fatalf("the impostor's answer: %v", rerr)
	}
	if got, _ := host.get(id); got["status"] != "input_required" || !strings.Contains(string(h.file(rel)), `"a = 1"`) {
		t.Fatalf("the impostor's answer moved the task: %v", got)
	}
	if ack, rerr := host.request("tasks/update", map[string]any{"taskId": id, "inputResponses": allow}); rerr != nil || ack["resultType"] != "complete" {
		t.Fatalf("the host's own answer: %v %v", rerr, ack)
	}
	if done, _ := host.pollUntil(id, 30*time.Second, "completed", "failed", "cancelled"); done["status"] != "completed" || strings.Contains(string(h.file(rel)), `"a = 1"`) {
		t.Fatalf("after the host's allow: %v", done)
	}
}
