package engine

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// Jupyter's health, as the header shows it from the start: whether the
// server in use answers and takes the token, checked before any agent call
// and every JupyterCheckInterval after, so a wrong --jupyter-token or a
// server that went away is seen at once, not when the agent's first call
// fails. A managed server's own states (starting, failed to start,
// restarting: jupyter_state.go) come first; this says the rest.

// The values it gives are event.JupyterUp, JupyterRefused and
// JupyterUnreachable; it checks every event.JupyterCheckInterval.

// JupyterCheckInterval is how often WatchJupyter checks the server.
const JupyterCheckInterval = event.JupyterCheckInterval

// jupyterHealth is what the last check found, for the client it checked.
type jupyterHealth struct {
	client         *jupyter.Client
	state          string
	cause, problem string
}

// WatchJupyter checks the Jupyter server in use now and then every
// interval until ctx ends, publishing the header state whenever what it
// finds changes. report, when not nil, is told of each change (the log).
func (e *Engine) WatchJupyter(ctx context.Context, interval time.Duration, report func(state, problem string)) {
	if interval <= 0 {
		interval = JupyterCheckInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for skipped := 0; ; {
		// A refused token stays refused until this process is given
		// another (connect_to_jupyter) or the server restarts with it:
		// asked every interval, each refusal is a warning in the user's
		// Jupyter log. While it is refused the server is asked again
		// only every refusedChecks-th interval.
		if h := e.health.Load(); h != nil && h.state == event.JupyterRefused && h.client == e.jupyterClient() && skipped < refusedChecks-1 {
			skipped++
		} else {
			skipped = 0
			e.checkHealth(ctx, interval, report)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// refusedChecks is how many intervals apart a refused token is tried again
// (a minute at the default interval).
const refusedChecks = 12

// checkHealth is one check.
func (e *Engine) checkHealth(ctx context.Context, timeout time.Duration, report func(state, problem string)) {
	client := e.jupyterClient()
	if st := e.jupyterState.Load(); st != nil && client == e.first {
		// The supervisor of the managed server says it is not up
		// (starting, failed, restarting): that is what the header shows.
		return
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	_, err := client.Status(cctx)
	cancel()
	if ctx.Err() != nil {
		return
	}
	h := &jupyterHealth{client: client, state: event.JupyterUp}
	var api *jupyter.APIError
	var un *jupyter.UnreachableError
	switch {
	case err == nil:
	case errors.As(err, &api) && (api.Status == http.StatusUnauthorized || api.Status == http.StatusForbidden):
		h.state, h.cause, h.problem = event.JupyterRefused, strconv.Itoa(api.Status), err.Error()
	case errors.As(err, &un):
		h.state, h.cause, h.problem = event.JupyterUnreachable, un.Reason, err.Error()
	default:
		// It answers, but not as a Jupyter server does (a proxy's error
		// page, a 500): it is not up for the calls either.
		h.state, h.problem = event.JupyterUnreachable, err.Error()
	}
	old := e.health.Swap(h)
	if old != nil && old.client == h.client && old.state == h.state && old.cause == h.cause {
		return
	}
	if report != nil {
		report(h.state, h.problem)
	}
	e.calls.PublishState()
}

// fillJupyterHealth puts the last check's finding into a header event, when
// it is about the server in use.
func (e *Engine) fillJupyterHealth(ev *event.ServerEvent) {
	h := e.health.Load()
	if h == nil || h.client != e.jupyterClient() {
		return
	}
	ev.Jupyter, ev.JupyterCause, ev.JupyterProblem = h.state, h.cause, h.problem
}
