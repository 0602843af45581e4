package observe

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// applyKernelLost records a kernel that went away (shut down or restarted
// outside, died): its state in the kernels list, and a line in the calls
// timeline, between the calls it happened among, so that the person sees
// why the next call failed.
func (s *State) applyKernelLost(ev event.Event) {
	k := *ev.Kernel
	if old, ok := s.Kernels[k.ID]; ok {
		if k.Name == "" {
			k.Name = old.Name
		}
		if k.State == "" {
			k.State = old.State
		}
	}
	s.Kernels[k.ID] = k
	s.KernelsVer++

	var names []string
	for _, nb := range s.Notebooks {
		if nb.KernelID == k.ID {
			names = append(names, nb.Name)
		}
	}
	sort.Strings(names)
	args, _ := json.Marshal(map[string]string{"kernel": shortID(k.ID), "what": k.Lost, "notebook": strings.Join(names, ",")})
	text := fmt.Sprintf("Kernel %s %s: its state is gone until the kernel is restarted.", k.ID, k.Lost)
	if len(names) > 0 {
		text = fmt.Sprintf("Kernel %s (notebook %s) %s: its state is gone until the notebook's kernel is restarted.", k.ID, strings.Join(names, ", "), k.Lost)
	}
	s.applyCall(event.Event{Time: ev.Time, Type: event.EvCallFinished, Call: &event.CallEvent{
		ID:      fmt.Sprintf("kernel-lost-%s-%d", k.ID, ev.Time.UnixNano()),
		Tool:    "kernel lost",
		Args:    args,
		Started: ev.Time,
		Status:  event.CallError,
		IsError: true,
		Text:    text,
	}})
	s.CallsVer++
}

// shortID is the first 8 characters of a kernel id, as the panes show it.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
