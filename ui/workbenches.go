package ui

import (
	"fmt"
	"strings"
)

// workbenchesStat is the header's count of the workbenches attached to
// the server: those that may decide held calls (paired, or the one in the
// server's own terminal) and those that only watch. A watcher is shown as a
// warning: it may be code running as the user, not a person. The workbench
// in the server's terminal alone, the usual case, says nothing.
func (m *Model) workbenchesStat() []string {
	srv := m.st.Server
	attached := strings.HasPrefix(m.info.Mode, "attached")
	if srv.Watchers == 0 && (srv.Workbenches == 0 || srv.Workbenches == 1 && !attached) {
		return nil
	}
	s := m.styles
	out := []string{s.HeaderKey.Render("workbenches ") + s.HeaderValue.Render(fmt.Sprintf("%d paired", srv.Workbenches))}
	if srv.Watchers > 0 {
		out[0] += s.HeaderValue.Render(", ") + s.Warning.Render(fmt.Sprintf("%d watching", srv.Watchers))
	}
	return out
}
