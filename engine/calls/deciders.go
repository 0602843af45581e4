package calls

import "github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"

// Who may decide. A workbench that may decide held calls and act for the
// person (AttachWorkbench: the one in this process, an attached one that was
// paired) counts for approval; one that only watches (AttachWatcher: an
// attached workbench that was not paired, which may be code running in a
// kernel as our own user) never does, so that it can neither take the
// decisions away from the person at the client nor keep a held call
// waiting for itself. The header shows both counts (ServerEvent).

// AttachWatcher records that a workbench watches without the right to
// decide; the returned function detaches it.
func (r *Registry) AttachWatcher() (detach func()) {
	r.mu.Lock()
	r.watchers++
	r.mu.Unlock()
	r.publishState()
	done := false
	return func() {
		r.mu.Lock()
		if done {
			r.mu.Unlock()
			return
		}
		done = true
		r.watchers--
		r.mu.Unlock()
		r.publishState()
	}
}

// detachUI forgets one deciding workbench. When the last one goes, calls
// held for a workbench are denied since no one is left to decide them;
// a call whose client is being asked still has someone to decide it.
func (r *Registry) detachUI() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.uis--
	if r.uis > 0 {
		return
	}
	for _, cl := range r.calls {
		if cl.approval != nil && !cl.asking {
			select {
			case cl.approval <- decision{err: errNoWorkbench, by: "no one: the last workbench that could decide detached"}:
			default:
			}
		}
	}
}

// ruleDecidedLocked names the allow rule that lets cl run without being
// held, "" when the mode would not hold it anyway; r.mu must be held.
func (r *Registry) ruleDecidedLocked(cl *call) string {
	a := event.AllowedTool{Session: cl.info.Session, Tool: cl.info.Tool}
	if !r.allowed[a] {
		return ""
	}
	by := r.allowedBy[a]
	if by == "" {
		by = "a person"
	}
	return "an allow rule: " + cl.info.Tool + " for this session, set by " + by
}
