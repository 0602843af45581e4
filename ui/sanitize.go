package ui

import (
	"encoding/json"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui/termtext"
)

// Where the sanitizer sits.
//
// Everything the workbench draws that came from outside reaches the Model in
// one of three ways: engine events (live, from an attached server's feed, or
// from a recording: all three arrive as eventsMsg), the header info its
// backend gives once, and the error texts of the person's actions. Each is
// sanitized as it enters the Model (Update, NewModel), before the state
// projection keeps it and long before any pane cuts or wraps it, so a cut can
// never split an escape sequence and no pane has to remember to sanitize.
// JSON kept raw (arguments, structuredContent, _meta) is sanitized string by
// string, so the tree and the k=v summaries decode clean values.
//
// Behind that, fit and the pane titles sanitize every line once more as it is
// drawn: a string that reached a pane some other way (a future field or
// message) is still drawn harmless, at worst cut where a sequence was.
// TestSanitizeEventCoversEveryField fills every string of every event
// payload by reflection, so a field added to engine's events without a line
// here fails a test rather than reaching the screen unsanitized.
//
// The sanitizer copies on write: the engine's events are shared with the
// feed and the recorder, so a changed payload is a new copy and a clean one
// is passed on as it is, without allocating.

// sanitizeEvent returns ev with every string sanitized for the terminal.
func sanitizeEvent(ev event.Event) event.Event {
	ev.Type = event.EventType(termtext.String(string(ev.Type)))
	if ev.Call != nil {
		ev.Call = sanitizeCall(ev.Call)
	}
	if ev.Session != nil {
		if s := (event.SessionEvent{ID: termtext.Name(ev.Session.ID), Client: termtext.Name(ev.Session.Client)}); s != *ev.Session {
			ev.Session = heapCopy(s)
		}
	}
	if ev.Notebook != nil {
		ev.Notebook = sanitizeNotebook(ev.Notebook)
	}
	if ev.Exec != nil {
		ev.Exec = sanitizeExec(ev.Exec)
	}
	if ev.Kernel != nil {
		k := *ev.Kernel
		if n, l := cleanNames(&k.ID, &k.Name, &k.State), cleanStrings(&k.Lost); n || l {
			ev.Kernel = heapCopy(k)
		}
	}
	if ev.Sandbox != nil {
		sb := *ev.Sandbox
		if cleanNames(&sb.Name, &sb.ID, &sb.Variant, &sb.State) {
			ev.Sandbox = heapCopy(sb)
		}
	}
	if ev.Server != nil {
		sv := *ev.Server
		changed := cleanStrings(&sv.JupyterURL, &sv.ApprovalMode, &sv.Jupyter, &sv.JupyterCause, &sv.JupyterProblem)
		copied := false
		for i := range sv.Allowed {
			a := sv.Allowed[i]
			if cleanNames(&a.Session, &a.Tool) {
				if !copied {
					sv.Allowed = append([]event.AllowedTool(nil), sv.Allowed...)
					copied = true
				}
				sv.Allowed[i], changed = a, true
			}
		}
		if changed {
			ev.Server = heapCopy(sv)
		}
	}
	return ev
}

// heapCopy returns a pointer to a heap copy of v. The payloads are edited in
// a copy on the stack and moved to the heap only when something changed, so
// a clean event costs no allocation.
func heapCopy[T any](v T) *T {
	p := new(T)
	*p = v
	return p
}

// cleanStrings sanitizes each string in place and reports whether any
// changed. Callers pass fields of their own copy.
func cleanStrings(ps ...*string) bool {
	changed := false
	for _, p := range ps {
		if c := termtext.String(*p); c != *p {
			*p, changed = c, true
		}
	}
	return changed
}

// cleanNames is cleanStrings for names and one-line texts drawn as they
// are, never as rendered output: a hidden character is shown as its marker
// (termtext.Name), so no colour of the agent's reaches the Calls list or a
// title, and nothing is dropped from them.
func cleanNames(ps ...*string) bool { return cleanWith(termtext.Name, ps) }

// cleanCode is cleanStrings for source text (code, cell sources, diffs):
// every character kept, the hidden ones shown as markers (termtext.Code).
func cleanCode(ps ...*string) bool { return cleanWith(termtext.Code, ps) }

func cleanWith(f func(string) string, ps []*string) bool {
	changed := false
	for _, p := range ps {
		if c := f(*p); c != *p {
			*p, changed = c, true
		}
	}
	return changed
}

// cleanJSON sanitizes the strings of a raw JSON value in place and reports
// whether it changed.
func cleanJSON(p *json.RawMessage) bool { return cleanJSONWith(termtext.JSON, p) }

// cleanArgs is cleanJSON for a call's arguments, which are the agent's
// words and a held call's code: kept whole, a hidden character written as
// its JSON escape (termtext.JSONCode), so that the arguments view draws
// \u001b where String would drop the rest of a line.
func cleanArgs(p *json.RawMessage) bool { return cleanJSONWith(termtext.JSONCode, p) }

func cleanJSONWith(f func([]byte) []byte, p *json.RawMessage) bool {
	if len(*p) == 0 {
		return false
	}
	c := f(*p)
	if len(c) == len(*p) && &c[0] == &(*p)[0] {
		return false
	}
	*p = c
	return true
}

func sanitizeCall(c *event.CallEvent) *event.CallEvent {
	cc := *c
	// DecidedBy names who decided (a client's name among it), CellError
	// the exception the code raised: drawn on one line as they are, like
	// the other names.
	changed := cleanNames(&cc.ID, &cc.Session, &cc.Tool, &cc.CellID, &cc.Notebook, &cc.UndoOf, &cc.ResendOf, &cc.DecidedBy, &cc.CellError)
	if cleanStrings(&cc.Progress, &cc.Text, &cc.Error, &cc.SchemaProblem, &cc.Summary) {
		changed = true
	}
	if cc.Task != nil {
		t := *cc.Task
		if cleanNames(&t.ID, &t.State) {
			cc.Task, changed = &t, true
		}
	}
	st := string(cc.Status)
	if cleanStrings(&st) {
		cc.Status, changed = event.CallStatus(st), true
	}
	if cleanArgs(&cc.Args) {
		changed = true
	}
	for _, p := range []*json.RawMessage{&cc.Structured, &cc.Meta} {
		if cleanJSON(p) {
			changed = true
		}
	}
	if cc.Preview != nil {
		if p, ok := sanitizePreview(*cc.Preview); ok {
			cc.Preview, changed = heapCopy(p), true
		}
	}
	if !changed {
		return c
	}
	return heapCopy(cc)
}

// sanitizePreview returns a sanitized copy of a held call's preview and
// whether it differs.
func sanitizePreview(p event.CallPreview) (event.CallPreview, bool) {
	// What the call would run or write is source; the rest are the
	// engine's sentences around names the agent chose: neither may style
	// the card, or lose a character from it.
	changed := cleanNames(&p.Client, &p.Notebook, &p.Path, &p.What, &p.Language, &p.Problem, &p.Changed)
	if cleanCode(&p.Diff, &p.Code) {
		changed = true
	}
	if p.Bound != nil {
		// What the call is bound to is the engine's to check, not the
		// screen's to draw (the card shows the same facts).
		p.Bound, changed = nil, true
	}
	cellsCopied := false
	for i := range p.Cells {
		c := p.Cells[i]
		if n, src := cleanNames(&c.ID, &c.Type, &c.Role), cleanCode(&c.Source); n || src {
			if !cellsCopied {
				p.Cells = append([]event.PreviewCell(nil), p.Cells...)
				cellsCopied = true
			}
			p.Cells[i], changed = c, true
		}
	}
	factsCopied := false
	for i, f := range p.Facts {
		if c := termtext.Name(f); c != f {
			if !factsCopied {
				p.Facts = append([]string(nil), p.Facts...)
				factsCopied = true
			}
			p.Facts[i], changed = c, true
		}
	}
	return p, changed
}

func sanitizeNotebook(n *event.NotebookEvent) *event.NotebookEvent {
	nn := *n
	changed := cleanNames(&nn.Name, &nn.Path, &nn.KernelID, &nn.Session)
	op := string(nn.Op)
	if cleanStrings(&op) {
		nn.Op, changed = event.NotebookOp(op), true
	}
	idsCopied := false
	for i, id := range nn.CellIDs {
		if c := termtext.Name(id); c != id {
			if !idsCopied {
				nn.CellIDs = append([]string(nil), nn.CellIDs...)
				idsCopied = true
			}
			nn.CellIDs[i], changed = c, true
		}
	}
	changesCopied := false
	for i, c := range nn.ChangedCells {
		kind := string(c.How)
		if cleanNames(&c.ID, &kind) {
			c.How = event.HowChanged(kind)
			if !changesCopied {
				nn.ChangedCells = append([]event.ChangedCell(nil), nn.ChangedCells...)
				changesCopied = true
			}
			nn.ChangedCells[i], changed = c, true
		}
	}
	cellsCopied := false
	for i := range nn.Cells {
		if cell, ok := sanitizeCell(nn.Cells[i]); ok {
			if !cellsCopied {
				nn.Cells = append([]event.CellSnapshot(nil), nn.Cells...)
				cellsCopied = true
			}
			nn.Cells[i], changed = cell, true
		}
	}
	if !changed {
		return n
	}
	return heapCopy(nn)
}

// sanitizeCell returns a sanitized copy of c and whether it differs: its
// source as source (every character shown), its outputs as rendered text
// (their colours kept).
func sanitizeCell(c event.CellSnapshot) (event.CellSnapshot, bool) {
	changed := cleanNames(&c.ID, &c.Type)
	if cleanCode(&c.Source) {
		changed = true
	}
	copied := false
	for i := range c.Outputs {
		if o, ok := sanitizeOutput(c.Outputs[i]); ok {
			if !copied {
				c.Outputs = append([]event.OutputSnapshot(nil), c.Outputs...)
				copied = true
			}
			c.Outputs[i], changed = o, true
		}
	}
	return c, changed
}

// sanitizeOutput returns a sanitized copy of o and whether it differs. An
// image's bytes are pixels, drawn as half-blocks, never as text.
func sanitizeOutput(o event.OutputSnapshot) (event.OutputSnapshot, bool) {
	changed := cleanStrings(&o.Kind, &o.Name, &o.Text, &o.MimeType, &o.EName, &o.EValue, &o.URI)
	if o.Cut != nil {
		c := *o.Cut
		if cleanStrings(&c.URI) {
			o.Cut, changed = &c, true
		}
	}
	return o, changed
}

func sanitizeExec(x *event.ExecEvent) *event.ExecEvent {
	xx := *x
	changed := cleanNames(&xx.ID, &xx.Notebook, &xx.CellID, &xx.KernelID, &xx.SandboxID, &xx.CallID, &xx.Status)
	if cleanCode(&xx.Code) {
		changed = true
	}
	if xx.Output != nil {
		if o, ok := sanitizeOutput(*xx.Output); ok {
			xx.Output, changed = heapCopy(o), true
		}
	}
	if !changed {
		return x
	}
	return heapCopy(xx)
}

// sanitizeInfo returns the header info fit to draw. The token is left as it
// is: it is copied, not drawn (the header shows it masked, through fit).
func sanitizeInfo(info observe.HeaderInfo) observe.HeaderInfo {
	cleanStrings(&info.Endpoint, &info.JupyterURL, &info.Mode, &info.Version)
	return info
}
