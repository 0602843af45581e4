package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Previews: what a held call would do, computed from its arguments without
// doing it, so that the person asked to allow it sees the facts (the diff of
// a cell, the cells that would go, the code that would run, the state a
// restart would lose) rather than raw arguments.
//
// The engine does not know tools: the caller that holds the call (mcp/)
// turns the call's arguments into a PreviewRequest in the engine's terms and
// passes it in CallStart; the engine computes the CallPreview only when the
// call is actually held, and publishes it on EvCallHeld.

// PreviewOp is what a call would do to a notebook or a kernel.
type PreviewOp int

// Preview operations.
const (
	PreviewNone      PreviewOp = iota
	PreviewEdit                // replace Old by New in Cell's source (All: every occurrence)
	PreviewOverwrite           // replace Cell's whole source by Source
	PreviewInsert              // insert a CellType cell of Source at Index (-1 appends)
	PreviewDelete              // delete the cells IDs name, else Indices
	PreviewMove                // move Cell to where Target is
	PreviewRunCell             // run Cell of the session's current notebook
	PreviewInsertRun           // insert a code cell of Source at Index, then run it
	PreviewRunCode             // run Source on KernelID, else the session's sandbox or notebook kernel
	PreviewRestart             // restart the notebook's kernel
	PreviewUnuse               // release the notebook (and its kernel when no one else uses it)

	// The operations that decide where code runs (preview_where.go).
	PreviewUseSandbox    // run the session's code on sandbox Sandbox.Name ("": on kernels)
	PreviewLaunchSandbox // launch the sandbox Sandbox describes
	PreviewConnect       // switch to the Jupyter server at URL
)

// PreviewRequest describes a call in the engine's terms. Fields not used by
// Op are ignored.
type PreviewRequest struct {
	Op       PreviewOp
	Notebook string // "" is the session's current notebook
	Cell     CellRef
	Target   CellRef
	Index    int
	CellType string
	Source   string
	Old, New string
	All      bool
	Indices  []int
	IDs      []string
	KernelID string
	Sandbox  SandboxSpec
	URL      string
	// Problem, when set, is why the caller could not build the request
	// (arguments it could not read); the preview says so.
	Problem string
}

// previewTextMax bounds the sentences of a preview and the neighbours shown
// for orientation: they travel on an event to every workbench.
const previewTextMax = 16 << 10

// previewCodeMax bounds what the call would run or write (its code, diff,
// and the cells it inserts, deletes, moves or runs). A person approves
// every character of it, so it is carried whole up to a size no tool call
// reaches in practice (an HTTP request is at most 4 MiB by default); past
// it the preview says how much was left out, rather than ending the code
// with words that read as part of it.
const previewCodeMax = 1 << 20

// previewNeighbours is how many cells around an insertion are shown.
const previewNeighbours = 1

// Preview computes what a call described by req would do for session,
// reading the notebook as it is now (checked for changes on disk first) and
// changing nothing.
func (e *Engine) Preview(ctx context.Context, session string, req PreviewRequest) event.CallPreview {
	p := event.CallPreview{Client: e.clientOf(session)}
	if req.Problem != "" {
		p.Problem = req.Problem
		return p
	}
	if err := e.preview(ctx, session, req, &p); err != nil {
		// A change the call would refuse is previewed as that refusal, in
		// the words the call gets.
		p.Problem, p.Refused = err.Error(), IsUserError(err)
	}
	capPreview(&p)
	return p
}

func (e *Engine) preview(ctx context.Context, session string, req PreviewRequest, p *event.CallPreview) error {
	if req.Op == PreviewRunCode {
		return e.previewCode(session, req, p)
	}
	if req.Op == PreviewNone {
		return nil
	}
	if ok, err := e.previewWhere(session, req, p); ok {
		return err
	}
	d, err := e.lookup(session, req.Notebook)
	if err != nil {
		return err
	}
	on := e.on(d)
	p.Notebook, p.Path, p.Bound = d.name, d.path, on.notebookFacts()
	if req.Op == PreviewRestart || req.Op == PreviewUnuse {
		return e.previewKernelState(d, req.Op, p)
	}
	if err := e.ensureFresh(ctx, d, session); err != nil {
		return err
	}
	nb := d.model()
	// Each preview is the change the call makes, made on a copy.
	switch req.Op {
	case PreviewEdit, PreviewOverwrite:
		var m cellMutation = &overwriteSource{onNotebook: on, ref: req.Cell, source: req.Source}
		what := "overwrite"
		if req.Op == PreviewEdit {
			m, what = &editSource{onNotebook: on, ref: req.Cell, old: req.Old, new: req.New, all: req.All}, "edit"
		}
		err := tryOnCopy(nb, m)
		p.Bound = m.bound()
		if err != nil && !errors.Is(err, errUnchanged) {
			return err
		}
		var edit SourceEdit
		switch m := m.(type) {
		case *overwriteSource:
			edit = m.edit
		case *editSource:
			edit = m.edit
		}
		p.What = fmt.Sprintf("%s the source of cell %d (id %s)", what, edit.Cell.Index, edit.Cell.ID)
		if err != nil {
			p.What += ": no change"
			return nil
		}
		p.Diff = edit.Diff
	case PreviewInsert, PreviewInsertRun:
		m := &insertCell{onNotebook: on, index: req.Index, cellType: req.CellType, source: req.Source}
		if req.Op == PreviewInsertRun {
			m.cellType, m.run = notebook.Code, true
		}
		err := tryOnCopy(nb, m)
		p.Bound = m.bound()
		if err != nil {
			return err
		}
		at, n := m.inserted.Index, len(nb.Cells)
		if m.run {
			p.Code, p.Language = req.Source, notebookLanguage(nb)
			p.What = fmt.Sprintf("insert a code cell at index %d and run it on kernel %s", at, short8(d.kernel.id))
		} else {
			p.What = fmt.Sprintf("insert a %s cell at index %d (the notebook has %d cells)", m.cellType, at, n)
		}
		for i := max(at-previewNeighbours, 0); i < at; i++ {
			p.Cells = append(p.Cells, previewCell(i, nb.Cells[i], event.PreviewCellContext))
		}
		// The new cell's id is made when it is inserted: none is shown.
		p.Cells = append(p.Cells, event.PreviewCell{Index: at, Type: m.cellType, Source: req.Source, Role: event.PreviewCellNew})
		for i := at; i < min(at+previewNeighbours, n); i++ {
			p.Cells = append(p.Cells, previewCell(i, nb.Cells[i], event.PreviewCellContext))
		}
	case PreviewDelete:
		m := &deleteCells{onNotebook: on, indices: req.Indices, ids: req.IDs}
		err := tryOnCopy(nb, m)
		p.Bound = m.bound()
		if err != nil {
			return err
		}
		p.What = fmt.Sprintf("delete %d of %d cells", len(m.deleted), len(nb.Cells))
		gone := slices.SortedFunc(slices.Values(m.deleted), func(a, b CellInfo) int { return a.Index - b.Index })
		for _, c := range gone {
			p.Cells = append(p.Cells, previewCell(c.Index, nb.Cells[c.Index], event.PreviewCellGone))
		}
	case PreviewMove:
		m := &moveCell{onNotebook: on, src: req.Cell, dst: req.Target}
		err := tryOnCopy(nb, m)
		p.Bound = m.bound()
		if err != nil && !errors.Is(err, errUnchanged) {
			return err
		}
		from, to := m.from, m.moved.Index
		c := nb.Cells[from]
		p.What = fmt.Sprintf("move cell %d (id %s) to index %d", from, c.ID, to)
		if from == to {
			p.What += ": no change"
		}
		p.Cells = append(p.Cells, previewCell(from, c, event.PreviewCellMoved))
		if from != to {
			p.Cells = append(p.Cells, previewCell(to, nb.Cells[to], event.PreviewCellContext))
		}
	case PreviewRunCell:
		m := &clearOutputs{onNotebook: on, ref: req.Cell, forRun: true}
		err := tryOnCopy(nb, m)
		p.Bound = m.bound()
		if m.cell.ID != "" {
			p.What = fmt.Sprintf("run cell %d (id %s) on kernel %s", m.cell.Index, m.cell.ID, short8(d.kernel.id))
		}
		if err != nil && !errors.Is(err, errUnchanged) {
			if m.cell.ID != "" && m.cell.Type != notebook.Code {
				p.What = fmt.Sprintf("run cell %d (id %s), a %s cell", m.cell.Index, m.cell.ID, m.cell.Type)
			}
			return err
		}
		p.Code, p.Language = m.cell.Source, notebookLanguage(nb)
	default:
		return fmt.Errorf("no preview for operation %d", req.Op)
	}
	return nil
}

// previewCode says where code sent to a kernel would run, as ExecuteCode
// chooses: the session's sandbox, else the kernel named, else the current
// notebook's kernel.
func (e *Engine) previewCode(session string, req PreviewRequest, p *event.CallPreview) error {
	p.Code = req.Source
	t, err := e.codeTarget(session, req.KernelID)
	if err != nil {
		return err
	}
	p.Bound = t.bound()
	switch {
	case t.sandbox != nil:
		p.What = fmt.Sprintf("run code on sandbox %s (%s)", t.sandbox.name, t.sandbox.variant)
		p.Language = "python"
	case t.doc != nil:
		d := t.doc
		p.Notebook, p.Path = d.name, d.path
		p.What = fmt.Sprintf("run code on kernel %s (notebook %s); not saved to the notebook", short8(d.kernel.id), d.name)
		p.Language = notebookLanguage(d.model())
	default:
		p.What = "run code on kernel " + short8(t.kernelID)
		e.mu.RLock()
		for _, d := range e.docs {
			if d.kernel.id == t.kernelID {
				p.Language = notebookLanguage(d.model())
				break
			}
		}
		e.mu.RUnlock()
	}
	return nil
}

// previewKernelState lists what a restart or an unuse would lose.
func (e *Engine) previewKernelState(d *document, op PreviewOp, p *event.CallPreview) error {
	k := d.kernel
	e.mu.RLock()
	users, running := k.users, len(k.execs)
	var cells []string
	for x := range k.execs {
		if x.cellID != "" {
			cells = append(cells, x.cellID)
		}
	}
	e.mu.RUnlock()
	slices.Sort(cells)
	state := k.conn.State()
	if op == PreviewRestart {
		p.What = fmt.Sprintf("restart kernel %s of notebook %s", short8(k.id), d.name)
		p.Facts = append(p.Facts, fmt.Sprintf("kernel %s (%s): every variable, import and open file in it is lost", k.id, state))
	} else {
		p.What = fmt.Sprintf("stop using notebook %s (%s)", d.name, d.path)
		if users > 1 {
			p.Facts = append(p.Facts, fmt.Sprintf("kernel %s is kept: %d notebooks use it", k.id, users))
		} else {
			p.Facts = append(p.Facts, fmt.Sprintf("kernel %s (%s) is released: shut down unless another client uses it, its variables then lost", k.id, state))
		}
	}
	switch {
	case running == 0:
		p.Facts = append(p.Facts, "no execution is running")
	case len(cells) > 0:
		p.Facts = append(p.Facts, fmt.Sprintf("%d running execution(s) stop: cells %s", running, strings.Join(cells, ", ")))
	default:
		p.Facts = append(p.Facts, fmt.Sprintf("%d running execution(s) stop", running))
	}
	p.Facts = append(p.Facts, fmt.Sprintf("the notebook has %d cells; the file itself is not changed", len(d.model().Cells)))
	return nil
}

func previewCell(i int, c *notebook.Cell, role string) event.PreviewCell {
	return event.PreviewCell{Index: i, ID: c.ID, Type: c.Type, Source: c.Source, Role: role}
}

// notebookLanguage is the language a notebook's kernel speaks, from its
// metadata (language_info, else the kernelspec), "" when it does not say.
func notebookLanguage(nb *notebook.Notebook) string {
	var md struct {
		LanguageInfo struct {
			Name string `json:"name"`
		} `json:"language_info"`
		KernelSpec struct {
			Language string `json:"language"`
		} `json:"kernelspec"`
	}
	if len(nb.Metadata) == 0 || json.Unmarshal(nb.Metadata, &md) != nil {
		return ""
	}
	if md.LanguageInfo.Name != "" {
		return md.LanguageInfo.Name
	}
	if md.KernelSpec.Language != "" {
		return md.KernelSpec.Language
	}
	if strings.HasPrefix(kernelSpecName(nb), "python") {
		return "python"
	}
	return ""
}

func short8(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// capPreview cuts the sentences of p to previewTextMax and what it would
// run or write to previewCodeMax, saying how much was left out.
func capPreview(p *event.CallPreview) {
	for _, s := range []*string{&p.What, &p.Problem} {
		*s = cutText(*s)
	}
	p.Code, p.CodeCut = cutBytes(p.Code, previewCodeMax)
	p.Diff, p.DiffCut = cutBytes(p.Diff, previewCodeMax)
	for i := range p.Cells {
		c := &p.Cells[i]
		limit := previewCodeMax
		if c.Role == event.PreviewCellContext {
			limit = previewTextMax
		}
		c.Source, c.SourceCut = cutBytes(c.Source, limit)
	}
}

// cutBytes cuts s to at most n bytes, on a rune boundary, and says how many
// bytes were left out.
func cutBytes(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], len(s) - cut
}

func cutText(s string) string {
	if len(s) <= previewTextMax {
		return s
	}
	return excerpt(s, previewTextMax) + fmt.Sprintf("\n… %d more bytes", len(s)-previewTextMax)
}
