package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/invisible"
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
// protocol version where a server may send it in the middle of a call.
// From 2026-07-28 on a server asks through the call's result instead
// (input_required, mrtr.go).
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
	// Names the agent chose, their hidden characters shown as markers.
	show := invisible.ShowLine
	if preview != nil && preview.Notebook != "" {
		// The notebook the preview found: the one the call acts on.
		fmt.Fprintf(&b, " on notebook '%s' (%s)", show(preview.Notebook), show(preview.Path))
	} else if nb, err := s.e.Notebook(session, name); err == nil {
		fmt.Fprintf(&b, " on notebook '%s' (%s)", show(nb.Name), show(nb.Path))
	} else if name != "" {
		fmt.Fprintf(&b, " on notebook '%s'", show(name))
	}
	b.WriteString(".")
	b.WriteString(previewText(preview))
	var shown []string // what the preview text already carries whole
	if preview != nil {
		shown = append(shown, preview.Code)
		for _, c := range preview.Cells {
			if c.Role == event.PreviewCellNew {
				shown = append(shown, c.Source)
			}
		}
	}
	if summary := argsSummary(m, shown...); summary != "" {
		b.WriteString("\nArguments: " + summary)
	}
	fmt.Fprintf(&b, "\nThis server holds such calls for approval (--approve %s). Allow it to run once, or deny it (a reason you give is passed to the agent). Without an answer within %s it is denied.",
		s.e.Calls().State().ApprovalMode, s.e.Calls().ApprovalTimeout())
	return b.String()
}

// questionCodeBytes bounds the code (or diff, or new cell) a question
// carries. Past it the question says where the code was cut and where the
// whole of it is: a person must never take the end of a message for the end
// of the code.
const questionCodeBytes = 32 << 10

// foldRun is the shortest run of blank lines a question folds into one line
// that counts them (a run of them must not push the rest out of sight).
const foldRun = 3

// previewRoles words a preview cell's role.
var previewRoles = map[string]string{event.PreviewCellNew: "would be inserted", event.PreviewCellGone: "would be deleted", event.PreviewCellMoved: "would be moved", event.PreviewCellRun: "would run"}

// previewText is the preview as lines of the question ("" when there is
// none): what the call would do, or the refusal it will get; the cells it
// would insert (whole), delete, move or run (their first line), the diff
// and the code whole (hidden characters shown as ⟨ESC⟩, ⟨U+202E⟩ and
// counted, runs of blank lines folded with a count) or cut with a sentence
// saying where and where to read the rest, and the state that would be lost.
func previewText(p *event.CallPreview) string {
	if p == nil || (p.What == "" && !p.Refused) {
		return ""
	}
	var b strings.Builder
	if p.Changed != "" {
		b.WriteString("\nAsked again: what it would do changed after you were shown it (" + invisible.ShowLine(oneLine(p.Changed)) + ").")
	}
	if p.What != "" {
		b.WriteString("\nIt would " + invisible.ShowLine(p.What) + ".")
	}
	if p.Refused {
		// What the call will fail with if allowed, as the engine says it.
		b.WriteString("\nIt will be refused: " + invisible.ShowLine(oneLine(p.Problem)) + ".")
	}
	var hidden invisible.Report
	for _, c := range p.Cells {
		role, ok := previewRoles[c.Role]
		if !ok {
			continue
		}
		if c.Role == event.PreviewCellNew && c.Source != p.Code {
			fmt.Fprintf(&b, "\n  cell %d %s, its source:", c.Index, role)
			b.WriteString(codeBlock(c.Source, c.SourceCut, "cell_source"))
			hidden.Add(invisible.Inspect(c.Source))
			continue
		}
		first, _, _ := strings.Cut(strings.TrimSpace(c.Source), "\n")
		fmt.Fprintf(&b, "\n  cell %d (%s) %s: %s", c.Index, c.ID, role, invisible.ShowLine(oneLine(first)))
	}
	if p.Diff != "" {
		b.WriteString("\nThe change:")
		b.WriteString(codeBlock(p.Diff, p.DiffCut, "new_string"))
		hidden.Add(invisible.Inspect(p.Diff))
	}
	if p.Code != "" {
		fmt.Fprintf(&b, "\nThe code (%d lines, %d bytes):", strings.Count(strings.TrimSuffix(p.Code, "\n"), "\n")+1, len(p.Code)+p.CodeCut)
		b.WriteString(codeBlock(p.Code, p.CodeCut, "code"))
		hidden.Add(invisible.Inspect(p.Code))
	}
	if hidden.Any() {
		b.WriteString("\nWarning: it holds characters that show nothing or move text, each written above as ⟨…⟩: " + hidden.Summary() + ".")
	}
	if len(p.Facts) > 0 {
		b.WriteString("\nWould be lost: " + invisible.ShowLine(strings.Join(p.Facts, "; ")))
	}
	return b.String()
}

// codeBlock is text as indented lines of a question, hidden characters
// shown, blank runs folded, cut at questionCodeBytes with a sentence that
// says where and names the argument that holds the whole (arg). cut is what
// the preview itself could not carry.
func codeBlock(text string, cut int, arg string) string {
	lines := strings.Split(strings.TrimSuffix(invisible.Show(text), "\n"), "\n")
	var b strings.Builder
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "" {
			j := i
			for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
				j++
			}
			if j-i >= foldRun {
				fmt.Fprintf(&b, "\n  ⋯ %d blank lines (lines %d–%d) ⋯", j-i, i+1, j)
				i = j - 1
				continue
			}
		}
		if b.Len()+len(lines[i]) > questionCodeBytes {
			fmt.Fprintf(&b, "\n  ✂ cut here: lines %d–%d are not in this message. The whole is the %s argument of this call (your host shows a call's arguments), or open the workbench to read it before you answer.", i+1, len(lines), arg)
			return b.String()
		}
		b.WriteString("\n  " + lines[i])
	}
	if cut > 0 {
		fmt.Fprintf(&b, "\n  ✂ %d more bytes were too long to preview: the whole is the %s argument of this call.", cut, arg)
	}
	return b.String()
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
// line and cut to argSummaryBytes; a value the question carries whole
// already (one of shown) is named, not repeated.
func argsSummary(m map[string]any, shown ...string) string {
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
		if str, ok := m[k].(string); ok && str != "" && slices.Contains(shown, str) {
			v = "(above, whole)"
		} else if ok {
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
