package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// An edit made outside shows as a line in the calls timeline naming the
// cells it changed, also on a workbench that attaches afterwards.
func TestOutsideEditShown(t *testing.T) {
	t.Parallel()
	evs := scenario(t)
	last := evs[len(evs)-1]
	at := last.Time.Add(time.Second)
	evs = append(evs, event.Event{Seq: last.Seq + 1, Time: at, Type: event.EvNotebookOutsideEdit,
		Notebook: &event.NotebookEvent{Name: "sales", Path: "sales.ipynb", At: at, ChangedCells: []event.ChangedCell{
			{ID: "e5f6a7b8", Index: 1, How: event.CellEdited}, {ID: "ffee0011", Index: 3, How: event.CellAdded},
		}}})
	src := observe.NewState(nil)
	for _, ev := range evs {
		src.Apply(ev)
	}
	var line *observe.Call
	for _, r := range src.Calls {
		if r.Tool == "outside edit" {
			line = r
		}
	}
	if line == nil || !strings.Contains(line.Text, "cell 1 (e5f6a7b8) edited, cell 3 (ffee0011) added") {
		t.Fatalf("timeline line %+v", line)
	}
	if args := string(line.Args); !strings.Contains(args, `"edited":"e5f6a7b8"`) || !strings.Contains(args, `"added":"ffee0011"`) {
		t.Errorf("line arguments %s", args)
	}
	live := newTestModel(t, newFakeBackend(), 140, 40, evs)
	view := live.View()
	if !strings.Contains(view, "outside edit") {
		t.Errorf("the screen does not show the outside edit:\n%s", view)
	}
	late := newTestModel(t, newFakeBackend(), 140, 40, src.Snapshot())
	if a, b := view, late.View(); a != b {
		t.Errorf("screens differ:\n--- live:\n%s\n--- from snapshot:\n%s", a, b)
	}
}
