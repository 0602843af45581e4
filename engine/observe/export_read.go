package observe

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// A workbench export (E) is a file of calls, one a line: the request as an
// MCP tools/call and the result as the client read it. Replay plays one as
// the calls it holds (started, then finished), as it plays a recording's
// events; what an export does not hold (notebooks, executions, kernels) is
// not shown. The fields read here are those ui's exportedCall writes.

// exportedLine is one line of an export, as far as a replay needs it.
type exportedLine struct {
	ID         string           `json:"id"`
	Session    string           `json:"session"`
	ResendOf   string           `json:"resendOf"`
	Tool       string           `json:"tool"`
	Status     event.CallStatus `json:"status"`
	Started    time.Time        `json:"started"`
	Finished   *time.Time       `json:"finished"`
	DurationMs float64          `json:"durationMs"`
	HeldMs     float64          `json:"heldMs"`
	CellError  string           `json:"cellError"`
	Request    *struct {
		Method string `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	} `json:"request"`
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Meta              json.RawMessage `json:"_meta"`
		IsError           bool            `json:"isError"`
		Images            int             `json:"images"`
	} `json:"result"`
	Error string `json:"error"`
}

// isExportLine reports whether a line is a call of an export rather than an
// event of a recording: an object with a request and no event type.
func isExportLine(line []byte) bool {
	var probe struct {
		Type    *string         `json:"type"`
		Request json.RawMessage `json:"request"`
	}
	return json.Unmarshal(line, &probe) == nil && probe.Type == nil && len(probe.Request) > 0
}

// exportEvents are the events of one export line: the call started and,
// unless it was still going when exported, finished.
func exportEvents(line []byte) ([]event.Event, error) {
	var l exportedLine
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, err
	}
	tool := l.Tool
	var args json.RawMessage
	if l.Request != nil {
		args = l.Request.Params.Arguments
		if tool == "" {
			tool = l.Request.Params.Name
		}
	}
	dur := time.Duration(l.DurationMs * float64(time.Millisecond))
	held := time.Duration(l.HeldMs * float64(time.Millisecond))
	start := event.CallEvent{ID: l.ID, Session: l.Session, Tool: tool, Args: args, Status: event.CallRunning, Started: l.Started, ResendOf: l.ResendOf}
	evs := []event.Event{{Time: l.Started, Type: event.EvCallStarted, Call: &start}}
	switch l.Status {
	case event.CallHeld:
		held := start
		held.Status = event.CallHeld
		return append(evs, event.Event{Time: l.Started, Type: event.EvCallHeld, Call: &held}), nil
	case event.CallRunning:
		return evs, nil
	}
	end := start
	end.Status, end.Duration, end.Held, end.Error, end.CellError = l.Status, dur, held, l.Error, l.CellError
	if r := l.Result; r != nil {
		var texts []string
		for _, c := range r.Content {
			if c.Type == "text" {
				texts = append(texts, c.Text)
			}
		}
		end.Text = strings.Join(texts, "\n")
		end.Structured, end.Meta, end.IsError, end.Images = r.StructuredContent, r.Meta, r.IsError, r.Images
	}
	at := l.Started.Add(dur)
	if l.Finished != nil {
		at = *l.Finished
	}
	return append(evs, event.Event{Time: at, Type: event.EvCallFinished, Call: &end}), nil
}

// inTimeOrder sorts the events an export gave by time: its calls are
// listed by start, and one may end after the next begins.
func inTimeOrder(evs []event.Event) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
}
