package ui

import (
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// TestSnapshotRebuildsScreen checks that a workbench attaching late (fed the
// snapshot the feed serves) draws the same screen as one that saw every
// event.
func TestSnapshotRebuildsScreen(t *testing.T) {
	t.Parallel()
	evs := scenario(t)
	src := observe.NewState(nil)
	for _, ev := range evs {
		src.Apply(ev)
	}
	live := newTestModel(t, newFakeBackend(), 140, 40, evs)
	late := newTestModel(t, newFakeBackend(), 140, 40, src.Snapshot())
	if a, b := live.View(), late.View(); a != b {
		t.Errorf("screens differ:\n--- live:\n%s\n--- from snapshot:\n%s", a, b)
	}
}
