package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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
	// Problem, when set, is why the caller could not build the request
	// (arguments it could not read); the preview says so.
	Problem string
}

// Preview roles of the cells shown.
const (
	PreviewCellNew     = "new"     // the cell the call would insert
	PreviewCellGone    = "delete"  // a cell the call would delete
	PreviewCellMoved   = "move"    // the cell the call would move
	PreviewCellRun     = "run"     // the cell the call would run
	PreviewCellContext = "context" // a neighbour, for orientation
)

// CallPreview is what a held call would do. Strings are bounded
// (previewTextMax); Problem is set, and the rest mostly empty, when it could
// not be computed (an index out of range, no notebook): the call then fails
// as usual if it is allowed.
type CallPreview struct {
	Client   string        `json:"client,omitempty"`   // the session's client (name and version)
	Notebook string        `json:"notebook,omitempty"` // the notebook it acts on
	What     string        `json:"what,omitempty"`     // one line: what it does
	Diff     string        `json:"diff,omitempty"`     // unified diff of a cell's source
	Code     string        `json:"code,omitempty"`     // the code that would run
	Language string        `json:"language,omitempty"` // of Code, as the kernel names it
	Cells    []PreviewCell `json:"cells,omitempty"`    // cells inserted, deleted, moved, run, and neighbours
	Facts    []string      `json:"facts,omitempty"`    // state that would be lost
	Problem  string        `json:"problem,omitempty"`  // why no (full) preview
	// CodeCut and DiffCut are the bytes of Code and Diff not carried
	// (past previewCodeMax): a card that shows them says so, and never
	// passes a cut for the end of the code.
	CodeCut int `json:"codeCut,omitempty"`
	DiffCut int `json:"diffCut,omitempty"`
}

// PreviewCell is a cell shown in a preview: Index is its position now (for
// a new cell, the one it would take).
type PreviewCell struct {
	Index  int    `json:"index"`
	ID     string `json:"id,omitempty"`
	Type   string `json:"type"`
	Source string `json:"source"`
	Role   string `json:"role"`
	// SourceCut is the bytes of Source not carried.
	SourceCut int `json:"sourceCut,omitempty"`
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
func (e *Engine) Preview(ctx context.Context, session string, req PreviewRequest) CallPreview {
	p := CallPreview{Client: e.clientOf(session)}
	if req.Problem != "" {
		p.Problem = req.Problem
		return p
	}
	if err := e.preview(ctx, session, req, &p); err != nil {
		p.Problem = err.Error()
	}
	p.bound()
	return p
}

func (e *Engine) preview(ctx context.Context, session string, req PreviewRequest, p *CallPreview) error {
	if req.Op == PreviewRunCode {
		return e.previewCode(session, req, p)
	}
	if req.Op == PreviewNone {
		return nil
	}
	d, err := e.lookup(session, req.Notebook)
	if err != nil {
		return err
	}
	p.Notebook = d.name
	if req.Op == PreviewRestart || req.Op == PreviewUnuse {
		return e.previewKernelState(d, req.Op, p)
	}
	if err := e.ensureFresh(ctx, d, session); err != nil {
		return err
	}
	nb := d.model()
	switch req.Op {
	case PreviewEdit, PreviewOverwrite:
		i, err := resolveCell(nb, d.name, req.Cell, RoleCell)
		if err != nil {
			return err
		}
		c := nb.Cells[i]
		src := req.Source
		what := "overwrite"
		if req.Op == PreviewEdit {
			what = "edit"
			if err := previewEdit(c, i, req); err != nil {
				return err
			}
			if req.All {
				src = strings.ReplaceAll(c.Source, req.Old, req.New)
			} else {
				src = strings.Replace(c.Source, req.Old, req.New, 1)
			}
		}
		p.What = fmt.Sprintf("%s the source of cell %d (id %s)", what, i, c.ID)
		if src == c.Source {
			p.What += ": no change"
			return nil
		}
		p.Diff = cellDiff(i, c.Source, src)
	case PreviewInsert, PreviewInsertRun:
		n := len(nb.Cells)
		at := req.Index
		if at == -1 {
			at = n
		}
		if at < 0 || at > n {
			return &CellIndexError{Notebook: d.name, Index: req.Index, Count: n, Insert: true}
		}
		typ := req.CellType
		if req.Op == PreviewInsertRun {
			typ = notebook.Code
			p.Code, p.Language = req.Source, notebookLanguage(nb)
			p.What = fmt.Sprintf("insert a code cell at index %d and run it on kernel %s", at, short8(d.kernel.id))
		} else {
			if err := validCellType(typ); err != nil {
				return err
			}
			p.What = fmt.Sprintf("insert a %s cell at index %d (the notebook has %d cells)", typ, at, n)
		}
		for i := max(at-previewNeighbours, 0); i < at; i++ {
			p.Cells = append(p.Cells, previewCell(i, nb.Cells[i], PreviewCellContext))
		}
		p.Cells = append(p.Cells, PreviewCell{Index: at, Type: typ, Source: req.Source, Role: PreviewCellNew})
		for i := at; i < min(at+previewNeighbours, n); i++ {
			p.Cells = append(p.Cells, previewCell(i, nb.Cells[i], PreviewCellContext))
		}
	case PreviewDelete:
		positions, err := previewDeleted(nb, d.name, req)
		if err != nil {
			return err
		}
		p.What = fmt.Sprintf("delete %d of %d cells", len(positions), len(nb.Cells))
		for _, i := range positions {
			p.Cells = append(p.Cells, previewCell(i, nb.Cells[i], PreviewCellGone))
		}
	case PreviewMove:
		from, err := resolveCell(nb, d.name, req.Cell, RoleSource)
		if err != nil {
			return err
		}
		to, err := resolveCell(nb, d.name, req.Target, RoleTarget)
		if err != nil {
			return err
		}
		c := nb.Cells[from]
		p.What = fmt.Sprintf("move cell %d (id %s) to index %d", from, c.ID, to)
		if from == to {
			p.What += ": no change"
		}
		p.Cells = append(p.Cells, previewCell(from, c, PreviewCellMoved))
		if from != to {
			p.Cells = append(p.Cells, previewCell(to, nb.Cells[to], PreviewCellContext))
		}
	case PreviewRunCell:
		i, err := resolveCell(nb, d.name, req.Cell, RoleCell)
		if err != nil {
			return err
		}
		c := nb.Cells[i]
		if c.Type != notebook.Code {
			p.What = fmt.Sprintf("cell %d (id %s) is a %s cell: running it runs no code", i, c.ID, c.Type)
			return nil
		}
		p.What = fmt.Sprintf("run cell %d (id %s) on kernel %s", i, c.ID, short8(d.kernel.id))
		p.Code, p.Language = c.Source, notebookLanguage(nb)
	default:
		return fmt.Errorf("no preview for operation %d", req.Op)
	}
	return nil
}

// previewEdit checks an edit as EditCellSource would.
func previewEdit(c *notebook.Cell, i int, req PreviewRequest) error {
	switch {
	case req.Old == "":
		return &EditError{Problem: EditEmptyOld}
	case req.Old == req.New:
		return &EditError{Problem: EditSame}
	}
	switch n := strings.Count(c.Source, req.Old); {
	case n == 0:
		return &EditError{Problem: EditNotFound, Index: i, CellID: c.ID, Source: excerpt(c.Source, 200)}
	case n > 1 && !req.All:
		return &EditError{Problem: EditAmbiguous, Index: i, CellID: c.ID, Count: n}
	}
	return nil
}

// previewDeleted resolves the cells a delete names, as DeleteCells would,
// in the order given.
func previewDeleted(nb *notebook.Notebook, name string, req PreviewRequest) ([]int, error) {
	if len(req.IDs) == 0 && len(req.Indices) == 0 {
		return nil, &NoCellError{Several: true}
	}
	var positions []int
	if len(req.IDs) > 0 {
		for _, id := range req.IDs {
			i, err := findCell(nb, name, id, RoleCell)
			if err != nil {
				return nil, err
			}
			positions = append(positions, i)
		}
	} else {
		for _, i := range req.Indices {
			if err := checkIndex(nb, name, i, RoleCell); err != nil {
				return nil, err
			}
			positions = append(positions, i)
		}
	}
	slices.Sort(positions)
	return slices.Compact(positions), nil
}

// previewCode says where code sent to a kernel would run, as ExecuteCode
// chooses: the session's sandbox, else the kernel named, else the current
// notebook's kernel.
func (e *Engine) previewCode(session string, req PreviewRequest, p *CallPreview) error {
	p.Code = req.Source
	if e.sandboxes != nil {
		r := e.sandboxes
		r.mu.Lock()
		name := r.active[session]
		en := r.byName[name]
		r.mu.Unlock()
		if en != nil {
			p.What = fmt.Sprintf("run code on sandbox %s (%s)", en.name, en.variant)
			p.Language = "python"
			return nil
		}
	}
	if req.KernelID != "" {
		p.What = "run code on kernel " + short8(req.KernelID)
		e.mu.RLock()
		for _, d := range e.docs {
			if d.kernel.id == req.KernelID {
				p.Language = notebookLanguage(d.model())
				break
			}
		}
		e.mu.RUnlock()
		return nil
	}
	d, err := e.lookup(session, "")
	if err != nil {
		return err
	}
	p.Notebook = d.name
	p.What = fmt.Sprintf("run code on kernel %s (notebook %s); not saved to the notebook", short8(d.kernel.id), d.name)
	p.Language = notebookLanguage(d.model())
	return nil
}

// previewKernelState lists what a restart or an unuse would lose.
func (e *Engine) previewKernelState(d *document, op PreviewOp, p *CallPreview) error {
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

func previewCell(i int, c *notebook.Cell, role string) PreviewCell {
	return PreviewCell{Index: i, ID: c.ID, Type: c.Type, Source: c.Source, Role: role}
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

// bound cuts every string of the preview to previewTextMax.
func (p *CallPreview) bound() {
	for _, s := range []*string{&p.What, &p.Problem} {
		*s = cutText(*s)
	}
	p.Code, p.CodeCut = cutBytes(p.Code, previewCodeMax)
	p.Diff, p.DiffCut = cutBytes(p.Diff, previewCodeMax)
	for i := range p.Cells {
		c := &p.Cells[i]
		limit := previewCodeMax
		if c.Role == PreviewCellContext {
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
