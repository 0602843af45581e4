package mcp

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Resource subscriptions. A client may subscribe to notebook://{name}, to
// one of its cells (notebook://{name}/cells/{cell_id}) or outputs, and is
// sent notifications/resources/updated whenever that changes, whoever
// changed it: an agent's call, a person at the workbench, an edit made
// outside (JupyterLab, an editor, git), outputs landing from a run. The
// engine's notebook events say what changed; the SDK keeps which session
// subscribed to which URI and sends each notification only to those.
//
// The URIs are kept as the client wrote them (the SDK matches them
// byte for byte), with what they name, so that a change is told under
// every spelling a client used. While nothing is subscribed, nothing
// follows the engine's events.

// resourceSubs is what is subscribed, and the goroutine that follows the
// engine while anything is.
type resourceSubs struct {
	mu   sync.Mutex
	uris map[string]*subscribedURI
	sub  *event.Subscription
}

// subscribedURI is one URI subscribed to, by one or more sessions.
type subscribedURI struct {
	at       notebookURI
	sessions map[*sdk.ServerSession]bool
}

// subscribeResource accepts a subscription to a URI this server serves.
func (s *Server) subscribeResource(_ context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	if uri == capabilitiesURI {
		// Served, and never changes while the server runs: nothing to
		// follow, nothing to send.
		return nil
	}
	at, err := parseNotebookURI(uri)
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("cannot subscribe to %q: %v", uri, err)}
	}
	w := &s.subs
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.uris == nil {
		w.uris = map[string]*subscribedURI{}
	}
	su := w.uris[uri]
	if su == nil {
		su = &subscribedURI{at: at, sessions: map[*sdk.ServerSession]bool{}}
		w.uris[uri] = su
	}
	su.sessions[req.Session] = true
	if w.sub == nil {
		w.sub = s.e.Bus().SubscribeTo(256, event.EvNotebookChanged, event.EvNotebookOpened, event.EvNotebookClosed)
		go s.followChanges(w.sub)
	}
	return nil
}

// unsubscribeResource ends a session's subscription to a URI.
func (s *Server) unsubscribeResource(_ context.Context, req *sdk.UnsubscribeRequest) error {
	s.dropSubscriptions(req.Session, req.Params.URI)
	return nil
}

// dropSubscriptions forgets what ss subscribed to: uri, or everything when
// uri is "" (the session ended). The last one gone stops the follower.
func (s *Server) dropSubscriptions(ss *sdk.ServerSession, uri string) {
	w := &s.subs
	w.mu.Lock()
	for u, su := range w.uris {
		if uri != "" && u != uri {
			continue
		}
		delete(su.sessions, ss)
		if len(su.sessions) == 0 {
			delete(w.uris, u)
		}
	}
	var stop *event.Subscription
	if len(w.uris) == 0 {
		stop, w.sub = w.sub, nil
	}
	w.mu.Unlock()
	if stop != nil {
		stop.Close()
	}
}

// followChanges turns the engine's notebook events into resources/updated
// notifications. A burst of events (a run's outputs) is taken whole before
// anything is sent, so that each URI is told once per burst.
func (s *Server) followChanges(sub *event.Subscription) {
	for ev := range sub.C() {
		touched := map[string]bool{}
		s.touchedBy(ev, touched)
	burst:
		for {
			select {
			case next, ok := <-sub.C():
				if !ok {
					break burst
				}
				s.touchedBy(next, touched)
			default:
				break burst
			}
		}
		for uri := range touched {
			if err := s.srv.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				s.log.Warn("sending resources/updated", "uri", uri, "err", err)
			}
		}
	}
}

// touchedBy adds to touched the subscribed URIs an event changes: the
// notebook's, and those of the cells it changed. A cell's resource carries
// its index, so an insert, a delete, a move or a reload changes every cell
// of the notebook; an edit or new outputs change that cell (and its
// outputs). Lost events (EvMissed) may have changed anything.
func (s *Server) touchedBy(ev event.Event, touched map[string]bool) {
	w := &s.subs
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev.Type == event.EvMissed {
		for uri := range w.uris {
			touched[uri] = true
		}
		return
	}
	n := ev.Notebook
	if n == nil {
		return
	}
	whole := ev.Type != event.EvNotebookChanged
	cells := map[string]bool{}
	switch n.Op {
	case event.OpInsert, event.OpDelete, event.OpMove, event.OpReload:
		whole = true
	default:
		for _, c := range n.Cells {
			cells[c.ID] = true
		}
		for _, id := range n.CellIDs {
			cells[id] = true
		}
		whole = whole || len(cells) == 0
	}
	for uri, su := range w.uris {
		if su.at.name != n.Name {
			continue
		}
		if whole || su.at.cellID == "" || cells[su.at.cellID] {
			touched[uri] = true
		}
	}
}
