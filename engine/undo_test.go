package engine

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/undo"
)

var testCallSeq atomic.Int64

// asCall runs op as a tool call of session, registered as the MCP observer
// registers one, and returns the call's id once it has finished.
func asCall(t *testing.T, e *Engine, session, tool string, op func(ctx context.Context) error) string {
	t.Helper()
	id := fmt.Sprintf("call-%d", testCallSeq.Add(1))
	ctx, finish, err := e.Calls().Begin(ctxT(t), calls.Start{ID: id, Session: session, Tool: tool})
	if err != nil {
		t.Fatalf("BeginCall: %v", err)
	}
	err = op(ctx)
	finish(calls.Outcome{})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return id
}

// undo reverts callID and fails the test when it is refused.
func undoCall(t *testing.T, e *Engine, callID string) undo.Result {
	t.Helper()
	res, err := e.Undo(ctxT(t), callID)
	if err != nil {
		t.Fatalf("Undo(%s): %v", callID, err)
	}
	return res
}

// cellIDs lists the ids of a notebook's cells.
func cellIDs(nb *notebook.Notebook) []string {
	out := make([]string, len(nb.Cells))
	for i, c := range nb.Cells {
		out[i] = c.ID
	}
	return out
}

// seed opens a notebook with cells of these sources (markdown), inserted
// outside any call, and returns their ids.
func seed(t *testing.T, f *fixture, session, name, file string, srcs ...string) []string {
	t.Helper()
	f.use(t, session, name, file, "create")
	var ids []string
	for _, s := range srcs {
		_, c, err := f.e.InsertCell(ctxT(t), session, name, -1, notebook.Markdown, s)
		checkNoError(t, "seed insert", err)
		ids = append(ids, c.ID)
	}
	return ids
}

func testUndo(t *testing.T, f *fixture) {
	t.Run("Insert", func(t *testing.T) { testUndoInsert(t, f) })
	t.Run("Edit", func(t *testing.T) { testUndoEdit(t, f) })
	t.Run("Delete", func(t *testing.T) { testUndoDelete(t, f) })
	t.Run("Move", func(t *testing.T) { testUndoMove(t, f) })
	t.Run("Conflict", func(t *testing.T) { testUndoConflict(t, f) })
	t.Run("OutsideEdit", func(t *testing.T) { testUndoOutsideEdit(t, f) })
	t.Run("UndoOfUndo", func(t *testing.T) { testUndoOfUndo(t, f) })
	t.Run("Bound", func(t *testing.T) { testUndoBound(t, f) })
	t.Run("InsertExecuted", func(t *testing.T) { testUndoInsertExecuted(t, f) })
	t.Run("ClearOutput", func(t *testing.T) { testUndoClearOutput(t, f) })
}

// Undoing a clear of outputs brings them back, with the execution count;
// once the cell has new outputs, the undo is refused rather than lose them.
func testUndoClearOutput(t *testing.T, f *fixture) {
	e := f.e
	f.use(t, "co", "co", "co.ipynb", "create")
	_, c, err := e.InsertCell(ctxT(t), "co", "co", -1, notebook.Code, "print('hi')")
	checkNoError(t, "insert", err)
	nb := f.disk(t, "co.ipynb")
	n := 3
	nb.Cells[0].ExecutionCount = &n
	nb.Cells[0].Outputs = []notebook.Output{{OutputType: notebook.Stream, Name: "stdout", Text: "hi\n"}}
	f.writeBehind(t, "co.ipynb", nb)
	clearCall := func() string {
		return asCall(t, e, "co", "clear_cell_output", func(ctx context.Context) error {
			_, _, err := e.ClearCellOutput(ctx, "co", "co", CellRef{ID: c.ID})
			return err
		})
	}
	first := clearCall()
	u := undoCall(t, e, first)
	got := f.disk(t, "co.ipynb").Cells[0]
	if len(got.Outputs) != 1 || got.Outputs[0].Text != "hi\n" || got.ExecutionCount == nil || *got.ExecutionCount != 3 {
		t.Fatalf("after the undo: %+v", got)
	}
	if len(u.Changes) != 1 || u.Changes[0] != "cell "+c.ID+" outputs restored" {
		t.Fatalf("changes: %q", u.Changes)
	}
	second := clearCall()
	nb = f.disk(t, "co.ipynb")
	nb.Cells[0].Outputs = []notebook.Output{{OutputType: notebook.Stream, Name: "stdout", Text: "new run\n"}}
	f.writeBehind(t, "co.ipynb", nb)
	_, err = e.Undo(ctxT(t), second)
	if ce := wantErrorAs[*undo.ConflictError](t, err); ce.CellID != c.ID {
		t.Fatalf("conflict: %v", err)
	}
	if got := f.disk(t, "co.ipynb").Cells[0]; len(got.Outputs) != 1 || got.Outputs[0].Text != "new run\n" {
		t.Fatalf("the new outputs were clobbered: %+v", got.Outputs)
	}
}

// A cell inserted and run has outputs the call did not write: they do not
// stand in the way of undoing the insert. Running a cell again is no change
// kept for undo.
func testUndoInsertExecuted(t *testing.T, f *fixture) {
	e := f.e
	ids := seed(t, f, "ix", "ix", "ix.ipynb", "a")
	var res ExecResult
	call := asCall(t, e, "ix", "insert_execute_code_cell", func(ctx context.Context) (err error) {
		res, err = e.InsertExecuteCell(ctx, "ix", "ix", -1, "print('ran')", ExecOptions{Timeout: 60 * time.Second})
		return err
	})
	if disk := f.disk(t, "ix.ipynb"); len(disk.Cells) != 2 || len(disk.Cells[1].Outputs) == 0 {
		t.Fatalf("the run left no outputs on disk: %+v", disk.Cells)
	}
	rerun := asCall(t, e, "ix", "execute_cell", func(ctx context.Context) error {
		_, err := e.ExecuteCell(ctx, "ix", "ix", CellRef{ID: res.Cell.ID}, ExecOptions{Timeout: 60 * time.Second})
		return err
	})
	if _, err := e.Undo(ctxT(t), rerun); err == nil || !strings.Contains(err.Error(), "no change kept") {
		t.Fatalf("undo of a run: %v", err)
	}
	u := undoCall(t, e, call)
	if got := cellIDs(f.disk(t, "ix.ipynb")); !equalStrings(got, ids) {
		t.Fatalf("after the undo: %q", got)
	}
	if len(u.Changes) != 1 || u.Changes[0] != "cell "+res.Cell.ID+" removed" {
		t.Fatalf("changes: %q", u.Changes)
	}
}

// Undoing an insert removes the cell from the file, shows the undo in the
// timeline, and leaves the agent that inserted it a notice.
func testUndoInsert(t *testing.T, f *fixture) {
	e := f.e
	ids := seed(t, f, "ins", "ins", "ins.ipynb", "a", "b")
	sub := e.Bus().Subscribe(256)
	defer sub.Close()
	var added CellInfo
	call := asCall(t, e, "ins", "insert_cell", func(ctx context.Context) (err error) {
		_, added, err = e.InsertCell(ctx, "ins", "ins", 1, notebook.Code, "x = 1")
		return err
	})
	if got := cellIDs(f.disk(t, "ins.ipynb")); !equalStrings(got, []string{ids[0], added.ID, ids[1]}) {
		t.Fatalf("after the insert: %q", got)
	}
	res := undoCall(t, e, call)
	if got := cellIDs(f.disk(t, "ins.ipynb")); !equalStrings(got, ids) {
		t.Fatalf("after the undo, on disk: %q, want %q", got, ids)
	}
	if len(res.Changes) != 1 || res.Changes[0] != "cell "+added.ID+" removed" || res.Tool != "insert_cell" || res.Of != call {
		t.Fatalf("undo result: %+v", res)
	}
	at := res.At.Local().Format("15:04:05")
	if want := "undo of insert_cell " + at + " by the person"; res.Summary != want {
		t.Fatalf("summary %q, want %q", res.Summary, want)
	}
	want := fmt.Sprintf("a person reverted your insert_cell of %s (cell %s removed)", at, added.ID)
	if got := e.TakeNotices("ins", "ins").Lines; len(got) != 1 || got[0] != want {
		t.Fatalf("notices: %q, want %q", got, want)
	}
	// The call finished undoable; the timeline gets an entry for the
	// undo, finished, naming what it reverted, undoable in turn.
	deadline := time.After(10 * time.Second)
	sawCall := false
	for {
		select {
		case ev := <-sub.C():
			if ev.Type == event.EvCallFinished && ev.Call.ID == call {
				if !ev.Call.Undoable {
					t.Fatalf("the insert finished without being undoable: %+v", ev.Call)
				}
				sawCall = true
			}
			if ev.Type == event.EvCallFinished && ev.Call.ID == res.ID {
				c := ev.Call
				if c.Tool != "undo" || c.Status != event.CallOK || c.UndoOf != call || c.Summary != res.Summary || c.Session != "" ||
					c.Notebook != "ins" || !strings.Contains(c.Text, "cell "+added.ID+" removed") || !c.Undoable {
					t.Fatalf("undo entry: %+v", c)
				}
				if !sawCall {
					t.Fatal("no call.finished event for the insert before the undo's")
				}
				return
			}
		case <-deadline:
			t.Fatal("no call.finished event for the undo")
		}
	}
}

// Undoing an edit restores the source, and keeps what the edit did not
// touch (outputs written since).
func testUndoEdit(t *testing.T, f *fixture) {
	e := f.e
	f.use(t, "ed", "ed", "ed.ipynb", "create")
	_, c, err := e.InsertCell(ctxT(t), "ed", "ed", -1, notebook.Code, "x = 1\ny = 2\n")
	checkNoError(t, "insert", err)
	call := asCall(t, e, "ed", "edit_cell_source", func(ctx context.Context) error {
		_, _, err := e.EditCellSource(ctx, "ed", "ed", CellRef{ID: c.ID}, "y = 2", "y = 3", false)
		return err
	})
	// Outputs arrive afterwards (a run elsewhere): the undo keeps them.
	nb := f.disk(t, "ed.ipynb")
	n := 4
	nb.Cells[0].ExecutionCount = &n
	nb.Cells[0].Outputs = []notebook.Output{{OutputType: notebook.Stream, Name: "stdout", Text: "ran\n"}}
	f.writeBehind(t, "ed.ipynb", nb)
	res := undoCall(t, e, call)
	got := f.disk(t, "ed.ipynb").Cells[0]
	if got.Source != "x = 1\ny = 2\n" || got.ID != c.ID {
		t.Fatalf("after the undo: %+v", got)
	}
	if len(got.Outputs) != 1 || got.Outputs[0].Text != "ran\n" || got.ExecutionCount == nil || *got.ExecutionCount != 4 {
		t.Fatalf("the undo lost the outputs written since: %+v", got)
	}
	if len(res.Changes) != 1 || res.Changes[0] != "cell "+c.ID+" source restored" {
		t.Fatalf("changes: %q", res.Changes)
	}
}

// Undoing a delete puts the cells back where they were, in order.
func testUndoDelete(t *testing.T, f *fixture) {
	e := f.e
	ids := seed(t, f, "del", "del", "del.ipynb", "a", "b", "c", "d")
	call := asCall(t, e, "del", "delete_cell", func(ctx context.Context) error {
		_, _, err := e.DeleteCells(ctx, "del", "del", nil, []string{ids[2], ids[1]})
		return err
	})
	if got := cellIDs(f.disk(t, "del.ipynb")); !equalStrings(got, []string{ids[0], ids[3]}) {
		t.Fatalf("after the delete: %q", got)
	}
	res := undoCall(t, e, call)
	disk := f.disk(t, "del.ipynb")
	if got := cellIDs(disk); !equalStrings(got, ids) {
		t.Fatalf("after the undo: %q, want %q", got, ids)
	}
	if !equalStrings(sources(disk), []string{"a", "b", "c", "d"}) {
		t.Fatalf("sources: %q", sources(disk))
	}
	if len(res.Changes) != 2 || res.Changes[0] != "cell "+ids[1]+" restored at index 1" || res.Changes[1] != "cell "+ids[2]+" restored at index 2" {
		t.Fatalf("changes: %q", res.Changes)
	}
}

// Undoing a move puts the cell back between its old neighbours.
func testUndoMove(t *testing.T, f *fixture) {
	e := f.e
	ids := seed(t, f, "mv", "mv", "mv.ipynb", "a", "b", "c")
	call := asCall(t, e, "mv", "move_cell", func(ctx context.Context) error {
		_, _, _, err := e.MoveCell(ctx, "mv", "mv", CellRef{ID: ids[0]}, CellRef{ID: ids[2]})
		return err
	})
	if got := cellIDs(f.disk(t, "mv.ipynb")); !equalStrings(got, []string{ids[1], ids[2], ids[0]}) {
		t.Fatalf("after the move: %q", got)
	}
	res := undoCall(t, e, call)
	if got := cellIDs(f.disk(t, "mv.ipynb")); !equalStrings(got, ids) {
		t.Fatalf("after the undo: %q, want %q", got, ids)
	}
	if len(res.Changes) != 1 || res.Changes[0] != "cell "+ids[0]+" moved back to index 0" {
		t.Fatalf("changes: %q", res.Changes)
	}
}

// A cell changed by a later call is not clobbered: the undo is refused,
// naming the cell and the later call, until that one is undone.
func testUndoConflict(t *testing.T, f *fixture) {
	e := f.e
	f.use(t, "cf1", "cf", "cf.ipynb", "create")
	e.SessionOpened("cf2", "agent-b 1")
	f.use(t, "cf2", "cf", "cf.ipynb", "connect")
	var c CellInfo
	insert := asCall(t, e, "cf1", "insert_cell", func(ctx context.Context) (err error) {
		_, c, err = e.InsertCell(ctx, "cf1", "cf", -1, notebook.Code, "x = 1")
		return err
	})
	edit := asCall(t, e, "cf2", "edit_cell_source", func(ctx context.Context) error {
		_, _, err := e.EditCellSource(ctx, "cf2", "cf", CellRef{ID: c.ID}, "1", "2", false)
		return err
	})
	before := f.file(t, "cf.ipynb")
	_, err := e.Undo(ctxT(t), insert)
	ce := wantErrorAs[*undo.ConflictError](t, err)
	if ce.CellID != c.ID || ce.ByCall != edit || ce.ByTool != "edit_cell_source" || ce.BySession != "cf2" {
		t.Fatalf("conflict: %+v", ce)
	}
	for _, want := range []string{"cell " + c.ID + " was changed by edit_cell_source at ", "(session cf2 (agent-b 1)) after this call; undo that first"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if after := f.file(t, "cf.ipynb"); string(after) != string(before) {
		t.Fatal("a refused undo changed the file")
	}
	undoCall(t, e, edit)
	undoCall(t, e, insert)
	if got := f.disk(t, "cf.ipynb"); len(got.Cells) != 0 {
		t.Fatalf("cells left: %q", sources(got))
	}
	// Each session is told of its own call only.
	if got := e.TakeNotices("cf2", "cf").Lines; len(got) != 1 || !strings.Contains(got[0], "reverted your edit_cell_source of") {
		t.Fatalf("cf2 notices: %q", got)
	}
	if got := e.TakeNotices("cf1", "cf").Lines; len(got) != 1 || !strings.Contains(got[0], "reverted your insert_cell of") {
		t.Fatalf("cf1 notices: %q", got)
	}
}

// A cell edited outside the server since the call is not clobbered either.
func testUndoOutsideEdit(t *testing.T, f *fixture) {
	e := f.e
	ids := seed(t, f, "out", "out", "out.ipynb", "a")
	call := asCall(t, e, "out", "overwrite_cell_source", func(ctx context.Context) error {
		_, _, err := e.OverwriteCellSource(ctx, "out", "out", CellRef{ID: ids[0]}, "b")
		return err
	})
	nb := f.disk(t, "out.ipynb")
	nb.Cells[0].Source = "edited in JupyterLab"
	f.writeBehind(t, "out.ipynb", nb)
	_, err := e.Undo(ctxT(t), call)
	ce := wantErrorAs[*undo.ConflictError](t, err)
	if ce.CellID != ids[0] || ce.ByCall != "" || !strings.Contains(err.Error(), "not by a change kept for undo") {
		t.Fatalf("conflict: %v", err)
	}
	if got := f.disk(t, "out.ipynb").Cells[0].Source; got != "edited in JupyterLab" {
		t.Fatalf("the outside edit was clobbered: %q", got)
	}
}

// An undo is a change like any other: undoing it brings the call back,
// after which the call can be undone again.
func testUndoOfUndo(t *testing.T, f *fixture) {
	e := f.e
	ids := seed(t, f, "uu", "uu", "uu.ipynb", "a", "b")
	var c CellInfo
	call := asCall(t, e, "uu", "insert_cell", func(ctx context.Context) (err error) {
		_, c, err = e.InsertCell(ctx, "uu", "uu", 1, notebook.Markdown, "inserted")
		return err
	})
	first := undoCall(t, e, call)
	if _, err := e.Undo(ctxT(t), call); err == nil || !strings.Contains(err.Error(), "already undone") {
		t.Fatalf("undoing an undone call: %v", err)
	}
	redo := undoCall(t, e, first.ID)
	disk := f.disk(t, "uu.ipynb")
	if got := cellIDs(disk); !equalStrings(got, []string{ids[0], c.ID, ids[1]}) || disk.Cells[1].Source != "inserted" {
		t.Fatalf("after undoing the undo: %q %q", got, sources(disk))
	}
	if redo.Tool != "undo" || len(redo.Changes) != 1 || redo.Changes[0] != "cell "+c.ID+" restored at index 1" {
		t.Fatalf("undo of the undo: %+v", redo)
	}
	notes := e.TakeNotices("uu", "uu").Lines
	if len(notes) != 2 || !strings.Contains(notes[0], "reverted your insert_cell") || !strings.Contains(notes[1], "undid their revert of your insert_cell") {
		t.Fatalf("notices: %q", notes)
	}
	undoCall(t, e, call)
	if got := cellIDs(f.disk(t, "uu.ipynb")); !equalStrings(got, ids) {
		t.Fatalf("after undoing the call again: %q", got)
	}
}

// Past the bound the oldest changes are no longer kept: undoing them says
// so and changes nothing.
func testUndoBound(t *testing.T, f *fixture) {
	e := f.e
	f.use(t, "bd", "bd", "bd.ipynb", "create")
	e.undo.SetBounds(2, undo.MaxBytes)
	defer e.undo.SetBounds(undo.MaxRecords, undo.MaxBytes)
	var calls []string
	for i := range 3 {
		calls = append(calls, asCall(t, e, "bd", "insert_cell", func(ctx context.Context) error {
			_, _, err := e.InsertCell(ctx, "bd", "bd", -1, notebook.Markdown, fmt.Sprint(i))
			return err
		}))
	}
	_, err := e.Undo(ctxT(t), calls[0])
	wantUserError(t, err, "has no change kept for undo", "the last 2 per notebook")
	undoCall(t, e, calls[2])
	if got := sources(f.disk(t, "bd.ipynb")); !equalStrings(got, []string{"0", "1"}) {
		t.Fatalf("after the undo: %q", got)
	}
}

// Changes made outside a call, or that a call marks as not kept (clearing
// outputs before a run), leave no record.
func TestRecordChangeNeedsACall(t *testing.T) {
	t.Parallel()
	before := []*notebook.Cell{{ID: "a"}}
	after := []*notebook.Cell{before[0], {ID: "b"}}
	if r := undoRecordOf(context.Background(), nil, before, after); r != nil {
		t.Fatal("a change outside any call was recorded")
	}
	ctx := withCallIdentity(context.Background(), &callIdentity{id: "c"})
	if r := undoRecordOf(withoutUndo(ctx), nil, before, after); r != nil {
		t.Fatal("a change marked not to be kept was recorded")
	}
	if r := undoRecordOf(ctx, nil, before, after); r == nil || r.Call().ID != "c" {
		t.Fatalf("record: %+v", r)
	}
}

// The notice of an undo is one line however many cells it brought back:
// the first are named, the rest counted.
func TestUndoNoticeIsBounded(t *testing.T) {
	d := &document{name: "big", path: "big.ipynb"}
	e := &Engine{sessions: map[string]*sessionState{}, docs: map[string]*document{"big": d}, current: map[string]string{}}
	var changes []string
	for i := range 200 {
		changes = append(changes, fmt.Sprintf("cell %d (id%04d) restored", i, i))
	}
	r := undo.NewRecord(undo.Call{Session: "s", Tool: "delete_cell", At: time.Date(2026, 11, 30, 14, 31, 23, 0, time.Local)}, d,
		nil, []*notebook.Cell{{ID: "gone"}}, nil)
	e.tellUndone(d, []*undoRecord{r}, changes)
	got := e.TakeNotices("s", "big").Lines
	if len(got) != 1 || !strings.Contains(got[0], "cell 11 (id0011) restored, and 188 more cells)") || strings.Contains(got[0], "id0012") {
		t.Fatalf("notice: %q", got)
	}
	if changes[12] != "cell 12 (id0012) restored" {
		t.Fatalf("the caller's list was changed: %q", changes[12])
	}
}
