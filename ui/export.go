package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/secret"
)

// Copy (C) and export (E) hand calls to the person as JSON: the request as
// an MCP tools/call, the result as the client read it (text content,
// structuredContent, _meta, isError), and what the workbench knows around
// it (session, status, times). Every string goes through the secret
// policy of engine/secret, and the workbench's own bearer token is
// replaced wherever it appears: an export is a file that gets attached to
// bug reports.

// exportedCall is one call as copied or exported.
type exportedCall struct {
	ID         string           `json:"id"`
	Session    string           `json:"session"`
	ResendOf   string           `json:"resendOf,omitempty"` // the call a workbench call resent
	Tool       string           `json:"tool"`
	Status     event.CallStatus `json:"status"`
	Started    time.Time        `json:"started"`
	Finished   *time.Time       `json:"finished,omitempty"`
	DurationMs float64          `json:"durationMs"`
	// HeldMs is the part of DurationMs the call waited for a person.
	HeldMs float64 `json:"heldMs,omitempty"`
	// CellError names what the code the call ran raised.
	CellError string          `json:"cellError,omitempty"`
	Request   exportedRequest `json:"request"`
	Result    *exportedResult `json:"result,omitempty"`
	// Error is a protocol-level error or the reason the call was refused.
	Error string `json:"error,omitempty"`
	// Cut counts the bytes of each part the workbench did not keep (it
	// holds bounded copies): the part above is then shorter than the
	// agent's.
	Cut map[string]int `json:"cut,omitempty"`
}

// exportedRequest is the request as an MCP tools/call.
type exportedRequest struct {
	Method string         `json:"method"`
	Params exportedParams `json:"params"`
}

type exportedParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// exportedResult is the result as the client read it. The workbench keeps
// how many images the content had, not their bytes.
type exportedResult struct {
	Content           []exportedContent `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	Meta              json.RawMessage   `json:"_meta,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
	Images            int               `json:"images,omitempty"`
}

type exportedContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// exportCall turns a call into its exported form, redacted; known are the
// secrets to replace wherever they appear.
func exportCall(c *observe.Call, known []string) exportedCall {
	args := json.RawMessage(`{}`)
	if len(c.Args) > 0 {
		args = secret.RedactJSON(c.Args, known...)
	}
	e := exportedCall{
		ID:         c.ID,
		Session:    c.Session,
		ResendOf:   c.ResendOf,
		Tool:       c.Tool,
		Status:     c.Status,
		Started:    c.Started,
		DurationMs: float64(c.Duration.Microseconds()) / 1000,
		HeldMs:     float64(c.Held.Microseconds()) / 1000,
		CellError:  c.CellError,
		Request:    exportedRequest{Method: "tools/call", Params: exportedParams{Name: c.Tool, Arguments: args}},
		Error:      secret.RedactText(c.Error, known...),
	}
	if !c.Finished.IsZero() {
		f := c.Finished
		e.Finished = &f
	}
	cut := map[string]int{}
	for name, n := range map[string]int{"arguments": c.ArgsCut, "text": c.TextCut, "structuredContent": c.StructuredCut, "_meta": c.MetaCut} {
		if n > 0 {
			cut[name] = n
		}
	}
	if len(cut) > 0 {
		e.Cut = cut
	}
	if c.Status == event.CallRunning || c.Status == event.CallHeld || c.Error != "" {
		// No result: the call has not answered, or failed without one.
		return e
	}
	r := &exportedResult{Content: []exportedContent{}, IsError: c.IsError, Images: c.Images}
	if c.Text != "" {
		r.Content = append(r.Content, exportedContent{Type: "text", Text: secret.RedactText(c.Text, known...)})
	}
	if len(c.Structured) > 0 {
		r.StructuredContent = secret.RedactJSON(c.Structured, known...)
	}
	if len(c.Meta) > 0 {
		r.Meta = secret.RedactJSON(c.Meta, known...)
	}
	e.Result = r
	return e
}

// knownSecrets are the secrets the workbench itself knows of.
func (m *Model) knownSecrets() []string {
	if m.info.Token == "" {
		return nil
	}
	return []string{m.info.Token}
}

// copyCallCmd puts the selected call, as indented JSON, on the clipboard.
func (m Model) copyCallCmd() tea.Cmd {
	c := m.selectedCall()
	if c == nil {
		return func() tea.Msg { return actionDoneMsg{"copy", errors.New("no call selected")} }
	}
	// The call is copied by value: the state goes on changing it on the
	// UI goroutine while the command runs on another.
	call, known, copyFn := *c, m.knownSecrets(), m.copyFn
	return func() tea.Msg {
		if copyFn == nil {
			return actionDoneMsg{"copy", errors.New("no clipboard on this terminal")}
		}
		b, err := json.MarshalIndent(exportCall(&call, known), "", "  ")
		if err != nil {
			return actionDoneMsg{"copy", err}
		}
		return actionDoneMsg{fmt.Sprintf("call %s (%s) copied to the clipboard as JSON, %d bytes", call.ID, call.Tool, len(b)), copyFn(string(b))}
	}
}

// exportCmd writes the calls the filter shows to a JSON Lines file, one
// call a line, oldest first.
func (m Model) exportCmd() tea.Cmd {
	vis := m.calls.visible(&m)
	calls := make([]observe.Call, len(vis))
	for i, c := range vis {
		calls[i] = *c
	}
	known, dir, at := m.knownSecrets(), m.exportDir, m.now()
	return func() tea.Msg {
		if len(calls) == 0 {
			return actionDoneMsg{"export", errors.New("no calls to export")}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for i := range calls {
			if err := enc.Encode(exportCall(&calls[i], known)); err != nil {
				return actionDoneMsg{"export", err}
			}
		}
		path, err := writeExport(dir, at, buf.Bytes())
		if err != nil {
			return actionDoneMsg{"export", err}
		}
		return actionDoneMsg{fmt.Sprintf("exported %d %s to %s", len(calls), plural(len(calls), "call", "calls"), path), nil}
	}
}

// writeExport writes data to a new file jupyter-mcp-calls-TIME.jsonl in
// dir (the working directory when empty; made, readable by its owner only,
// when missing), or in the temporary directory when dir cannot be written.
// It never overwrites a file, and the file is readable by its owner only:
// results may hold what the notebooks hold.
func writeExport(dir string, at time.Time, data []byte) (string, error) {
	dirs := []string{dir, os.TempDir()}
	if dir == "" {
		dirs[0] = "."
	} else {
		_ = os.MkdirAll(dir, 0o700)
	}
	base := "jupyter-mcp-calls-" + at.Format("20060102-150405")
	var firstErr error
	for _, d := range dirs {
		for n := 1; n <= 100; n++ {
			name := base + ".jsonl"
			if n > 1 {
				name = fmt.Sprintf("%s-%d.jsonl", base, n)
			}
			path := filepath.Join(d, name)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				break
			}
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(path)
				return "", err
			}
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			return path, nil
		}
	}
	if firstErr == nil {
		firstErr = errors.New("no free file name")
	}
	return "", firstErr
}
