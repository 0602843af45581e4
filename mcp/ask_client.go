package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Approval through the client. With --approve on and no workbench attached,
// a held call is put to the person using the calling client, in their own
// MCP host, through elicitation/create: a form with allow / deny and an
// optional reason. The engine decides when to ask (engine/calls.go); this
// file says how, and in which words.

// Keys and values of the approval form.
const (
	approvalDecision = "decision"
	approvalReason   = "reason"
	approvalAllow    = "allow"
)

// approvalSchema is the form: a required choice and an optional reason
// (flat primitive properties, as elicitation requires).
var approvalSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "decision": {
      "type": "string",
      "title": "Decision",
      "description": "allow runs this call once; deny refuses it and tells the agent",
      "enum": ["allow", "deny"]
    },
    "reason": {
      "type": "string",
      "title": "Reason (optional)",
      "description": "Given to the agent with a denial"
    }
  },
  "required": ["decision"]
}`)

// argSummaryBytes bounds one argument's value in the question, and
// questionArgs how many arguments it lists.
const (
	argSummaryBytes = 120
	questionArgs    = 8
)

// canElicit says whether the client advertised form elicitation on a
// protocol version where a server may send it in the middle of a call
// (from 2026-07-28 on, a server asks through the result instead, which
// this server does not do: such a client gets the immediate refusal).
func canElicit(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	if el := p.Capabilities.Elicitation; el.Form == nil && el.URL != nil {
		return false
	}
	return p.ProtocolVersion < "2026-07-28"
}

// askClient returns the engine's way to ask the person at this call's
// client, or nil when the client cannot be asked.
func (s *Server) askClient(ss *sdk.ServerSession, d *toolDef, session, tool string, args json.RawMessage) calls.AskClient {
	if !canElicit(ss) {
		return nil
	}
	return func(ctx context.Context, preview *event.CallPreview) (calls.ClientAnswer, error) {
		res, err := ss.Elicit(ctx, &sdk.ElicitParams{
			Mode:            "form",
			Message:         s.approvalQuestion(d, session, tool, args, preview),
			RequestedSchema: approvalSchema,
		})
		if err != nil {
			return calls.ClientAnswer{}, fmt.Errorf("elicitation failed: %s", redact(err.Error()))
		}
		return clientAnswer(res), nil
	}
}

// clientAnswer reads the person's answer. Anything but an accepted form
// that chose allow is a denial: failing safe beats running a call no one
// allowed.
func clientAnswer(res *sdk.ElicitResult) calls.ClientAnswer {
	switch res.Action {
	case "accept":
	case "decline":
		return calls.ClientAnswer{}
	default: // "cancel", or anything a client invents
		return calls.ClientAnswer{Dismissed: true}
	}
	reason, _ := res.Content[approvalReason].(string)
	choice, _ := res.Content[approvalDecision].(string)
	return calls.ClientAnswer{Allow: choice == approvalAllow, Reason: reason}
}

// approvalQuestion is the message the person reads: which tool, on which
// notebook, what it would do (the engine's preview, as the workbench shows
// it), with which arguments, and what happens if they do not answer.
func (s *Server) approvalQuestion(d *toolDef, session, tool string, args json.RawMessage, preview *event.CallPreview) string {
	var b strings.Builder
	fmt.Fprintf(&b, "An agent wants to run %s", tool)
	if d != nil && d.description != "" {
		fmt.Fprintf(&b, " (%s)", firstSentence(d.description))
	}
	var m map[string]any
	_ = json.Unmarshal(redactArgs(args), &m)
	name, _ := m["notebook_name"].(string)
	if preview != nil && preview.Notebook != "" {
		// The notebook the preview found: the one the call acts on.
		fmt.Fprintf(&b, " on notebook '%s' (%s)", preview.Notebook, preview.Path)
	} else if nb, err := s.e.Notebook(session, name); err == nil {
		fmt.Fprintf(&b, " on notebook '%s' (%s)", nb.Name, nb.Path)
	} else if name != "" {
		fmt.Fprintf(&b, " on notebook '%s'", name)
	}
	b.WriteString(".")
	b.WriteString(previewText(preview))
	if summary := argsSummary(m); summary != "" {
		b.WriteString("\nArguments: " + summary)
	}
	fmt.Fprintf(&b, "\nThis server holds such calls for approval (--approve %s). Allow it to run once, or deny it (a reason you give is passed to the agent). Without an answer within %s it is denied.",
		s.e.Calls().State().ApprovalMode, s.e.Calls().ApprovalTimeout())
	return b.String()
}

// Bounds of the preview in a question: a person reads its start in a
// dialog, not a whole cell.
const (
	previewLines     = 12
	previewTextBytes = 1500
)

// previewRoles words a preview cell's role.
var previewRoles = map[string]string{event.PreviewCellNew: "would be inserted", event.PreviewCellGone: "would be deleted", event.PreviewCellMoved: "would be moved", event.PreviewCellRun: "would run"}

// previewText is the preview as lines of the question ("" when there is
// none): what the call would do, or the refusal it will get; the cells it
// would insert, delete, move or run (their first line), the start of a
// diff or of the code, and the state that would be lost.
func previewText(p *event.CallPreview) string {
	if p == nil || (p.What == "" && !p.Refused) {
		return ""
	}
	var b strings.Builder
	if p.Changed != "" {
		b.WriteString("\nAsked again: what it would do changed after you were shown it (" + oneLine(p.Changed) + ").")
	}
	if p.What != "" {
		b.WriteString("\nIt would " + p.What + ".")
	}
	if p.Refused {
		// What the call will fail with if allowed, as the engine says it.
		b.WriteString("\nIt will be refused: " + oneLine(p.Problem) + ".")
	}
	for _, c := range p.Cells {
		role, ok := previewRoles[c.Role]
		if !ok {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimSpace(c.Source), "\n")
		fmt.Fprintf(&b, "\n  cell %d (%s) %s: %s", c.Index, c.ID, role, oneLine(first))
	}
	for _, block := range []string{p.Diff, p.Code} {
		if block == "" {
			continue
		}
		lines := strings.Split(strings.TrimRight(block, "\n"), "\n")
		if len(lines) > previewLines {
			lines = append(lines[:previewLines], fmt.Sprintf("… %d more lines", len(lines)-previewLines))
		}
		b.WriteString("\n  " + strings.Join(lines, "\n  "))
	}
	if len(p.Facts) > 0 {
		b.WriteString("\nWould be lost: " + strings.Join(p.Facts, "; "))
	}
	text := b.String()
	if len(text) > previewTextBytes {
		cut := previewTextBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}

// firstSentence is a tool description's first sentence, without its period.
func firstSentence(desc string) string {
	line, _, _ := strings.Cut(desc, "\n")
	if i := strings.Index(line, ". "); i > 0 {
		line = line[:i]
	}
	return strings.TrimSuffix(strings.TrimSpace(line), ".")
}

// argsSummary lists arguments as key=value in name order, each value on one
// line and cut to argSummaryBytes.
func argsSummary(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for i, k := range keys {
		if i == questionArgs {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-i))
			break
		}
		var v string
		if str, ok := m[k].(string); ok {
			v = fmt.Sprintf("%q", oneLine(str))
		} else {
			raw, _ := json.Marshal(m[k])
			v = string(raw)
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ", ")
}

// oneLine is s with its line breaks shown as ⏎ and cut to argSummaryBytes.
func oneLine(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ⏎ ")
	if len(s) <= argSummaryBytes {
		return s
	}
	cut := argSummaryBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
