package observe

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// applyOutsideEdit records a notebook file changed by someone else as a
// line in the calls timeline, between the calls it happened among: which
// cells were added, removed, edited or moved, by id. The notebook pane has
// the new cells already (the reload event before it).
func (s *State) applyOutsideEdit(ev event.Event) {
	n := ev.Notebook
	byKind := map[event.HowChanged][]string{}
	for _, c := range n.ChangedCells {
		byKind[c.How] = append(byKind[c.How], c.ID)
	}
	args := map[string]string{"notebook": n.Name}
	for kind, ids := range byKind {
		args[string(kind)] = strings.Join(ids, ",")
	}
	if n.MetadataChanged {
		args["metadata"] = "changed"
	}
	raw, _ := json.Marshal(args)
	at := n.At
	if at.IsZero() {
		at = ev.Time
	}
	s.applyCall(event.Event{Time: ev.Time, Type: event.EvCallFinished, Call: &event.CallEvent{
		ID:      fmt.Sprintf("outside-edit-%s-%d", n.Name, ev.Time.UnixNano()),
		Tool:    "outside edit",
		Args:    raw,
		Started: ev.Time,
		Status:  event.CallOK,
		Text:    event.OutsideEditText(n.Name, n.Path, at, n.ChangedCells, n.MetadataChanged),
	}})
	s.CallsVer++
}
