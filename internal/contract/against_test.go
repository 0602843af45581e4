package contract

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// ReadCalls pairs starts with results in the order calls started and
// leaves out what a person or the end of the run decided.
func TestReadCallsPairsAndSkips(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	rec := observe.NewRecordWriter(&buf, nil)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	start := func(s int, id, tool string) event.Event {
		return event.Event{Time: at(s), Type: event.EvCallStarted, Call: &event.CallEvent{ID: id, Session: "S1", Tool: tool, Args: raw(t, map[string]any{"n": s}), Status: event.CallRunning}}
	}
	finish := func(s int, c event.CallEvent) event.Event {
		return event.Event{Time: at(s), Type: event.EvCallFinished, Call: &c}
	}
	for _, ev := range []event.Event{
		start(1, "a", "list_files"),
		start(2, "b", "read_cell"), // finishes before a: order is by start
		finish(3, event.CallEvent{ID: "b", Status: event.CallError, IsError: true, Text: "no such cell"}),
		finish(4, event.CallEvent{ID: "a", Status: event.CallOK, Text: "x", Structured: []byte(`{"kind":"files.list"}`)}),
		start(5, "c", "execute_code"),
		finish(6, event.CallEvent{ID: "c", Status: event.CallCancelled}),
		start(7, "d", "delete_cell"),
		finish(8, event.CallEvent{ID: "d", Status: event.CallDenied}),
		{Time: at(9), Type: event.EvKernelStatus, Kernel: &event.KernelEvent{ID: "k", State: "idle"}},
		{Time: at(9), Type: event.EvCallStarted, Call: &event.CallEvent{ID: "f", Tool: "connect_to_jupyter", Args: raw(t, map[string]any{"jupyter_token": observe.Redacted})}},
		finish(9, event.CallEvent{ID: "f", Status: event.CallOK}),
		// A person edited its arguments: the result is of what they made it.
		start(9, "g", "execute_code"),
		finish(9, event.CallEvent{ID: "g", Status: event.CallOK, Edited: true, Args: raw(t, map[string]any{"n": 99})}),
		start(10, "e", "list_kernels"),                              // the run ended here
		finish(11, event.CallEvent{ID: "zz", Status: event.CallOK}), // no start
	} {
		if err := rec.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	calls, skipped, err := ReadCalls(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0].N != 1 || calls[0].Tool != "list_files" || calls[0].Result.Status != StatusOK ||
		string(calls[0].Args) != `{"n":1}` || calls[0].Session != "S1" ||
		calls[1].N != 2 || calls[1].Result.Status != StatusToolError || calls[1].Result.Text != "no such cell" {
		t.Fatalf("calls %+v", calls)
	}
	want := []SkippedCall{{3, "execute_code", "cancelled"}, {4, "delete_cell", "denied"}, {5, "connect_to_jupyter", "arguments redacted"},
		{6, "execute_code", "arguments edited by the person"}, {7, "list_kernels", "no result recorded"}}
	if len(skipped) != len(want) {
		t.Fatalf("skipped %+v, want %+v", skipped, want)
	}
	for i := range want {
		if skipped[i] != want[i] {
			t.Fatalf("skipped %+v, want %+v", skipped, want)
		}
	}
	if s := Summary("r.jsonl", calls, skipped, nil); s != "replay: all 2 calls of r.jsonl answered as recorded; 5 not replayed (1 arguments edited by the person, 1 arguments redacted, 1 cancelled, 1 denied, 1 no result recorded)" {
		t.Errorf("summary %q", s)
	}
	if _, _, err := ReadCalls(filepath.Join(t.TempDir(), "none.jsonl")); err == nil {
		t.Error("no error for a missing file")
	}
}
