package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// A kernel lost under a notebook shows in the kernels list and as a line
// in the calls timeline, also on a workbench that attaches afterwards.
func TestKernelLostShown(t *testing.T) {
	t.Parallel()
	evs := scenario(t)
	last := evs[len(evs)-1]
	evs = append(evs, event.Event{Seq: last.Seq + 1, Time: last.Time.Add(time.Second), Type: event.EvKernelLost,
		Kernel: &event.KernelEvent{ID: "k-5e6f7a8b9c", State: "dead", Lost: event.KernelShutDown.String()}})
	src := observe.NewState(nil)
	for _, ev := range evs {
		src.Apply(ev)
	}
	var line *observe.Call
	for _, r := range src.Calls {
		if r.Tool == "kernel lost" {
			line = r
		}
	}
	if line == nil || line.Status != event.CallError || !strings.Contains(line.Text, "notebook sales") || !strings.Contains(line.Text, "shut down from outside") {
		t.Fatalf("timeline line %+v", line)
	}
	if k := src.Kernels["k-5e6f7a8b9c"]; k.Lost != "shut down from outside" || k.State != "dead" || k.Name != "python3" {
		t.Errorf("kernel %+v", k)
	}
	live := newTestModel(t, newFakeBackend(), 140, 40, evs)
	view := live.View()
	for _, want := range []string{"kernel lost", "lost: shut down from outside"} {
		if !strings.Contains(view, want) {
			t.Errorf("the screen does not show %q:\n%s", want, view)
		}
	}
	late := newTestModel(t, newFakeBackend(), 140, 40, src.Snapshot())
	if a, b := view, late.View(); a != b {
		t.Errorf("screens differ:\n--- live:\n%s\n--- from snapshot:\n%s", a, b)
	}
}
