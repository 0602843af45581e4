// Package contract is what replay --against compares: it reads the calls of
// a --record file, gives each the arguments to replay it with (recorded ids
// mapped to the replay's), normalizes what differs between two runs of the
// same calls (ids, times, execution counts, sizes, temporary paths) and
// lists the fields in which an answer differs from the recorded one.
package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// Call statuses as a replay compares them.
const (
	StatusOK            = "ok"
	StatusToolError     = "tool error"
	StatusProtocolError = "protocol error"
)

// CallResult is what a tool call answered, in the terms a replay compares:
// its status, its text content, its structuredContent and its _meta.
type CallResult struct {
	Status     string
	Text       string
	Structured json.RawMessage
	Meta       json.RawMessage
}

// RecordedCall is one tool call of a recording with its recorded result.
type RecordedCall struct {
	N       int // its place among the recording's calls, from 1
	Session string
	Tool    string
	Args    json.RawMessage
	Result  CallResult
}

// SkippedCall is a recorded call a replay cannot run, and why.
type SkippedCall struct {
	N      int
	Tool   string
	Reason string
}

// ReadCalls reads the tool calls of a recording made with --record, in the
// order they started. Calls that were denied or cancelled, and calls the
// recording holds no result for, are returned as skipped: their outcome was
// decided by a person or by the end of the run, not by the server. So are
// calls whose arguments a person edited before allowing them, calls whose
// arguments held a secret (redacted in the recording), and the undos a
// person made at the workbench.
func ReadCalls(path string) ([]RecordedCall, []SkippedCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	evs, err := observe.ReadRecording(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	type pending struct {
		start    *event.CallEvent
		finished *event.CallEvent
	}
	var order []string
	byID := map[string]*pending{}
	for _, ev := range evs {
		c := ev.Call
		if c == nil || c.ID == "" {
			continue
		}
		switch ev.Type {
		case event.EvCallStarted:
			if byID[c.ID] == nil {
				byID[c.ID] = &pending{start: c}
				order = append(order, c.ID)
			}
		case event.EvCallFinished:
			if p := byID[c.ID]; p != nil {
				p.finished = c
			}
		}
	}
	var calls []RecordedCall
	var skipped []SkippedCall
	for i, id := range order {
		p := byID[id]
		n, tool := i+1, p.start.Tool
		switch {
		case p.start.UndoOf != "":
			// A person's undo at the workbench is no tool call.
			skipped = append(skipped, SkippedCall{n, tool, "an undo made at the workbench"})
			continue
		case p.finished == nil:
			skipped = append(skipped, SkippedCall{n, tool, "no result recorded"})
			continue
		case p.finished.Status == event.CallCancelled || p.finished.Status == event.CallDenied:
			skipped = append(skipped, SkippedCall{n, tool, string(p.finished.Status)})
			continue
		case p.finished.Edited:
			// What ran is what a person made of the call, and the agent's
			// result says so: the build would answer the call as sent.
			skipped = append(skipped, SkippedCall{n, tool, "arguments edited by the person"})
			continue
		case bytes.Contains(p.start.Args, []byte(observe.Redacted)):
			// A token was cut out of them: run as recorded, the call
			// would use "[redacted]" as a token or a URL.
			skipped = append(skipped, SkippedCall{n, tool, "arguments redacted"})
			continue
		}
		calls = append(calls, RecordedCall{N: n, Session: p.start.Session, Tool: tool, Args: p.start.Args, Result: recordedResult(p.finished)})
	}
	return calls, skipped, nil
}

// recordedResult is the CallResult of a recorded outcome.
func recordedResult(c *event.CallEvent) CallResult {
	status := StatusOK
	switch {
	case c.Error != "":
		status = StatusProtocolError
	case c.IsError || c.Status == event.CallError:
		status = StatusToolError
	}
	return CallResult{Status: status, Text: c.Text, Structured: c.Structured, Meta: c.Meta}
}

// Difference is one field of one call that differs between the recording
// and the replay, both normalized.
type Difference struct {
	Call     int
	Tool     string
	Field    string // status, kind, keys, text, structuredContent, _meta
	Recorded string
	Now      string
}

// Comparer compares replayed calls with recorded ones, one call after the
// other in the recording's order: it keeps the names given to ids on both
// sides, so that it can also put the replay's ids into the arguments of
// the calls still to come.
type Comparer struct {
	rec, now *Normalizer
}

// NewComparer returns a comparer; roots are the replay's directories
// (its Jupyter root), written <root> on the replay's side.
func NewComparer(roots ...string) *Comparer {
	return &Comparer{rec: NewNormalizer(), now: NewNormalizer(roots...)}
}

// Args returns the arguments to replay a recorded call with: the recorded
// ones with every id the replay has a counterpart for (a cell the replay
// made where the recording made another) replaced by that counterpart.
func (c *Comparer) Args(recorded json.RawMessage) json.RawMessage {
	v, ok := decodeJSON(recorded)
	if !ok {
		return recorded
	}
	swap := func(id string) string {
		if name, ok := c.rec.Name(id); ok {
			if raw, ok := c.now.Raw(name); ok {
				return raw
			}
		}
		return id
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		case string:
			v = uuidPattern.ReplaceAllStringFunc(v, swap)
			return hex8Pattern.ReplaceAllStringFunc(v, swap)
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		return recorded
	}
	// Both sides name the ids of the arguments, in the same order, so that
	// an id seen first in an argument keeps the two sides' names in step.
	c.rec.Learn(recorded)
	c.rec.JSON(recorded)
	c.now.Learn(out)
	c.now.JSON(out)
	return out
}

// Compare returns the fields in which now differs from the recorded call.
func (c *Comparer) Compare(call RecordedCall, now CallResult) []Difference {
	r := c.rec.result(call.Result)
	n := c.now.result(now)
	var diffs []Difference
	add := func(field, rec, now string) {
		if rec != now {
			diffs = append(diffs, Difference{Call: call.N, Tool: call.Tool, Field: field, Recorded: rec, Now: now})
		}
	}
	add("status", call.Result.Status, now.Status)
	add("kind", r.kind, n.kind)
	add("keys", r.keys, n.keys)
	add("text", r.text, n.text)
	add("structuredContent", r.structured, n.structured)
	add("_meta", r.meta, n.meta)
	return diffs
}

// normalized is a CallResult as compared.
type normalized struct {
	kind, keys, text, structured, meta string
}

// result normalizes a result. Ids under id keys are learned first, so
// that the text, read next, names them whatever they look like.
func (n *Normalizer) result(r CallResult) normalized {
	n.Learn(r.Meta)
	n.Learn(r.Structured)
	out := normalized{text: n.Text(r.Text), structured: n.JSON(r.Structured), meta: n.JSON(r.Meta)}
	if v, ok := decodeJSON(r.Structured); ok {
		if m, ok := v.(map[string]any); ok {
			out.kind, _ = m["kind"].(string)
			out.keys = strings.Join(sortedKeys(m), ",")
		}
	}
	return out
}

// WriteDifferences prints the differences as a table: call, tool, field,
// and the recorded and current values cut around where they part.
func WriteDifferences(w io.Writer, diffs []Difference) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "call\ttool\tfield\trecorded\tnow")
	for _, d := range diffs {
		rec, now := Excerpts(d.Recorded, d.Now, 48)
		fmt.Fprintf(tw, "#%d\t%s\t%s\t%s\t%s\n", d.Call, d.Tool, d.Field, rec, now)
	}
	tw.Flush()
}

// Excerpts quotes a and b, each cut to about width bytes around the first
// place they differ, with … where something was cut.
func Excerpts(a, b string, width int) (string, string) {
	at := 0
	for at < len(a) && at < len(b) && a[at] == b[at] {
		at++
	}
	return excerpt(a, at, width), excerpt(b, at, width)
}

func excerpt(s string, at, width int) string {
	start := max(0, at-width/3)
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	end := min(len(s), start+width)
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	q := visible(s[start:end])
	if start > 0 {
		q = "…" + q
	}
	if end < len(s) {
		q += "…"
	}
	if s == "" {
		return `""`
	}
	return q
}

// visible escapes what would break a table row (newlines, tabs, other
// control characters) and leaves the rest as it is: quotes, and the
// backslashes of JSON's own escapes, which would otherwise double.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b.WriteString(strconv.QuoteRune(r)[1 : len(strconv.QuoteRune(r))-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Summary is the one line a replay ends with.
func Summary(path string, calls []RecordedCall, skipped []SkippedCall, diffs []Difference) string {
	differing := map[int]bool{}
	for _, d := range diffs {
		differing[d.Call] = true
	}
	var b strings.Builder
	if len(diffs) == 0 {
		fmt.Fprintf(&b, "replay: all %d calls of %s answered as recorded", len(calls), path)
	} else {
		fmt.Fprintf(&b, "replay: %d of %d calls of %s answered differently (%d differences)", len(differing), len(calls), path, len(diffs))
	}
	if len(skipped) > 0 {
		reasons := map[string]int{}
		for _, s := range skipped {
			reasons[s.Reason]++
		}
		var parts []string
		for r, k := range reasons {
			parts = append(parts, fmt.Sprintf("%d %s", k, r))
		}
		sort.Strings(parts)
		fmt.Fprintf(&b, "; %d not replayed (%s)", len(skipped), strings.Join(parts, ", "))
	}
	return b.String()
}

// switches are the tools whose recorded call would take a replay away from
// the server it was given: to another Jupyter server (connect_to_jupyter,
// which once deleted a real notebook's cell on a server still running) or
// into a sandbox (code run by an interpreter on this machine, or a remote
// one the recording named).
var switches = map[string]string{
	"connect_to_jupyter": "a switch to another Jupyter server",
	"launch_sandbox":     "a sandbox call",
	"use_sandbox":        "a sandbox call",
	"terminate_sandbox":  "a sandbox call",
	"list_sandboxes":     "a sandbox call",
}

// WithoutSwitches moves the recorded server switches and sandbox calls to
// the skipped ones (a replay follows them only when told to), keeping the
// order of both.
func WithoutSwitches(calls []RecordedCall, skipped []SkippedCall) ([]RecordedCall, []SkippedCall) {
	var kept []RecordedCall
	for _, c := range calls {
		if why, ok := switches[c.Tool]; ok {
			skipped = append(skipped, SkippedCall{N: c.N, Tool: c.Tool, Reason: why + " (--follow-switches replays it)"})
			continue
		}
		kept = append(kept, c)
	}
	sort.SliceStable(skipped, func(i, j int) bool { return skipped[i].N < skipped[j].N })
	return kept, skipped
}
