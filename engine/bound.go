package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Approval is bound to what was shown. A held call's preview carries the
// facts that decide what the call does (event.CallPreview.Bound): the
// notebook and its file, where its code runs, the cells it acts on and
// their sources in full. They are made by the change itself (cellchanges.go:
// the preview applies the call's own change to a copy) or by the choice of
// where code runs (codeTarget), and made again, the same way, as the call
// runs: a cell change compares them inside its commit, under the
// notebook's writeMu, after the file was checked and on the very notebook
// that is saved, and a run of the cell runs the source compared there;
// code sent to a kernel or a sandbox goes to the target that was compared,
// never to one looked up again. When a fact differs, nothing is changed or
// run: the call is held again with a fresh preview that says what changed
// (calls.Registry.Rehold), and made again from the start once allowed.

// What a bound fact names, in the words the person reads.
const (
	factNotebook = "the notebook"
	factRunsOn   = "where the code runs"
	factCells    = "which cells it acts on"
	factSources  = "the source"
	factPlace    = "where the new cell goes"
)

// shownChanged is the check's finding: what a held call would do is no
// longer what its person was shown. It never reaches the caller: asShown
// holds the call again.
type shownChanged struct{ what string }

func (e *shownChanged) Error() string {
	return "what the call would do changed after it was shown: " + e.what
}

// asShown runs do, which makes a call's change or run after checking it
// against what the call was shown (stillShown). When the check finds a
// change, the call is held again with a fresh preview and do runs again
// once a person allows it; a denial (or a call held again too often) is
// the error.
func (e *Engine) asShown(ctx context.Context, do func() error) error {
	for {
		err := do()
		var changed *shownChanged
		if !errors.As(err, &changed) || e.calls == nil {
			return err
		}
		if err := e.calls.Rehold(ctx, changed.what); err != nil {
			return err
		}
	}
}

// stillShown checks the facts of what the call in ctx would do now against
// those its person was shown; nil when it was not held with a preview.
func stillShown(ctx context.Context, now []event.BoundFact) error {
	shown := calls.ShownOf(ctx)
	if shown == nil {
		return nil
	}
	if what := changedFacts(shown.Bound, now); what != "" {
		return &shownChanged{what: what}
	}
	return nil
}

// changedFacts says which facts differ between was and now ("" when none):
// the facts named in either, in the order named.
func changedFacts(was, now []event.BoundFact) string {
	value := func(facts []event.BoundFact, what string) (string, bool) {
		for _, f := range facts {
			if f.What == what {
				return f.Value, true
			}
		}
		return "", false
	}
	var names []string
	for _, f := range slices.Concat(was, now) {
		if slices.Contains(names, f.What) {
			continue
		}
		a, inWas := value(was, f.What)
		b, inNow := value(now, f.What)
		if inWas != inNow || a != b {
			names = append(names, f.What)
		}
	}
	if len(names) == 0 {
		return ""
	}
	cells, _ := value(now, factCells)
	if cells == "" {
		cells, _ = value(was, factCells)
	}
	for i, n := range names {
		if n == factSources && cells != "" {
			names[i] = "the source of cell " + cells
			if strings.Contains(cells, ", ") {
				names[i] = "the sources of cells " + cells
			}
		}
	}
	return strings.Join(names, "; ")
}

// notebookFacts are the facts of the notebook a change is made on.
func (o onNotebook) notebookFacts() []event.BoundFact {
	return []event.BoundFact{{What: factNotebook, Value: o.name + " (" + o.path + ")"}}
}

// runFacts add where a cell of the notebook runs.
func (o onNotebook) runFacts() []event.BoundFact {
	return append(o.notebookFacts(), event.BoundFact{What: factRunsOn, Value: "kernel " + o.kernel})
}

// cellFacts are the cells a change acts on, by id, and with sources their
// sources in full.
func cellFacts(cells []CellInfo, sources bool) []event.BoundFact {
	ids := make([]string, len(cells))
	var src strings.Builder
	for i, c := range cells {
		ids[i] = c.ID
		// Length-prefixed: no two lists of sources read alike.
		src.WriteString(strconv.Itoa(len(c.Source)) + ":" + c.Source)
	}
	facts := []event.BoundFact{{What: factCells, Value: strings.Join(ids, ", ")}}
	if sources {
		facts = append(facts, event.BoundFact{What: factSources, Value: src.String()})
	}
	return facts
}

// The facts of each change, from what it recorded when it applied (to the
// copy a preview makes, or to the notebook it commits). A change refused
// before it found its cells has them empty: if it would act on cells now,
// that is a change too.

func (m *insertCell) bound() []event.BoundFact {
	facts := m.notebookFacts()
	if m.run {
		facts = m.runFacts()
	}
	if m.index != -1 {
		// Put by index, the cell lands between other cells than shown
		// when the notebook changed; appended, it goes last either way.
		facts = append(facts, event.BoundFact{What: factPlace, Value: "after " + m.after + ", before " + m.before})
	}
	return facts
}

func (m *overwriteSource) bound() []event.BoundFact {
	c := m.edit.Cell
	c.Source = m.edit.OldSource
	return append(m.notebookFacts(), cellFacts([]CellInfo{c}, true)...)
}

func (m *editSource) bound() []event.BoundFact {
	c := m.edit.Cell
	c.Source = m.edit.OldSource
	return append(m.notebookFacts(), cellFacts([]CellInfo{c}, true)...)
}

func (m *deleteCells) bound() []event.BoundFact {
	return append(m.notebookFacts(), cellFacts(m.deleted, true)...)
}

func (m *moveCell) bound() []event.BoundFact {
	return append(m.notebookFacts(), cellFacts([]CellInfo{{ID: m.moved.ID}, {ID: m.target}}, false)...)
}

func (m *clearOutputs) bound() []event.BoundFact {
	if m.forRun {
		return append(m.runFacts(), cellFacts([]CellInfo{m.cell}, true)...)
	}
	return append(m.notebookFacts(), cellFacts([]CellInfo{m.cell}, false)...)
}

// commitTo commits the change build makes for the notebook name names for
// session ("" its current one). When the call was held, the change is the
// one its person was shown or it is not made: the call is held again, and
// the notebook looked up and the change built again once allowed.
func commitTo[M cellMutation](ctx context.Context, e *Engine, session, name string, build func(onNotebook) M) (*document, M, error) {
	var d *document
	var m M
	err := e.asShown(ctx, func() error {
		var err error
		if d, err = e.lookup(session, name); err != nil {
			return err
		}
		m = build(e.on(d))
		return e.commit(ctx, d, session, m)
	})
	return d, m, err
}

// codeTarget is where code sent to a kernel runs, as ExecuteCode and its
// preview choose it: the session's sandbox, else the kernel named, else
// the current notebook's kernel.
type codeTarget struct {
	sandbox  *sandboxEntry
	kernelID string    // the kernel named (no sandbox)
	doc      *document // the current notebook, on whose kernel it runs (no sandbox or kernel named)
}

func (e *Engine) codeTarget(session, kernelID string) (codeTarget, error) {
	if en := e.sandboxes.activeFor(session); en != nil {
		return codeTarget{sandbox: en}, nil
	}
	if kernelID != "" {
		return codeTarget{kernelID: kernelID}, nil
	}
	// Without a notebook the error says there is no current notebook;
	// the caller knows what else could name a kernel.
	d, err := e.lookup(session, "")
	if err != nil {
		return codeTarget{}, err
	}
	return codeTarget{doc: d}, nil
}

func (t codeTarget) bound() []event.BoundFact {
	switch {
	case t.sandbox != nil:
		return []event.BoundFact{{What: factRunsOn, Value: "sandbox " + t.sandbox.name + " (" + t.sandbox.variant + ", " + t.sandbox.id + ")"}}
	case t.doc != nil:
		return []event.BoundFact{
			{What: factNotebook, Value: t.doc.name + " (" + t.doc.path + ")"},
			{What: factRunsOn, Value: "kernel " + t.doc.kernel.id},
		}
	}
	return []event.BoundFact{{What: factRunsOn, Value: "kernel " + t.kernelID}}
}
