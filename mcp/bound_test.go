package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Approval is bound to what was shown (issue 23, bypass 4): a held call
// runs what its card showed, where the card said. When the cell's source,
// the notebook or where the code runs changed while it waited, allowing it
// holds it again with a fresh card saying what changed; nothing runs
// without a decision on what runs. These are attacks: each one succeeded
// before the binding (the swapped code ran after one allow).

// heldOrAnswer waits for the next call.held of tool waiting for approval,
// or for the call's answer, whichever comes first.
func heldOrAnswer(t *testing.T, sub *event.Subscription, tool string, done <-chan *sdk.CallToolResult) (*event.CallEvent, *sdk.CallToolResult) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev := <-sub.C():
			if ev.Type == event.EvCallHeld && ev.Call != nil && ev.Call.Tool == tool && strings.Contains(ev.Call.Progress, "approval") {
				return ev.Call, nil
			}
		case res := <-done:
			if res == nil {
				t.Fatalf("%s failed at the protocol level", tool)
			}
			return nil, res
		case <-timeout:
			t.Fatalf("%s was neither held nor answered", tool)
		}
	}
}

// previewJSON is a preview as the feed carries it, keyed by its JSON names.
func previewJSON(t *testing.T, p *event.CallPreview) map[string]any {
	t.Helper()
	var m map[string]any
	raw, _ := json.Marshal(p)
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// boundHarness is a harness with a workbench attached and --approve
// execute, a notebook in use whose first cell (id cell-0) sets ran.
func boundHarness(t *testing.T, file string) (*harness, *sdk.ClientSession, *event.Subscription, string) {
	t.Helper()
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook(file, "ran = 'shown'\nprint(ran)")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "bound", "notebook_path": path})
	sub := h.e.Bus().Subscribe(4096)
	t.Cleanup(sub.Close)
	t.Cleanup(h.e.Calls().AttachWorkbench())
	h.e.Calls().SetApproval(calls.ApproveExecute, time.Minute)
	return h, cs, sub, path
}

// ranOf is what the session's code runs on (the notebook's kernel, or its
// sandbox) holds in ran ("None": nothing set it), asked with approval off.
func ranOf(t *testing.T, h *harness, cs *sdk.ClientSession) string {
	t.Helper()
	h.e.Calls().SetApproval(calls.ApproveOff, time.Minute)
	defer h.e.Calls().SetApproval(calls.ApproveExecute, time.Minute)
	text, _, _ := ok(t, cs, "execute_code", map[string]any{"code": "print(globals().get('ran'))", "timeout": 30})
	return strings.TrimSpace(text)
}

// cellOutputs counts the outputs of the notebook's first cell on disk.
func cellOutputs(t *testing.T, h *harness, path string) int {
	t.Helper()
	var nb struct {
		Cells []struct {
			Outputs []any `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(h.file(path), &nb); err != nil || len(nb.Cells) == 0 {
		t.Fatalf("reading %s: %v", path, err)
	}
	return len(nb.Cells[0].Outputs)
}

// launchEval launches an eval sandbox with approval off.
func launchEval(t *testing.T, h *harness, cs *sdk.ClientSession, name string) {
	t.Helper()
	h.e.Calls().SetApproval(calls.ApproveOff, time.Minute)
	defer h.e.Calls().SetApproval(calls.ApproveExecute, time.Minute)
	ok(t, cs, "launch_sandbox", map[string]any{"sandbox_name": name, "variant": "eval"})
	t.Cleanup(func() { _ = h.e.TerminateSandbox(context.Background(), name) })
}

// swapWhileHeld holds execute_cell on cell-0, lets swap change the cell's
// source while it waits, allows it once, and checks it is held again
// showing the new source, with nothing run. It returns the call's answer
// channel and the re-held event.
func swapWhileHeld(t *testing.T, h *harness, cs *sdk.ClientSession, sub *event.Subscription, path, swapped string, swap func()) (<-chan *sdk.CallToolResult, *event.CallEvent) {
	t.Helper()
	done := callAsync(cs, "execute_cell", map[string]any{"cell_id": "cell-0", "timeout": 30})
	held := heldEvent(t, sub, "execute_cell")
	if held.Preview == nil || held.Preview.Code != "ran = 'shown'\nprint(ran)" {
		t.Fatalf("the card does not show the cell's source: %+v", held.Preview)
	}
	if p := previewJSON(t, held.Preview); p["notebook"] != "bound" || p["path"] != path {
		t.Errorf("the card does not name the notebook and its path (%s): %v", path, p)
	}
	swap()
	if err := h.e.Calls().Decide(held.ID, calls.Verdict{Allow: true}); err != nil {
		t.Fatal(err)
	}
	again, res := heldOrAnswer(t, sub, "execute_cell", done)
	if res != nil {
		t.Fatalf("allowed on a card showing %q, the call ran the swapped source without a new decision: %s", "ran = 'shown'", textOf(res))
	}
	if again.ID != held.ID {
		t.Fatalf("another call was held: %s, want %s", again.ID, held.ID)
	}
	p := previewJSON(t, again.Preview)
	if again.Preview.Code != swapped {
		t.Errorf("the card of the call held again shows %q, want the new source %q", again.Preview.Code, swapped)
	}
	if changed, _ := p["changed"].(string); !strings.Contains(changed, "source of cell cell-0") {
		t.Errorf("the card of the call held again does not say the source changed: %v", p)
	}
	if again.Editable {
		t.Error("a call held again offers its arguments to edit, which the running call could not take")
	}
	if n := cellOutputs(t, h, path); n != 0 {
		t.Fatalf("the cell has %d outputs before the second decision", n)
	}
	return done, again
}

// An overwrite_cell_source (not held under --approve execute) lands while
// an execute_cell is held: allowing what the card showed does not run the
// new source; the call is held again, showing it. Denied then, nothing
// ran; allowed, the new source runs, as the person saw it. A call whose
// cell did not change runs on one decision.
func TestHeldCellSwappedByOverwrite(t *testing.T) {
	t.Parallel()
	h, cs, sub, path := boundHarness(t, "bound_overwrite.ipynb")
	overwrite := func(src string) func() {
		return func() {
			ok(t, cs, "overwrite_cell_source", map[string]any{"cell_id": "cell-0", "cell_source": src})
		}
	}

	done, again := swapWhileHeld(t, h, cs, sub, path, "ran = 'swapped'\nprint(ran)", overwrite("ran = 'swapped'\nprint(ran)"))
	if err := h.e.Calls().Decide(again.ID, calls.Verdict{}); err != nil {
		t.Fatal(err)
	}
	res := answerOf(t, done)
	if !res.IsError || !strings.Contains(textOf(res), "denied") {
		t.Fatalf("denied when held again: %v %s", res.IsError, textOf(res))
	}
	if got := ranOf(t, h, cs); got != "None" {
		t.Fatalf("the kernel ran the cell after the person denied it: ran = %s", got)
	}

	overwrite("ran = 'shown'\nprint(ran)")()
	done, again = swapWhileHeld(t, h, cs, sub, path, "ran = 'seen'\nprint(ran)", overwrite("ran = 'seen'\nprint(ran)"))
	// Changed once more after the second card: a third card.
	overwrite("ran = 'shown'\nprint(ran)")()
	if err := h.e.Calls().Decide(again.ID, calls.Verdict{Allow: true}); err != nil {
		t.Fatal(err)
	}
	third, res := heldOrAnswer(t, sub, "execute_cell", done)
	if res != nil {
		t.Fatalf("the call ran without a decision on its last source: %s", textOf(res))
	}
	if third.Preview == nil || third.Preview.Code != "ran = 'shown'\nprint(ran)" {
		t.Fatalf("third card: %+v", third.Preview)
	}
	if err := h.e.Calls().Decide(third.ID, calls.Verdict{Allow: true}); err != nil {
		t.Fatal(err)
	}
	res = answerOf(t, done)
	if res.IsError || !strings.Contains(textOf(res), "shown") {
		t.Fatalf("allowed on the card that showed it, the cell did not run: %s", textOf(res))
	}

	// Unchanged: one decision.
	done = callAsync(cs, "execute_cell", map[string]any{"cell_id": "cell-0", "timeout": 30})
	held := heldEvent(t, sub, "execute_cell")
	if err := h.e.Calls().Decide(held.ID, calls.Verdict{Allow: true}); err != nil {
		t.Fatal(err)
	}
	if again, res := heldOrAnswer(t, sub, "execute_cell", done); again != nil {
		t.Fatalf("a call whose cell did not change was held again: %+v", again.Preview)
	} else if res.IsError || !strings.Contains(textOf(res), "shown") {
		t.Fatalf("unchanged call: %s", textOf(res))
	}
}

// The same attack through the file: the notebook is rewritten on disk (an
// editor, git, code in the kernel writing the .ipynb) while the call is
// held.
func TestHeldCellSwappedOnDisk(t *testing.T) {
	t.Parallel()
	h, cs, sub, path := boundHarness(t, "bound_disk.ipynb")
	done, again := swapWhileHeld(t, h, cs, sub, path, "ran = 'from disk'\nprint(ran)", func() {
		h.writeOutside(path, func(nb map[string]any) {
			nb["cells"].([]any)[0].(map[string]any)["source"] = "ran = 'from disk'\nprint(ran)"
		})
	})
	if err := h.e.Calls().Decide(again.ID, calls.Verdict{}); err != nil {
		t.Fatal(err)
	}
	if res := answerOf(t, done); !res.IsError {
		t.Fatalf("denied when held again, the call answered: %s", textOf(res))
	}
	if got := ranOf(t, h, cs); got != "None" {
		t.Fatalf("the kernel ran the cell rewritten on disk: ran = %s", got)
	}
}

// A held execute_code whose card says "run code on kernel X" must not run
// in a sandbox that a use_sandbox chose while it waited: it is held again,
// the new card saying where it would run now. Denied, nothing ran in the
// sandbox.
func TestHeldCodeSwappedToSandbox(t *testing.T) {
	t.Parallel()
	h, cs, sub, _ := boundHarness(t, "bound_sandbox.ipynb")
	launchEval(t, h, cs, "local")

	const code = "ran = 'here'\nimport sys\nprint('in a kernel:', 'ipykernel' in sys.modules)"
	done := callAsync(cs, "execute_code", map[string]any{"code": code, "timeout": 30})
	held := heldEvent(t, sub, "execute_code")
	if held.Preview == nil || !strings.Contains(held.Preview.What, "run code on kernel") {
		t.Fatalf("the card does not say it runs on the kernel: %+v", held.Preview)
	}

	// While it waits, the session's code goes to the sandbox. Held under
	// --approve execute too (allowed here: the person agrees to later
	// code running there, not to this call that was shown for the kernel).
	use := callAsync(cs, "use_sandbox", map[string]any{"sandbox_name": "local"})
	if uh, res := heldOrAnswer(t, sub, "use_sandbox", use); uh != nil {
		if err := h.e.Calls().Decide(uh.ID, calls.Verdict{Allow: true}); err != nil {
			t.Fatal(err)
		}
		if res := answerOf(t, use); res.IsError {
			t.Fatalf("use_sandbox: %s", textOf(res))
		}
	} else if res.IsError {
		t.Fatalf("use_sandbox: %s", textOf(res))
	}

	if err := h.e.Calls().Decide(held.ID, calls.Verdict{Allow: true}); err != nil {
		t.Fatal(err)
	}
	again, res := heldOrAnswer(t, sub, "execute_code", done)
	if res != nil {
		t.Fatalf("allowed on a card saying %q, the code ran elsewhere without a new decision: %s", held.Preview.What, textOf(res))
	}
	if again.Preview == nil || !strings.Contains(again.Preview.What, "sandbox local") {
		t.Fatalf("the card of the call held again does not say it runs on the sandbox: %+v", again.Preview)
	}
	if changed, _ := previewJSON(t, again.Preview)["changed"].(string); !strings.Contains(changed, "where the code runs") {
		t.Errorf("the card does not say where the code runs changed: %q", changed)
	}
	if err := h.e.Calls().Decide(again.ID, calls.Verdict{}); err != nil {
		t.Fatal(err)
	}
	if res := answerOf(t, done); !res.IsError {
		t.Fatalf("denied when held again, the call answered: %s", textOf(res))
	}
	// Nothing ran in the sandbox (the session's code goes there now).
	if got := ranOf(t, h, cs); got != "None" {
		t.Fatalf("the sandbox ran the code denied for it: ran = %s", got)
	}
}

// The calls that decide where code runs are held under --approve execute:
// denied, nothing changed.
func TestWhereCodeRunsIsHeld(t *testing.T) {
	t.Parallel()
	h, cs, sub, _ := boundHarness(t, "bound_where.ipynb")
	launchEval(t, h, cs, "first")

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"use_sandbox", map[string]any{"sandbox_name": "first"}},
		{"launch_sandbox", map[string]any{"sandbox_name": "second", "variant": "eval"}},
		{"connect_to_jupyter", map[string]any{"jupyter_url": "http://127.0.0.1:9", "jupyter_token": "x"}},
	} {
		done := callAsync(cs, tc.tool, tc.args)
		held, res := heldOrAnswer(t, sub, tc.tool, done)
		if res != nil {
			t.Errorf("%s was not held under --approve execute: %s", tc.tool, textOf(res))
			continue
		}
		if held.Preview == nil || held.Preview.What == "" {
			t.Errorf("%s held without saying what it would do: %+v", tc.tool, held.Preview)
		}
		if err := h.e.Calls().Decide(held.ID, calls.Verdict{}); err != nil {
			t.Fatal(err)
		}
		if res := answerOf(t, done); !res.IsError || !strings.Contains(textOf(res), "denied") {
			t.Errorf("%s denied: %s", tc.tool, textOf(res))
		}
	}
	h.e.Calls().SetApproval(calls.ApproveOff, time.Minute)
	if text, _, _ := ok(t, cs, "list_sandboxes", map[string]any{}); strings.Contains(text, "second") {
		t.Errorf("the denied launch_sandbox launched: %s", text)
	}
	if text, _, _ := ok(t, cs, "execute_code", map[string]any{"code": "import sys\nprint('ipykernel' in sys.modules)", "timeout": 30}); strings.TrimSpace(text) != "True" {
		t.Errorf("after the denied use_sandbox, code did not run on the kernel: %s", text)
	}
	if got := h.e.JupyterURL(); !strings.HasPrefix(got, strings.TrimRight(h.srv.URL, "/")) {
		t.Errorf("after the denied connect_to_jupyter the server is %s", got)
	}
}

// The binding holds for every held change, not only runs: a delete_cell by
// index held under --approve destructive, a cell inserted above it while
// it waits (allowed on its own card), does not delete the new cell, which
// its card never showed. Held again, the card shows the cell it would
// delete now.
func TestHeldDeleteShiftedByInsert(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("bound_delete.ipynb", "scratch = 1", "data = 2")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "bound", "notebook_path": path})
	sub := h.e.Bus().Subscribe(4096)
	defer sub.Close()
	defer h.e.Calls().AttachWorkbench()()
	h.e.Calls().SetApproval(calls.ApproveDestructive, time.Minute)

	done := callAsync(cs, "delete_cell", map[string]any{"cell_indices": []int{0}})
	held := heldEvent(t, sub, "delete_cell")
	if held.Preview == nil || len(held.Preview.Cells) != 1 || held.Preview.Cells[0].Source != "scratch = 1" {
		t.Fatalf("the card does not show the cell to delete: %+v", held.Preview)
	}
	ins := callAsync(cs, "insert_cell", map[string]any{"cell_index": 0, "cell_type": "code", "cell_source": "precious = 3"})
	ih := heldEvent(t, sub, "insert_cell")
	if err := h.e.Calls().Decide(ih.ID, calls.Verdict{Allow: true}); err != nil {
		t.Fatal(err)
	}
	if res := answerOf(t, ins); res.IsError {
		t.Fatalf("insert_cell: %s", textOf(res))
	}
	if err := h.e.Calls().Decide(held.ID, calls.Verdict{Allow: true}); err != nil {
		t.Fatal(err)
	}
	again, res := heldOrAnswer(t, sub, "delete_cell", done)
	if res != nil {
		t.Fatalf("allowed on a card showing %q, the delete went ahead without a new decision: %s", "scratch = 1", textOf(res))
	}
	if again.Preview == nil || len(again.Preview.Cells) != 1 || again.Preview.Cells[0].Source != "precious = 3" {
		t.Fatalf("the card of the call held again does not show the cell it would delete now: %+v", again.Preview)
	}
	if err := h.e.Calls().Decide(again.ID, calls.Verdict{}); err != nil {
		t.Fatal(err)
	}
	answerOf(t, done)
	if file := string(h.file(path)); !strings.Contains(file, "precious = 3") || !strings.Contains(file, "scratch = 1") {
		t.Fatalf("a cell was deleted although the person denied it:\n%s", file)
	}
}

// With no workbench the host's user is asked through elicitation; a cell
// swapped between the question and their allow is asked about again, the
// question saying so and showing the new source.
func TestHeldCellSwappedAskedAgainThroughClient(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	other := h.connect()
	path := h.writeNotebook("bound_ask.ipynb", "ran = 'shown'\nprint(ran)")
	var asks int
	el := &elicitingClient{}
	// The stdio host's own answer counts (the gate: mcp/trust.go).
	cs := h.connectHost(el.options(func(ctx context.Context, msg string) (*sdk.ElicitResult, error) {
		asks++
		if asks == 1 {
			// While the person reads the question, another session
			// swaps the cell.
			if res := callTool(t, other, "overwrite_cell_source", map[string]any{"cell_id": "cell-0", "cell_source": "ran = 'swapped'\nprint(ran)"}); res.IsError {
				t.Errorf("overwrite_cell_source: %s", textOf(res))
			}
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
		}
		return &sdk.ElicitResult{Action: "decline"}, nil
	}))
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "bound", "notebook_path": path})
	ok(t, other, "use_notebook", map[string]any{"notebook_name": "bound", "notebook_path": path})
	h.e.Calls().SetApproval(calls.ApproveExecute, time.Minute)

	res := callTool(t, cs, "execute_cell", map[string]any{"cell_id": "cell-0", "timeout": 30})
	asked := el.asked()
	if len(asked) != 2 {
		t.Fatalf("the person was asked %d times (want 2: once more after the swap), the call answered: %s", len(asked), textOf(res))
	}
	if !strings.Contains(asked[1], "Asked again: what it would do changed after you were shown it (the source of cell cell-0)") ||
		!strings.Contains(asked[1], "ran = 'swapped'") || !strings.Contains(asked[1], "on notebook 'bound' ("+path+")") {
		t.Errorf("the second question does not say what changed or show it:\n%s", asked[1])
	}
	if !res.IsError || !strings.Contains(textOf(res), "declined") {
		t.Fatalf("declined the second time, the call answered: %s", textOf(res))
	}
	if got := ranOf(t, h, cs); got != "None" {
		t.Fatalf("the kernel ran the cell: ran = %s", got)
	}
}
