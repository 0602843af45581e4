package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/secret"
)

// Approval with the facts in view: what mcp/ gives the engine so that a
// held call can be previewed and edited. The engine names no tool; here the
// call's arguments become an engine.PreviewRequest, and a person's edit of
// them is checked against the tool's input schema (which mcp/ owns).

// What each tool that can be held shows the person asked to allow it, in
// the engine's terms: the table's rows name these (toolDef.preview).

func previewEditCell(in editCellIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewEdit, Notebook: deref(in.NotebookName), Cell: ref(in.CellIndex, in.CellID),
		Old: in.OldString, New: in.NewString, All: in.ReplaceAll}
}

func previewOverwriteCell(in overwriteCellIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewOverwrite, Notebook: deref(in.NotebookName), Cell: ref(in.CellIndex, in.CellID), Source: in.CellSource}
}

func previewInsertCell(in insertCellIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewInsert, Notebook: deref(in.NotebookName), Index: in.CellIndex, CellType: in.CellType, Source: in.CellSource}
}

func previewDeleteCell(in deleteCellIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewDelete, Notebook: deref(in.NotebookName), Indices: in.CellIndices, IDs: in.CellIDsToDelete}
}

func previewMoveCell(in moveCellIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewMove, Notebook: deref(in.NotebookName),
		Cell: ref(in.SourceIndex, in.SourceCellID), Target: ref(in.TargetIndex, in.TargetCellID)}
}

func previewExecuteCell(in executeCellIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewRunCell, Notebook: deref(in.NotebookName), Cell: ref(in.CellIndex, in.CellID)}
}

func previewInsertExecute(in insertExecuteIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewInsertRun, Notebook: deref(in.NotebookName), Index: in.CellIndex, Source: in.CellSource}
}

func previewExecuteCode(in executeCodeIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewRunCode, Source: in.Code, KernelID: deref(in.KernelID)}
}

func previewRestart(in restartIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewRestart, Notebook: in.NotebookName}
}

func previewUnuse(in notebookNameIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewUnuse, Notebook: in.NotebookName}
}

func previewUseSandbox(in useSandboxIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewUseSandbox, Sandbox: engine.SandboxSpec{Name: deref(in.SandboxName)}}
}

func previewLaunchSandbox(in launchSandboxIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewLaunchSandbox, Sandbox: sandboxSpec(in)}
}

func previewConnect(in connectIn) engine.PreviewRequest {
	return engine.PreviewRequest{Op: engine.PreviewConnect, URL: in.JupyterURL}
}

// previewOf decodes the arguments as the tool's input and maps them; what
// does not decode is the preview's problem (the call, if allowed, then
// fails with the SDK's own argument error).
func previewOf[In any](f func(In) engine.PreviewRequest) func(json.RawMessage) engine.PreviewRequest {
	return func(args json.RawMessage) engine.PreviewRequest {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return engine.PreviewRequest{Problem: "the arguments do not fit the tool's input: " + err.Error()}
		}
		return f(in)
	}
}

// approvalStart fills what a held call needs: whether it runs code, its
// preview, and the checker of a person's edit. shown are the arguments as
// the workbench shows them (redacted); args as the agent sent them.
func (s *Server) approvalStart(st *calls.Start, d *toolDef, args, shown json.RawMessage) {
	if d == nil {
		return
	}
	st.RunsCode = d.runsCode || d.placesCode
	// A preview is shown by a workbench, or by the client when it is
	// asked instead (ask_client.go); it is only made for a held call. A
	// call held again (its preview no longer what it would do) is
	// previewed with the arguments it runs with, a person's edit included.
	if p := d.preview; p != nil && (shown != nil || st.Ask != nil) {
		session := st.Session
		st.Preview = func(ctx context.Context) *event.CallPreview {
			runs := args
			if edited, ok := calls.EditedArgs(ctx); ok {
				runs = edited
			}
			preview := s.e.Preview(ctx, session, p(runs))
			return &preview
		}
	}
	if shown == nil {
		// No one watches: no workbench can take an edit.
		return
	}
	st.Check = func(edited json.RawMessage) (json.RawMessage, error) {
		return checkEdit(d, args, shown, edited)
	}
}

// checkEdit checks arguments a person edited against the tool's input
// schema and returns them as the call gets them. The person edited what the
// workbench showed, where secrets are redacted: a value left as it was shown
// is the agent's original, not the "[redacted]" placeholder.
func checkEdit(d *toolDef, args, shown, edited json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(edited, &m); err != nil || m == nil {
		return nil, fmt.Errorf("the arguments must be a JSON object: %v", errOr(err, "got null"))
	}
	var orig, seen map[string]json.RawMessage
	_ = json.Unmarshal(args, &orig)
	_ = json.Unmarshal(shown, &seen)
	for k, v := range m {
		if sv, ok := seen[k]; ok && bytes.Equal(compactJSON(sv), compactJSON(v)) {
			if ov, ok := orig[k]; ok {
				m[k] = ov
			}
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, err
	}
	r, err := d.input.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, fmt.Errorf("the input schema of %s: %v", d.name, err)
	}
	if err := r.Validate(v); err != nil {
		detail := strings.ReplaceAll(err.Error(), "validating root: ", "")
		detail = rationalNumber.ReplaceAllString(detail, "$1")
		detail = floatNumber.ReplaceAllString(detail, "$1")
		return nil, fmt.Errorf("%s; %s expects %s", detail, d.name, usage(d.input))
	}
	return out, nil
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// editNote is the line an agent reads when a person edited its call: which
// arguments changed, were added or were removed, and the values they were
// given, so that the agent knows what ran (the code it did not write, the
// source a cell now has). A value is cut at noteValueMax; a secret's value
// is not repeated, nor a URL's password or token.
func editNote(before, after json.RawMessage) string {
	var b, a map[string]json.RawMessage
	_ = json.Unmarshal(before, &b)
	_ = json.Unmarshal(after, &a)
	var changed, added, removed []string
	for k, v := range a {
		ov, ok := b[k]
		switch {
		case !ok:
			added = append(added, k)
		case !bytes.Equal(compactJSON(ov), compactJSON(v)):
			changed = append(changed, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			removed = append(removed, k)
		}
	}
	var parts []string
	for _, p := range []struct {
		verb, to string
		keys     []string
	}{{"changed", " to ", changed}, {"added", " = ", added}, {"removed", "", removed}} {
		if len(p.keys) == 0 {
			continue
		}
		slices.Sort(p.keys)
		words := make([]string, len(p.keys))
		for i, k := range p.keys {
			words[i] = k
			if p.to != "" {
				words[i] += p.to + noteValue(k, a[k])
			}
		}
		parts = append(parts, p.verb+" "+strings.Join(words, ", "))
	}
	what := "left them as they were"
	if len(parts) > 0 {
		what = strings.Join(parts, "; ")
	}
	return "Note: the person supervising at the workbench edited this call's arguments before it ran (" + what + "); the result above is of the edited call."
}

// noteValueMax bounds each value an edit note repeats.
const noteValueMax = 2000

// noteValue is an edited argument's value as the note gives it: its JSON,
// cut, with secrets left out.
func noteValue(key string, v json.RawMessage) string {
	if secretArg(key) {
		return secret.Redacted
	}
	s := redactURLs(string(compactJSON(v)))
	if len(s) > noteValueMax {
		s = strings.ToValidUTF8(s[:noteValueMax], "") + fmt.Sprintf("… (%d more bytes)", len(s)-noteValueMax)
	}
	return s
}

// withEditNote appends the note to a result's text.
func withEditNote(res *sdk.CallToolResult, before, after json.RawMessage) {
	res.Content = append(res.Content, &sdk.TextContent{Text: editNote(before, after)})
}
