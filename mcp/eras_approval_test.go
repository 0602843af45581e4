package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
)

// Approval through the client's user on both eras: by elicitation inside
// the call on 2025-11-25, by input_required and a bound retry on
// 2026-07-28; the answer counts from the stdio host, and over HTTP only
// with --trust-client-approval. Then the retry as an attacker sends it.

// trustingHarness is newHarness whose HTTP clients' users may approve
// their own calls.
func trustingHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.s = New(h.e, Options{Version: "test", Images: true, Logger: testLog(t), TrustClientApproval: true})
	return h
}

func TestApprovalAcceptAndDeclineOnBothEras(t *testing.T) {
	t.Parallel()
	eachEra(t, func(t *testing.T, transport string, e era) {
		for _, decision := range []string{"allow", "deny"} {
			h := trustingHarness(t)
			el := &elicitingClient{}
			cs := h.connectAs(transport, e, "agent", el.options(func(context.Context, string) (*sdk.ElicitResult, error) {
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision, "reason": "not that cell"}}, nil
			}))
			rel := approvalNotebook(t, h, cs, time.Minute)
			res := callTool(t, cs, "delete_cell", map[string]any{"cell_indices": []int{0}})
			asked := el.asked()
			if len(asked) != 1 || !strings.Contains(asked[0], "An agent wants to run delete_cell") || !strings.Contains(asked[0], "cell 0 (cell-0) would be deleted: a = 1") {
				t.Fatalf("%s: the client was asked %q", decision, asked)
			}
			file := string(h.file(rel))
			if decision == "allow" {
				if res.IsError || strings.Contains(file, `"a = 1"`) {
					t.Errorf("allowed: %q; the file %s", textOf(res), file)
				}
				continue
			}
			if !res.IsError || !strings.Contains(textOf(res), "the person using agent 1 declined this call: not that cell") || !strings.Contains(file, `"a = 1"`) {
				t.Errorf("denied: %q; the file %s", textOf(res), file)
			}
		}
	})
}

// Over HTTP without --trust-client-approval a 2026-07-28 client is not
// asked either, and told what would make its answer count; one that did
// not declare elicitation is refused at once.
func TestStatelessApprovalRefusedWhereTheAnswerWouldNotCount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	el := &elicitingClient{}
	cs := h.connectAs("http", eraNew, "agent", el.options(func(context.Context, string) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
	}))
	rel := approvalNotebook(t, h, cs, time.Minute)
	fails(t, cs, "delete_cell", map[string]any{"cell_indices": []int{0}}, "--trust-client-approval")
	if n := len(el.asked()); n != 0 {
		t.Errorf("the untrusted client was asked %d times", n)
	}
	host := h.connectAs("stdio", eraNew, "host-without-elicitation", nil)
	fails(t, host, "delete_cell", map[string]any{"cell_indices": []int{0}}, "does not support elicitation")
	if !strings.Contains(string(h.file(rel)), `"a = 1"`) {
		t.Error("a refused call changed the file")
	}
}

// rawClient is a 2026-07-28 client that handles input_required itself, as
// an attacker (or a careless client) would.
func (h *harness) rawClient(transport, name string) *sdk.ClientSession {
	return h.connectAs(transport, eraNew, name, &sdk.ClientOptions{
		// Declares form elicitation; never called with the round trips off.
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return nil, context.Canceled
		},
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	})
}

// retryWith sends a retry of tool with args, state and the answers.
func retryWith(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, state string, answers sdk.InputResponseMap) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args, RequestState: state, InputResponses: answers})
	if err != nil {
		t.Fatalf("retry of %s: %v", tool, err)
	}
	return res
}

func allowAnswer(key string) sdk.InputResponseMap {
	return sdk.InputResponseMap{key: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}}
}

// An answer counts only for the question it was given for: a forged, an
// altered, an expired state, one for other arguments, another tool or
// another client are refused and run nothing; a missing or malformed
// answer is asked again; the one good answer runs the call once, and
// replaying it is refused.
func TestStatelessAnswersAreBoundToTheirCall(t *testing.T) {
	t.Parallel()
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			h := trustingHarness(t)
			cs := h.rawClient(transport, "agent")
			rel := approvalNotebook(t, h, cs, time.Minute)
			args := map[string]any{"cell_indices": []int{0}}
			first := callTool(t, cs, "delete_cell", args)
			if !first.NeedsInput() || first.RequestState == "" {
				t.Fatalf("a held call answered %+v", first)
			}
			q, isForm := first.InputRequests["approval-1"].(*sdk.ElicitParams)
			if !isForm || !strings.Contains(q.Message, "An agent wants to run delete_cell") || q.RequestedSchema == nil {
				t.Fatalf("the input requests: %+v", first.InputRequests)
			}
			state := first.RequestState
			untouched := func(what string) {
				t.Helper()
				if !strings.Contains(string(h.file(rel)), `"a = 1"`) {
					t.Fatalf("%s ran the call", what)
				}
			}
			refused := func(what string, res *sdk.CallToolResult, want string) {
				t.Helper()
				if !res.IsError || !strings.Contains(textOf(res), "The call was not run: "+want) {
					t.Errorf("%s: %q (isError %v), want %q", what, textOf(res), res.IsError, want)
				}
				untouched(what)
			}

			forger := newStateKeeper(h.s.states.inst)
			p, err := h.s.states.verify(state, "delete_cell", mustJSON(t, args), "@agent 1", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			refused("a forged state", retryWith(t, cs, "delete_cell", args, forger.sign(p), allowAnswer("approval-1")), "the requestState failed verification")
			body, mac, _ := strings.Cut(state, ".")
			raw, _ := base64.RawURLEncoding.DecodeString(body)
			altered := strings.Replace(string(raw), `"k":"approval-1"`, `"k":"approval-2"`, 1)
			refused("an altered state", retryWith(t, cs, "delete_cell", args, base64.RawURLEncoding.EncodeToString([]byte(altered))+"."+mac, allowAnswer("approval-2")), "the requestState failed verification")
			refused("other arguments", retryWith(t, cs, "delete_cell", map[string]any{"cell_indices": []int{1}}, state, allowAnswer("approval-1")), "the answer was given for this tool with other arguments")
			refused("another tool", retryWith(t, cs, "clear_cell_output", map[string]any{"cell_index": 0}, state, allowAnswer("approval-1")), "the answer was given for a call to delete_cell, not clear_cell_output")
			old := p
			old.Exp = time.Now().Add(-time.Second).Unix()
			refused("an expired state", retryWith(t, cs, "delete_cell", args, h.s.states.sign(old), allowAnswer("approval-1")), "the request it answers expired")
			refused("garbage", retryWith(t, cs, "delete_cell", args, "not-a-state", allowAnswer("approval-1")), "the requestState is not one this server issued")
			if transport == "http" {
				intruder := h.rawClient("http", "intruder")
				refused("another client", retryWith(t, intruder, "delete_cell", args, state, allowAnswer("approval-1")), "the answer was given to another client")
			}

			// No answer, then one that does not fit the form: asked again,
			// each time with a new state.
			again := retryWith(t, cs, "delete_cell", args, state, nil)
			if !again.NeedsInput() || again.InputRequests["approval-1"] == nil || again.RequestState == state {
				t.Fatalf("a retry without the answer: %+v", again)
			}
			malformed := sdk.InputResponseMap{"approval-1": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "maybe"}}}
			again2 := retryWith(t, cs, "delete_cell", args, again.RequestState, malformed)
			if !again2.NeedsInput() || again2.InputRequests["approval-1"] == nil {
				t.Fatalf("a malformed answer: %+v", again2)
			}
			untouched("asking again")
			refused("a spent state", retryWith(t, cs, "delete_cell", args, state, allowAnswer("approval-1")), "this answer was used already")

			// The good answer, with the arguments re-encoded in another
			// key order, runs the call once.
			res := retryWith(t, cs, "delete_cell", map[string]any{"cell_indices": []any{0}}, again2.RequestState, allowAnswer("approval-1"))
			if res.IsError || res.NeedsInput() {
				t.Fatalf("the allowed call: %q", textOf(res))
			}
			after := string(h.file(rel))
			if strings.Contains(after, `"a = 1"`) || !strings.Contains(after, `"b = 2"`) {
				t.Fatalf("after the allowed call the file is %s", after)
			}
			refused2 := retryWith(t, cs, "delete_cell", args, again2.RequestState, allowAnswer("approval-1"))
			if !refused2.IsError || !strings.Contains(textOf(refused2), "this answer was used already") || !strings.Contains(string(h.file(rel)), `"b = 2"`) {
				t.Errorf("a replayed answer: %q", textOf(refused2))
			}
			// An inputResponses without a state answers nothing: a fresh
			// call, which asks.
			fresh := retryWith(t, cs, "delete_cell", args, "", allowAnswer("approval-1"))
			if !fresh.NeedsInput() || !strings.Contains(string(h.file(rel)), `"b = 2"`) {
				t.Errorf("answers without a state: %+v", fresh)
			}
		})
	}
}

// The person at the workbench may decide while the client's user reads
// the question: their decision settles the call, and the client's answer
// that comes after counts for nothing.
func TestTheWorkbenchDecidesBeforeTheRetry(t *testing.T) {
	t.Parallel()
	h := trustingHarness(t)
	cs := h.rawClient("http", "agent")
	rel := approvalNotebook(t, h, cs, time.Minute)
	sub := h.e.Bus().Subscribe(256)
	defer sub.Close()
	args := map[string]any{"cell_indices": []int{0}}
	first := callTool(t, cs, "delete_cell", args)
	if !first.NeedsInput() {
		t.Fatalf("not held: %q", textOf(first))
	}
	held := heldEvent(t, sub, "delete_cell")
	detach := h.e.Calls().AttachWorkbench()
	defer detach()
	if err := h.e.Calls().Decide(held.ID, calls.Verdict{Reason: "not now", By: "the person at the workbench"}); err != nil {
		t.Fatal(err)
	}
	res := retryWith(t, cs, "delete_cell", args, first.RequestState, allowAnswer("approval-1"))
	if !res.IsError || !strings.Contains(textOf(res), "not now") || !strings.Contains(string(h.file(rel)), `"a = 1"`) {
		t.Errorf("the client's late allow: %q", textOf(res))
	}
}

// A 2026-07-28 stdio host is asked to pair a workbench in the answer to
// its next tool call (it cannot be sent a request): its user types the
// code, the call goes on, and the code reaches the pairing.
func TestAStatelessHostConfirmsPairing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	el := &elicitingClient{}
	cs := h.connectAs("stdio", eraNew, "host", el.options(func(_ context.Context, msg string) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"code": "K7Q4-HZ2M"}}, nil
	}))
	if why := h.s.HostCanPair(); why != "" {
		t.Fatalf("a 2026-07-28 host with elicitation cannot pair: %q", why)
	}
	typed := make(chan string, 1)
	go func() {
		code, err := h.s.AskHostToPair(context.Background(), []string{"workbench 1 (pid 4242)"})
		if err != nil {
			code = "error: " + err.Error()
		}
		typed <- code
	}()
	deadline := time.Now().Add(20 * time.Second)
	for len(el.asked()) == 0 && time.Now().Before(deadline) {
		ok(t, cs, "list_notebooks", nil)
	}
	select {
	case code := <-typed:
		if code != "K7Q4-HZ2M" {
			t.Fatalf("the pairing got %q", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the pairing never got the host's answer")
	}
	if asked := el.asked(); len(asked) != 1 || !strings.Contains(asked[0], "A workbench asks to act for you") || !strings.Contains(asked[0], "workbench 1 (pid 4242)") {
		t.Errorf("the host was asked %q", asked)
	}

	// One that declares no elicitation cannot be asked, and says so.
	h2 := newHarness(t)
	h2.connectAs("stdio", eraNew, "host", nil)
	if why := h2.s.HostCanPair(); !strings.Contains(why, "elicitation") {
		t.Errorf("a host without elicitation: %q", why)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A client of the old era approves only through elicitation within its
// call: a requestState and inputResponses it sends with a tools/call (a
// 2026-07-28 client's, stolen; one forged with another key; the same one
// replayed) answer nothing. Its own person is asked, their "deny" stands,
// nothing runs, and the state it stole is not spent: the call it was
// issued for is still answered by its own client.
func TestAnOldEraCallCannotBeAnsweredByInputResponses(t *testing.T) {
	t.Parallel()
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			h := trustingHarness(t)
			victim := h.rawClient(transport, "agent")
			rel := approvalNotebook(t, h, victim, time.Minute)
			args := map[string]any{"cell_indices": []int{0}}
			held := callTool(t, victim, "delete_cell", args)
			if !held.NeedsInput() || held.RequestState == "" {
				t.Fatalf("a held call answered %+v", held)
			}
			el := &elicitingClient{}
			old := h.connectAs(transport, eraLegacy, "agent", el.options(func(context.Context, string) (*sdk.ElicitResult, error) {
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny", "reason": "no"}}, nil
			}))
			p, err := h.s.states.verify(held.RequestState, "delete_cell", mustJSON(t, args), "@agent 1", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			forged := newStateKeeper(h.s.states.inst).sign(p)
			for i, state := range []string{held.RequestState, forged, held.RequestState} {
				res := retryWith(t, old, "delete_cell", args, state, allowAnswer("approval-1"))
				if res.NeedsInput() || !res.IsError || !strings.Contains(textOf(res), "declined this call: no") {
					t.Errorf("old-era call %d with a state: %q (isError %v)", i, textOf(res), res.IsError)
				}
				if n := len(el.asked()); n != i+1 {
					t.Errorf("old-era call %d: its person was asked %d times in all, want %d", i, n, i+1)
				}
				if !strings.Contains(string(h.file(rel)), `"a = 1"`) {
					t.Fatalf("old-era call %d ran on an answer it carried", i)
				}
			}
			res := retryWith(t, victim, "delete_cell", args, held.RequestState, allowAnswer("approval-1"))
			if res.IsError || res.NeedsInput() || strings.Contains(string(h.file(rel)), `"a = 1"`) {
				t.Errorf("the held call's own answer after the old-era attempts: %q", textOf(res))
			}
		})
	}
}

// The answer to a call held for a 2026-07-28 stdio host counts only from a
// channel whose answer counts (trust.go): the same state, sent over HTTP
// by a client giving the host's own name, is refused and spends nothing;
// the host's own retry then runs the call.
func TestAStdioHostsAnswerDoesNotCountOverHTTP(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	host := h.rawClient("stdio", "host")
	rel := approvalNotebook(t, h, host, time.Minute)
	args := map[string]any{"cell_indices": []int{0}}
	held := callTool(t, host, "delete_cell", args)
	if !held.NeedsInput() {
		t.Fatalf("the host's call was not held for its answer: %q", textOf(held))
	}
	impostor := h.rawClient("http", "host")
	res := retryWith(t, impostor, "delete_cell", args, held.RequestState, allowAnswer("approval-1"))
	if !res.IsError || !strings.Contains(textOf(res), "does not count here") || !strings.Contains(string(h.file(rel)), `"a = 1"`) {
		t.Fatalf("the host's state over HTTP: %q (isError %v)", textOf(res), res.IsError)
	}
	res = retryWith(t, host, "delete_cell", args, held.RequestState, allowAnswer("approval-1"))
	if res.IsError || res.NeedsInput() || strings.Contains(string(h.file(rel)), `"a = 1"`) {
		t.Errorf("the host's own answer: %q", textOf(res))
	}
}

// A held call whose cell is swapped while its 2026-07-28 client's user
// reads the question is held again (engine/bound.go): the retry that
// allowed the first question is answered with a second input_required
// that says what changed and shows the new source, and only the answer to
// that one runs it, running exactly the new source.
func TestStatelessCallHeldAgainAsksAgainInTheRetry(t *testing.T) {
	t.Parallel()
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			h := trustingHarness(t)
			cs := h.rawClient(transport, "agent")
			other := h.connect()
			path := h.writeNotebook("held_again_"+transport+".ipynb", "ran = 'shown'\nprint(ran)")
			ok(t, cs, "use_notebook", map[string]any{"notebook_name": "bound", "notebook_path": path})
			ok(t, other, "use_notebook", map[string]any{"notebook_name": "bound", "notebook_path": path})
			h.e.Calls().SetApproval(calls.ApproveExecute, time.Minute)

			args := map[string]any{"cell_id": "cell-0", "timeout": 30}
			first := callTool(t, cs, "execute_cell", args)
			q1, isForm := first.InputRequests["approval-1"].(*sdk.ElicitParams)
			if !first.NeedsInput() || !isForm || !strings.Contains(q1.Message, "ran = 'shown'") {
				t.Fatalf("the held call answered %+v", first)
			}
			if res := callTool(t, other, "overwrite_cell_source", map[string]any{"cell_id": "cell-0", "cell_source": "ran = 'swapped'\nprint(ran)"}); res.IsError {
				t.Fatalf("overwrite_cell_source: %s", textOf(res))
			}
			second := retryWith(t, cs, "execute_cell", args, first.RequestState, allowAnswer("approval-1"))
			q2, isForm := second.InputRequests["approval-2"].(*sdk.ElicitParams)
			if !second.NeedsInput() || !isForm {
				t.Fatalf("allowed after the swap, the call answered %q (input %+v): it must ask again", textOf(second), second.InputRequests)
			}
			if !strings.Contains(q2.Message, "Asked again: what it would do changed after you were shown it") || !strings.Contains(q2.Message, "ran = 'swapped'") {
				t.Errorf("the second question does not say what changed, or show it:\n%s", q2.Message)
			}
			// The first answer, sent again, answers nothing.
			if res := retryWith(t, cs, "execute_cell", args, first.RequestState, allowAnswer("approval-1")); !res.IsError || !strings.Contains(textOf(res), "used already") {
				t.Errorf("the first answer replayed: %q", textOf(res))
			}
			res := retryWith(t, cs, "execute_cell", args, second.RequestState, allowAnswer("approval-2"))
			if res.IsError || res.NeedsInput() || !strings.Contains(textOf(res), "swapped") || strings.Contains(textOf(res), "shown") {
				t.Fatalf("allowed the second time, the call answered %q", textOf(res))
			}
		})
	}
}
