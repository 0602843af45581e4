package mcp

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Long runs as MCP tasks: a handle the agent polls, cancels and finds
// again, instead of a request that waits. Two wire forms, one store:
//
//   - 2026-07-28, the extension io.modelcontextprotocol/tasks (SEP-2663,
//     modelcontextprotocol/ext-tasks specification/draft/tasks.md): the
//     server decides. A call of a tool that runs code, from a request that
//     declared the extension, that is still running after Options.TaskAfter
//     is answered resultType "task"; sooner, its plain result. A call held
//     for approval becomes a task at once, input_required, answered by
//     tasks/update or by the person at the workbench (tasks_modern.go).
//   - 2025-11-25, the experimental tasks of SEP-1686: the client asks, by
//     params.task on a tool listed with execution.taskSupport
//     (tasks_legacy.go).
//
// A task is a run (runs.go) with an id, an owner and a time to live. It
// lives in this process, as held calls and the workbench do: a server
// restart forgets it (its outputs are in the notebook), and a replica that
// did not create it does not know it (its id names the instance that did,
// for --peers and for a proxy that routes by Mcp-Name).

// extTasks names the tasks extension of 2026-07-28.
const extTasks = "io.modelcontextprotocol/tasks"

// taskEra is which form a task was created in and is answered in.
type taskEra int

const (
	taskModern taskEra = iota // io.modelcontextprotocol/tasks (2026-07-28)
	taskLegacy                // SEP-1686 (2025-11-25)
)

// Defaults of the store's bounds and of the tasks it hands out.
const (
	DefaultTaskAfter    = 2 * time.Second
	DefaultMaxTasks     = 1000
	DefaultMaxTaskBytes = 64 << 20
	// taskKeep is how long a finished task stays findable.
	taskKeep = time.Hour
	// tombstoneKeep is how long an id that expired is remembered as such,
	// so its poll says "expired", not "unknown".
	tombstoneKeep = 24 * time.Hour
	// taskPoll is the poll interval suggested to clients.
	taskPoll = time.Second
)

// task is a run its client holds a handle to.
type task struct {
	id      string
	owner   string // the client identity (ownerOf) that created it
	session string // the session that created it (2025-11-25): tasks/list lists only its own
	era     taskEra
	r       *run
	created time.Time
	held    func(callID string) bool // nil: never held

	mu    sync.Mutex
	polls int
	bytes int // what its result weighs (once it is done)
}

// taskStore holds the tasks of this process, bounded in count, in the
// bytes of their results and in time.
type taskStore struct {
	mu       sync.Mutex
	byID     map[string]*task
	gone     map[string]goneTask // tombstones of expired and evicted tasks
	max      int
	maxBytes int
	keep     time.Duration
	inst     string
	// onChange is told of a task's new facts (the workbench's call row);
	// held says whether a call waits for the person at the workbench.
	onChange func(t *task)
	held     func(callID string) bool
}

// goneTask is why a task id is no longer found.
type goneTask struct {
	at  time.Time
	why string
}

func newTaskStore(inst string, max, maxBytes int) *taskStore {
	if max <= 0 {
		max = DefaultMaxTasks
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxTaskBytes
	}
	return &taskStore{byID: map[string]*task{}, gone: map[string]goneTask{}, max: max, maxBytes: maxBytes, keep: taskKeep, inst: inst}
}

// newTaskID is "t-<instance>.<144 random bits>": unguessable (ext-tasks,
// Security Considerations), and naming the process that holds it.
func (ts *taskStore) newTaskID() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return "t-" + ts.inst + "." + base64.RawURLEncoding.EncodeToString(b)
}

// taskInstance is the instance a task id names ("" if it is not one of
// ours).
func taskInstance(id string) string {
	rest, ok := strings.CutPrefix(id, "t-")
	if !ok {
		return ""
	}
	inst, _, ok := strings.Cut(rest, ".")
	if !ok {
		return ""
	}
	return inst
}

// add makes r a task of owner's. It reports nil when the store is full of
// tasks still running: the call then stays a plain call (nothing is lost,
// the client just waits).
func (ts *taskStore) add(r *run, owner, session string, era taskEra) *task {
	t := &task{id: ts.newTaskID(), owner: owner, session: session, era: era, r: r, created: time.Now(), held: ts.held}
	_, ended := t.endedAt()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !ts.roomLocked(owner, !ended) {
		return nil
	}
	ts.byID[t.id] = t
	return t
}

// room says whether owner may start one more task now.
func (ts *taskStore) room(owner string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.roomLocked(owner, true)
}

// roomLocked sweeps, then says whether one more task fits: in the store,
// and, for a running one, in owner's share of it (ownerShare of the
// running tasks), so that one client cannot take every slot from the
// others.
func (ts *taskStore) roomLocked(owner string, running bool) bool {
	ts.sweepLocked(time.Now(), 1)
	if len(ts.byID) >= ts.max {
		return false
	}
	if !running {
		return true
	}
	n := 0
	for _, t := range ts.byID {
		if _, ended := t.endedAt(); !ended && t.owner == owner {
			n++
		}
	}
	return n < max(ts.max/ownerShare, 1)
}

// ownerShare: one client may have at most a quarter of the store's tasks
// running at once.
const ownerShare = 4

// sweepLocked drops the tasks past their time to live, then, over a bound
// (leaving room for that many more), the finished ones that ended first;
// and forgets old tombstones.
func (ts *taskStore) sweepLocked(now time.Time, room int) {
	var done []*task
	total := 0
	for id, t := range ts.byID {
		ended, ok := t.endedAt()
		if !ok {
			continue
		}
		if now.Sub(ended) > ts.keep {
			delete(ts.byID, id)
			ts.gone[id] = goneTask{now, fmt.Sprintf("Task has expired (finished tasks are kept %s after they end)", ts.keep)}
			continue
		}
		total += t.size()
		done = append(done, t)
	}
	if len(ts.byID)+room <= ts.max && total <= ts.maxBytes {
		done = nil // within the bounds: nothing to evict, nothing to sort
	}
	sort.Slice(done, func(i, j int) bool {
		a, _ := done[i].endedAt()
		b, _ := done[j].endedAt()
		return a.Before(b)
	})
	for _, t := range done {
		if len(ts.byID)+room <= ts.max && total <= ts.maxBytes {
			break
		}
		delete(ts.byID, t.id)
		total -= t.size()
		ts.gone[t.id] = goneTask{now, fmt.Sprintf("Task has expired (this server keeps at most %d tasks and %d MiB of their results; older finished ones go first)", ts.max, ts.maxBytes>>20)}
	}
	for id, g := range ts.gone {
		if now.Sub(g.at) > tombstoneKeep {
			delete(ts.gone, id)
		}
	}
	// Tombstones are bounded too: a flood of short tasks must not grow
	// them past a multiple of the store.
	for len(ts.gone) > 10*ts.max {
		oldest := ""
		for id, g := range ts.gone {
			if oldest == "" || g.at.Before(ts.gone[oldest].at) {
				oldest = id
			}
		}
		delete(ts.gone, oldest)
	}
}

// errNoTask is the answer to a task id that is not the caller's: unknown,
// another client's (not an oracle of what exists), or gone.
func (ts *taskStore) errNoTask(id string) error {
	ts.mu.Lock()
	g, ok := ts.gone[id]
	ts.mu.Unlock()
	if ok {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: " + g.why + "; call the tool again. Its outputs, if it ran code in a notebook, are in the notebook (read_cell)."}
	}
	if inst := taskInstance(id); inst != "" && inst != ts.inst {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Failed to retrieve task: task %q was created by another server process (%s); tasks live in the process that created it (route tasks/* by Mcp-Name, or start the replicas with --peers)", id, inst)}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Failed to retrieve task: no task %q belongs to this client (tasks are kept in memory: a server restart forgets them); call the tool again. Its outputs, if it ran code in a notebook, are in the notebook (read_cell).", id)}
}

// get is owner's task id, counting the poll.
func (ts *taskStore) get(id, owner string) (*task, error) {
	now := time.Now()
	ts.mu.Lock()
	ts.sweepLocked(now, 0)
	t, ok := ts.byID[id]
	ts.mu.Unlock()
	if !ok || t.owner != owner {
		return nil, ts.errNoTask(id)
	}
	t.mu.Lock()
	t.polls++
	t.mu.Unlock()
	if ts.onChange != nil {
		ts.onChange(t)
	}
	return t, nil
}

// list is owner's tasks, newest first.
func (ts *taskStore) list(owner, session string) []*task {
	ts.mu.Lock()
	ts.sweepLocked(time.Now(), 0)
	var out []*task
	for _, t := range ts.byID {
		// Only the session's own: an identity is a name a client gives
		// itself, and the ids tasks/list hands out are what lets a
		// client read, cancel or answer a task. A client that comes
		// back in a new session finds its tasks by id.
		if t.owner == owner && t.era == taskLegacy && t.session == session {
			out = append(out, t)
		}
	}
	ts.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].created.After(out[j].created) })
	return out
}

// endedAt is when the task's run ended (ok false: it has not).
func (t *task) endedAt() (time.Time, bool) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	return t.r.ended, t.r.state == runDone
}

// size is what the task's result weighs, measured once it is done.
func (t *task) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bytes == 0 {
		res, err := t.r.result()
		n := 64
		if res != nil {
			if b, e := json.Marshal(res); e == nil {
				n += len(b)
			}
		}
		if err != nil {
			n += len(err.Error())
		}
		t.bytes = n
	}
	return t.bytes
}

// pollCount is how many times its client asked after it.
func (t *task) pollCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.polls
}

// status is the task's status in its era's words. It comes from how the
// call ended, not from who stopped it: a cancel from the workbench and
// tasks/cancel read the same.
func (t *task) status() string {
	t.r.mu.Lock()
	st, res, err, cancelled := t.r.state, t.r.res, t.r.err, t.r.cancelledBy
	t.r.mu.Unlock()
	switch st {
	case runRunning:
		return "working"
	case runAsking:
		return "input_required"
	}
	switch {
	case cancelled != "":
		return "cancelled"
	case err != nil:
		return "failed"
	}
	if r, ok := res.(*sdk.CallToolResult); ok && r.IsError && t.era == taskLegacy {
		// SEP-1686: a tool result with isError fails the task. The 2026
		// extension keeps it completed ("failed" is for JSON-RPC errors).
		return "failed"
	}
	return "completed"
}

// statusMessage says what the task is doing: the newest progress of its
// execution, the question it waits on, or who cancelled it.
func (t *task) statusMessage() string {
	if t.held != nil && t.held(t.r.id) {
		// Held where no one asks the client: only the workbench decides.
		return "Held for approval: waiting for the person at the workbench to allow or deny the call."
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	switch {
	case t.r.state == runDone && t.r.cancelledBy != "":
		return "Cancelled by " + t.r.cancelledBy + "."
	case t.r.state == runAsking && t.r.ask != nil:
		return "Waiting for the person at the client (or at the workbench) to approve the call."
	case t.r.state == runDone:
		return ""
	case t.r.progress == "":
		// Before an execution's first progress (every progress_interval
		// seconds), or a call that reports none.
		return fmt.Sprintf("Running for %.0fs; no progress reported yet.", time.Since(t.r.started).Seconds())
	}
	return t.r.progress
}

// times are the task's createdAt, lastUpdatedAt and ttl (from creation:
// the time run so far plus the time kept after its end; it grows while the
// task runs, which the extension allows).
func (t *task) times(keep time.Duration) (created, updated string, ttl time.Duration) {
	t.r.mu.Lock()
	end, changed := t.r.ended, t.r.updated
	t.r.mu.Unlock()
	last := changed
	if !end.IsZero() {
		last = end
	}
	if last.Before(t.created) {
		last = t.created
	}
	ref := end
	if ref.IsZero() {
		ref = time.Now()
	}
	return t.created.UTC().Format(time.RFC3339Nano), last.UTC().Format(time.RFC3339Nano), ref.Sub(t.created) + keep
}

// rawResult is a result whose shape the SDK has no type for (a
// CreateTaskResult, a task, the SEP-1686 additions): embedding ResultBase
// makes it an sdk.Result, and the SDK sends what it marshals to.
type rawResult struct {
	sdk.ResultBase
	fields map[string]any
}

func (r *rawResult) MarshalJSON() ([]byte, error) {
	m := maps.Clone(r.fields)
	if m == nil {
		m = map[string]any{}
	}
	if len(r.Meta) > 0 {
		meta := map[string]any{}
		if old, ok := m["_meta"].(map[string]any); ok {
			maps.Copy(meta, old)
		}
		maps.Copy(meta, r.Meta)
		m["_meta"] = meta
	}
	return json.Marshal(m)
}

// errTaskCancelled is the cause of a run its client cancelled as a task.
var errTaskCancelled = errors.New("the agent cancelled the task")

// cancelTask stops t's call as the person's cancel does: the kernel is
// interrupted, a held call is withdrawn, a run still queued behind another
// is dropped before it starts (the engine's cancel of its context).
func (s *Server) cancelTask(t *task, by string) {
	t.r.markCancelled(by)
	t.r.stop(errTaskCancelled)
}
