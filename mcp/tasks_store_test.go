package mcp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The task store on its own: ids, owners, bounds and expiry.

// doneRun is a run that ended at ended with a result of text.
func doneRun(id string, ended time.Time, text string) *run {
	return &run{id: id, state: runDone, ended: ended, changed: make(chan struct{}),
		res: &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}}
}

func runningRun(id string) *run {
	return &run{id: id, state: runRunning, changed: make(chan struct{})}
}

func TestTaskIDsNameTheirInstanceAndAreUnguessable(t *testing.T) {
	ts := newTaskStore("inst-1_a", 0, 0)
	seen := map[string]bool{}
	for range 1000 {
		id := ts.newTaskID()
		if seen[id] || taskInstance(id) != "inst-1_a" || len(id) != len("t-inst-1_a.")+24 {
			t.Fatalf("id %q (instance %q)", id, taskInstance(id))
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "t-", "x-a.b", "t-nodot"} {
		if taskInstance(bad) != "" {
			t.Errorf("taskInstance(%q) = %q", bad, taskInstance(bad))
		}
	}
}

// Another client's id answers as an unknown one does; an expired id says
// it expired and what to do.
func TestTaskOwnerAndExpiry(t *testing.T) {
	ts := newTaskStore("a", 0, 0)
	old := ts.add(doneRun("c-1", time.Now().Add(-2*time.Hour), "x"), "@agent 1", "", taskModern)
	fresh := ts.add(doneRun("c-2", time.Now(), "y"), "@agent 1", "", taskModern)
	if _, err := ts.get(fresh.id, "@agent 1"); err != nil {
		t.Fatal(err)
	}
	_, foreign := ts.get(fresh.id, "@other 1")
	_, unknown := ts.get("t-a.zzzz", "@other 1")
	if foreign == nil || !strings.Contains(foreign.Error(), "belongs to this client") || strings.Replace(foreign.Error(), fresh.id, "t-a.zzzz", 1) != unknown.Error() {
		t.Errorf("foreign %v, unknown %v", foreign, unknown)
	}
	_, expired := ts.get(old.id, "@agent 1")
	if expired == nil || !strings.Contains(expired.Error(), "Task has expired (finished tasks are kept 1h0m0s after they end); call the tool again") {
		t.Errorf("expired: %v", expired)
	}
	if _, err := ts.get("t-b.zzzz", "@agent 1"); err == nil || !strings.Contains(err.Error(), "another server process (b)") {
		t.Errorf("another instance's: %v", err)
	}
	if got := fresh.pollCount(); got != 1 {
		t.Errorf("polls %d", got)
	}
}

// Over the count the finished task that ended first goes; running tasks
// are never evicted, and with all running a new call is not made a task.
func TestTaskBoundsEvictFinishedFirst(t *testing.T) {
	ts := newTaskStore("a", 3, 0)
	now := time.Now()
	running := ts.add(runningRun("c-r"), "o", "", taskModern)
	first := ts.add(doneRun("c-1", now.Add(-time.Minute), "x"), "o", "", taskModern)
	second := ts.add(doneRun("c-2", now, "y"), "o", "", taskModern)
	third := ts.add(doneRun("c-3", now, "z"), "o", "", taskModern)
	if third == nil {
		t.Fatal("a full store refused a task while it had finished ones")
	}
	if _, err := ts.get(first.id, "o"); err == nil || !strings.Contains(err.Error(), "keeps at most 3 tasks") {
		t.Errorf("the oldest finished: %v", err)
	}
	for _, k := range []*task{running, second, third} {
		if _, err := ts.get(k.id, "o"); err != nil {
			t.Errorf("%s: %v", k.r.id, err)
		}
	}
	all := newTaskStore("a", 2, 0)
	all.add(runningRun("c-a"), "o1", "", taskModern)
	all.add(runningRun("c-b"), "o2", "", taskModern)
	if all.add(runningRun("c-c"), "o3", "", taskModern) != nil {
		t.Error("a store full of running tasks took another")
	}
}

// One client may hold at most a quarter of the store's running tasks: the
// others still get theirs.
func TestTaskOwnerShare(t *testing.T) {
	ts := newTaskStore("a", 8, 0)
	for i := range 2 {
		if ts.add(runningRun(fmt.Sprintf("c-%d", i)), "greedy", "", taskModern) == nil {
			t.Fatalf("running task %d of the client refused", i)
		}
	}
	if ts.room("greedy") || ts.add(runningRun("c-3"), "greedy", "", taskModern) != nil {
		t.Error("a client took more than a quarter of the store")
	}
	if !ts.room("other") || ts.add(runningRun("c-4"), "other", "", taskModern) == nil {
		t.Error("another client was refused while the store had room")
	}
	// Finished tasks do not count against the share.
	done := newTaskStore("a", 8, 0)
	done.add(doneRun("c-6", time.Now(), "x"), "greedy", "", taskModern)
	done.add(doneRun("c-7", time.Now(), "y"), "greedy", "", taskModern)
	done.add(runningRun("c-8"), "greedy", "", taskModern)
	if !done.room("greedy") {
		t.Error("finished tasks counted against the client's share")
	}
}

// Over the bytes bound the finished task that ended first goes.
func TestTaskBytesBound(t *testing.T) {
	ts := newTaskStore("a", 0, 1<<20)
	big := strings.Repeat("x", 700<<10)
	first := ts.add(doneRun("c-1", time.Now().Add(-time.Second), big), "o", "", taskModern)
	second := ts.add(doneRun("c-2", time.Now(), big), "o", "", taskModern)
	ts.add(runningRun("c-3"), "o", "", taskModern)
	if _, err := ts.get(first.id, "o"); err == nil || !strings.Contains(err.Error(), "MiB of their results") {
		t.Errorf("the first big result: %v", err)
	}
	if _, err := ts.get(second.id, "o"); err != nil {
		t.Errorf("the second: %v", err)
	}
}

// A task's status follows its run, in each era's words.
func TestTaskStatusByEra(t *testing.T) {
	failing := doneRun("c", time.Now(), "boom")
	failing.res.(*sdk.CallToolResult).IsError = true
	for _, c := range []struct {
		r    *run
		era  taskEra
		want string
	}{
		{runningRun("c"), taskModern, "working"},
		{&run{state: runAsking, ask: &question{key: "approval-1"}}, taskModern, "input_required"},
		{failing, taskModern, "completed"},
		{failing, taskLegacy, "failed"},
		{&run{state: runDone, err: errClientCancelled}, taskModern, "failed"},
		{&run{state: runDone, cancelledBy: "x"}, taskLegacy, "cancelled"},
	} {
		if got := (&task{r: c.r, era: c.era}).status(); got != c.want {
			t.Errorf("era %d run %+v: %s, want %s", c.era, c.r.state, got, c.want)
		}
	}
}

// params.task is moved into _meta, where the SDK keeps it; anything else
// passes as it came.
func TestMoveLegacyTask(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"1"},"task":{"ttl":60000},"_meta":{"progressToken":1}}}`
	out := string(moveLegacyTask([]byte(in)))
	if strings.Contains(out, `"task":{`) || !strings.Contains(out, `"io.jupyter-mcp/task":{"ttl":60000}`) || !strings.Contains(out, `"progressToken":1`) {
		t.Errorf("moved: %s", out)
	}
	for _, same := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"task"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"task"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","task":{},"_meta":"bad"}}`,
		`not json "task" tools/call`,
	} {
		if got := string(moveLegacyTask([]byte(same))); got != same {
			t.Errorf("changed %s into %s", same, got)
		}
	}
}

// The SEP-1686 additions leave the rest of the SDK's encoding as it was.
func TestLegacyTaskAdditionsKeepTheRestByteForByte(t *testing.T) {
	init := `{"capabilities":{"logging":{},"tools":{"listChanged":true}},"protocolVersion":"2025-11-25"}`
	got := string(addLegacyTaskCapability([]byte(init)))
	want := `{"capabilities":{"logging":{},"tools":{"listChanged":true},"tasks":` + legacyTasksCapability + `},"protocolVersion":"2025-11-25"}`
	if got != want {
		t.Errorf("initialize:\n%s\nwant\n%s", got, want)
	}
	s := &Server{tools: map[string]*toolDef{"execute_code": {runsCode: true}, "read_cell": {}}}
	list := `{"tools":[{"name":"read_cell","inputSchema":{}},{"name":"execute_code","inputSchema":{"type":"object"}}]}`
	got = string(s.addTaskSupport([]byte(list)))
	want = `{"tools":[{"name":"read_cell","inputSchema":{}},{"name":"execute_code","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`
	if got != want {
		t.Errorf("tools/list:\n%s\nwant\n%s", got, want)
	}
	if got := string(appendField([]byte(`{}`), "a", []byte(`1`))); got != `{"a":1}` {
		t.Errorf("empty object: %s", got)
	}
}

// tasks/list (2025-11-25) lists the session's own tasks only: a client's
// name is what it says of itself, and a listed id is what reads, cancels
// and answers a task. Another session of the same name finds a task by id.
func TestTaskListIsTheSessionsOwn(t *testing.T) {
	ts := newTaskStore("a", 0, 0)
	mine := ts.add(runningRun("c-1"), "@vscode 1", "session-a", taskLegacy)
	ts.add(runningRun("c-2"), "@vscode 1", "session-b", taskLegacy)
	ts.add(runningRun("c-3"), "@vscode 1", "", taskModern)
	got := ts.list("@vscode 1", "session-a")
	if len(got) != 1 || got[0] != mine {
		t.Fatalf("session a lists %d tasks, want only its own", len(got))
	}
	if _, err := ts.get(mine.id, "@vscode 1"); err != nil {
		t.Errorf("the same client in another session, by id: %v", err)
	}
}
