package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// elicitingClient answers approval requests with answer and keeps the
// messages it was shown.
type elicitingClient struct {
	mu       sync.Mutex
	messages []string
	schemas  []any
}

func (c *elicitingClient) options(answer func(ctx context.Context, msg string) (*sdk.ElicitResult, error)) *sdk.ClientOptions {
	return &sdk.ClientOptions{ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		c.mu.Lock()
		c.messages = append(c.messages, req.Params.Message)
		c.schemas = append(c.schemas, req.Params.RequestedSchema)
		c.mu.Unlock()
		return answer(ctx, req.Params.Message)
	}}
}

func (c *elicitingClient) asked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.messages...)
}

// approvalNotebook opens a two-cell notebook with approval off, then turns
// destructive approval on with no workbench attached.
func approvalNotebook(t *testing.T, h *harness, cs *sdk.ClientSession, timeout time.Duration) string {
	t.Helper()
	rel := h.writeNotebook("held.ipynb", "a = 1", "b = 2")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "held", "notebook_path": rel})
	h.e.Calls().SetApproval(calls.ApproveDestructive, timeout)
	return rel
}

func TestApprovalThroughElicitation(t *testing.T) {
	t.Parallel()
	decide := func(decision, reason string) func(context.Context, string) (*sdk.ElicitResult, error) {
		return func(context.Context, string) (*sdk.ElicitResult, error) {
			content := map[string]any{"decision": decision}
			if reason != "" {
				content["reason"] = reason
			}
			return &sdk.ElicitResult{Action: "accept", Content: content}, nil
		}
	}
	action := func(a string) func(context.Context, string) (*sdk.ElicitResult, error) {
		return func(context.Context, string) (*sdk.ElicitResult, error) { return &sdk.ElicitResult{Action: a}, nil }
	}
	// The client's form for the call nobody answered is withdrawn
	// (notifications/cancelled) when the timeout strikes.
	withdrawn := make(chan struct{})
	tests := []struct {
		name    string
		answer  func(context.Context, string) (*sdk.ElicitResult, error)
		timeout time.Duration
		wantErr string // "" = the cell is deleted
	}{
		{"allow runs the call", decide("allow", ""), 0, ""},
		{"deny with a reason", decide("deny", "keep cell a, it loads the data"), 0,
			"the person using test-client 1 declined this call: keep cell a, it loads the data (the call to delete_cell was not run)"},
		{"decline", action("decline"), 0, "the person using test-client 1 declined this call to delete_cell; it was not run"},
		{"cancel", action("cancel"), 0, "the person using test-client 1 dismissed the request to approve this call to delete_cell without allowing it"},
		{"no answer in time", func(ctx context.Context, _ string) (*sdk.ElicitResult, error) {
			<-ctx.Done()
			close(withdrawn)
			return nil, ctx.Err()
		}, 300 * time.Millisecond, "the person using test-client 1 did not answer the request to approve this call to delete_cell within 300ms, so it was not run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			el := &elicitingClient{}
			cs := h.connectHost(el.options(tt.answer))
			rel := approvalNotebook(t, h, cs, tt.timeout)

			res := callTool(t, cs, "delete_cell", map[string]any{"cell_indices": []int{0}})
			text := textOf(res)
			asked := el.asked()
			if len(asked) != 1 {
				t.Fatalf("the client was asked %d times: %q", len(asked), asked)
			}
			for _, want := range []string{"An agent wants to run delete_cell (Delete specific cells from the currently activated notebook",
				"on notebook 'held' (" + rel + ")", "\nIt would delete 1 of 2 cells.\n  cell 0 (cell-0) would be deleted: a = 1\n",
				"Arguments: cell_indices=[0]", "--approve destructive", "within 2m0s"} {
				if tt.timeout == 0 && !strings.Contains(asked[0], want) {
					t.Errorf("the question %q lacks %q", asked[0], want)
				}
			}
			file := string(h.file(rel))
			if tt.wantErr == "" {
				if res.IsError {
					t.Fatalf("allowed delete_cell failed: %s", text)
				}
				if strings.Contains(file, `"a = 1"`) || !strings.Contains(file, `"b = 2"`) {
					t.Errorf("after an allowed delete the file is %s", file)
				}
				return
			}
			if !res.IsError || !strings.Contains(text, tt.wantErr) {
				t.Fatalf("result (isError %v) %q, want %q", res.IsError, text, tt.wantErr)
			}
			if !strings.Contains(file, `"a = 1"`) {
				t.Errorf("a denied delete changed the file: %s", file)
			}
			if tt.timeout > 0 {
				select {
				case <-withdrawn:
				case <-time.After(30 * time.Second):
					t.Fatal("the client's form was not withdrawn after the timeout")
				}
			}
			// A read is not held, and the client is not asked about it.
			ok(t, cs, "read_cell", map[string]any{"cell_index": 0})
			if n := len(el.asked()); n != 1 {
				t.Errorf("asked %d times after a read", n)
			}
		})
	}
}

// A client without elicitation is refused at once, told why, and the file
// is untouched.
func TestApprovalWithoutElicitationRefusedAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := h.connect()
	rel := approvalNotebook(t, h, cs, time.Hour)
	res := callTool(t, cs, "delete_cell", map[string]any{"cell_indices": []int{0}})
	text := textOf(res)
	if !res.IsError || !strings.Contains(text, "no workbench is attached") || !strings.Contains(text, "does not support elicitation") {
		t.Fatalf("result (isError %v) %q", res.IsError, text)
	}
	if !strings.Contains(string(h.file(rel)), `"a = 1"`) {
		t.Error("a refused delete changed the file")
	}
}

func TestApprovalQuestionParts(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x = 1\n", 40) + "os.remove('data.csv')\n"
	got := previewText(&event.CallPreview{What: "run code on kernel 12345678", Code: long, Facts: []string{"variables of kernel 12345678"},
		Cells: []event.PreviewCell{{Index: 2, ID: "ab", Role: event.PreviewCellContext, Source: "ctx"}, {Index: 3, ID: "cd", Role: event.PreviewCellRun, Source: "y = 2\nz = 3"}}})
	want := "\nIt would run code on kernel 12345678.\n  cell 3 (cd) would run: y = 2\nThe code (41 lines, 262 bytes):\n  x = 1\n"
	// The whole code, to its last line: not cut at 12 lines.
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "\n  os.remove('data.csv')\nWould be lost: variables of kernel 12345678") || strings.Contains(got, "ctx") {
		t.Errorf("previewText = %q", got)
	}
	// What hides is shown and counted; blank runs are folded; past the
	// bound, the question says where it was cut and where the rest is.
	got = previewText(&event.CallPreview{What: "run code", Code: "print('safe')  # note\rprint('PAYLOAD')\n" + strings.Repeat("\n", 3000) + "x = \"\x1b]\"\n"})
	for _, w := range []string{"print('safe')  # note⟨CR⟩\n  print('PAYLOAD')", "⋯ 3000 blank lines (lines 3–3002) ⋯", `x = "⟨ESC⟩]"`,
		"Warning: it holds characters that show nothing or move text, each written above as ⟨…⟩: 1 × ESC, 1 lone carriage return"} {
		if !strings.Contains(got, w) {
			t.Errorf("previewText lacks %q: %q", w, got)
		}
	}
	huge := strings.Repeat("y = 2\n", 10000)
	got = previewText(&event.CallPreview{What: "run code", Code: huge, CodeCut: 5})
	if len(got) > questionCodeBytes+1000 || !strings.Contains(got, "✂ cut here: lines 4097–10000 are not in this message. The whole is the code argument of this call") {
		t.Errorf("a huge code: %d bytes, ends %q", len(got), got[max(len(got)-300, 0):])
	}
	if s := argsSummary(map[string]any{"code": "print(1)", "timeout": 30.0}, "print(1)"); s != "code=(above, whole), timeout=30" {
		t.Errorf("argsSummary = %q", s)
	}
	// A call that will be refused says so, its words shown as written.
	if got := previewText(&event.CallPreview{Problem: "cell 9 is out of range\x1b[2J", Refused: true}); got != "\nIt will be refused: cell 9 is out of range⟨ESC⟩[2J." {
		t.Errorf("refused previewText = %q", got)
	}
	if previewText(nil) != "" || previewText(&event.CallPreview{Problem: "no notebook"}) != "" {
		t.Error("a missing preview has text")
	}
	if got := firstSentence("Move a cell from source_index to target_index within the notebook.\n\nMore."); got != "Move a cell from source_index to target_index within the notebook" {
		t.Errorf("firstSentence = %q", got)
	}
	if got := firstSentence("Read it. Then act."); got != "Read it" {
		t.Errorf("firstSentence = %q", got)
	}
	long = strings.Repeat("é", 100)
	got = argsSummary(map[string]any{"b": "x\ny", "a": 1, "c": long, "jupyter_token": "s3cret"})
	if !strings.HasPrefix(got, `a=1, b="x ⏎ y", c="`) || !strings.HasSuffix(got, `…", jupyter_token="s3cret"`) {
		t.Errorf("argsSummary = %q", got)
	}
	if got := clientAnswer(&sdk.ElicitResult{Action: "accept"}); got.Allow {
		t.Error("an accepted form without a decision allowed the call")
	}
	if got := clientAnswer(&sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}); !got.Allow {
		t.Error("allow was not read as allow")
	}
}
