package notebook

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// Field names a part of a cell, for what differs between two versions of
// it.
type Field uint8

// The parts of a cell.
const (
	FieldType Field = 1 << iota
	FieldSource
	FieldMetadata
	FieldAttachments
	FieldOutputs
	FieldCount
)

// ContentFields are what a person or an agent writes into a cell;
// KernelFields are what running it writes.
const (
	ContentFields = FieldType | FieldSource | FieldMetadata | FieldAttachments
	KernelFields  = FieldOutputs | FieldCount
)

// CellDiff is one cell that differs between two versions of a notebook's
// cells, matched by id. Before is nil for a cell inserted, After for one
// deleted; From and To are its indices before and after (-1 when it is
// not there). For a cell in both, Fields are the parts that differ and
// Moved says its place among the other cells changed.
type CellDiff struct {
	ID            string
	Before, After *Cell
	From, To      int
	Fields        Field
	Moved         bool
}

// Comparison says which parts of two versions of a cell differ:
// ChangedFields or DifferentFields.
type Comparison func(before, after *Cell) Field

// Diff lists the cells that differ between before and after, matched by
// id, as compare sees them: deleted, changed and moved cells in the order
// of before, then inserted ones in the order of after. Of the cells in
// both, those outside a longest run kept in the same relative order are
// the moved ones. reordered reports whether cells were deleted or moved
// (what puts them back needs the order of before).
func Diff(before, after []*Cell, compare Comparison) (cells []CellDiff, reordered bool) {
	if sameIDs(before, after) {
		for i, b := range before {
			if f := compare(b, after[i]); f != 0 {
				cells = append(cells, CellDiff{ID: b.ID, Before: b, After: after[i], From: i, To: i, Fields: f})
			}
		}
		return cells, false
	}
	beforeAt := make(map[string]int, len(before))
	for i, c := range before {
		beforeAt[c.ID] = i
	}
	afterAt := make(map[string]int, len(after))
	for i, c := range after {
		afterAt[c.ID] = i
	}
	var common []int // after-positions, in before order
	for _, c := range before {
		if j, ok := afterAt[c.ID]; ok {
			common = append(common, j)
		}
	}
	stayed := longestIncreasing(common)
	for i, b := range before {
		j, ok := afterAt[b.ID]
		if !ok {
			cells = append(cells, CellDiff{ID: b.ID, Before: b, From: i, To: -1})
			reordered = true
			continue
		}
		d := CellDiff{ID: b.ID, Before: b, After: after[j], From: i, To: j, Fields: compare(b, after[j]), Moved: !stayed[j]}
		if d.Fields == 0 && !d.Moved {
			continue
		}
		reordered = reordered || d.Moved
		cells = append(cells, d)
	}
	for j, a := range after {
		if _, ok := beforeAt[a.ID]; !ok {
			cells = append(cells, CellDiff{ID: a.ID, After: a, From: -1, To: j})
		}
	}
	return cells, reordered
}

// sameIDs reports whether two lists hold the same ids in the same order.
func sameIDs(a, b []*Cell) bool {
	return slices.EqualFunc(a, b, func(x, y *Cell) bool { return x.ID == y.ID })
}

// longestIncreasing marks the values of a longest strictly increasing
// subsequence of xs (distinct values).
func longestIncreasing(xs []int) map[int]bool {
	tails := []int{} // index into xs of the smallest tail of each length
	prev := make([]int, len(xs))
	for i, x := range xs {
		k, _ := slices.BinarySearchFunc(tails, x, func(t, x int) int { return xs[t] - x })
		if k > 0 {
			prev[i] = tails[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	in := make(map[int]bool, len(tails))
	if len(tails) == 0 {
		return in
	}
	for i := tails[len(tails)-1]; i >= 0; i = prev[i] {
		in[xs[i]] = true
	}
	return in
}

// ChangedFields compares a cell with the copy a change made of it. A
// change replaces the cells it changes and shares what it did not touch
// with the cell before (copy on write), so parts are compared by identity
// where that is cheaper than by content.
func ChangedFields(b, a *Cell) Field { return byIdentity.fields(b, a) }

// DifferentFields compares two versions of a cell by what they mean, as
// read from files that different programs wrote: the same JSON laid out
// otherwise is the same, absent metadata is empty metadata, a mime
// bundle's text split into a list of lines (as nbformat writes it) is the
// joined text, and the "trusted" mark Jupyter puts on the code cells it
// reads out is no change.
func DifferentFields(b, a *Cell) Field { return byMeaning.fields(b, a) }

// cellEquality says how the parts of two cells that are not plain strings
// compare.
type cellEquality struct {
	metadata, attachments func(a, b json.RawMessage) bool
	outputs               func(a, b []Output) bool
}

var (
	byIdentity = cellEquality{
		metadata:    func(a, b json.RawMessage) bool { return bytes.Equal(a, b) },
		attachments: func(a, b json.RawMessage) bool { return bytes.Equal(a, b) },
		outputs: func(a, b []Output) bool {
			return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
		},
	}
	byMeaning = cellEquality{metadata: sameCellMetadata, attachments: sameBundle, outputs: sameOutputs}
)

// fields says which parts of b and a differ.
func (q cellEquality) fields(b, a *Cell) Field {
	if b == a {
		return 0
	}
	var f Field
	if b.Type != a.Type {
		f |= FieldType
	}
	if b.Source != a.Source {
		f |= FieldSource
	}
	if !q.metadata(b.Metadata, a.Metadata) {
		f |= FieldMetadata
	}
	if !q.attachments(b.Attachments, a.Attachments) {
		f |= FieldAttachments
	}
	if !q.outputs(b.Outputs, a.Outputs) {
		f |= FieldOutputs
	}
	if !SameCount(b.ExecutionCount, a.ExecutionCount) {
		f |= FieldCount
	}
	return f
}

// SameFields reports whether a and b agree, by meaning, on the parts f.
func SameFields(a, b *Cell, f Field) bool { return DifferentFields(a, b)&f == 0 }

// SameCount compares two execution counts.
func SameCount(a, b *int) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func sameOutputs(a, b []Output) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.OutputType != y.OutputType || x.Name != y.Name || x.Text != y.Text || x.EName != y.EName || x.EValue != y.EValue ||
			!SameCount(x.ExecutionCount, y.ExecutionCount) || !slices.Equal(x.Traceback, y.Traceback) ||
			!SameJSON(x.Metadata, y.Metadata) || len(x.Data) != len(y.Data) {
			return false
		}
		for k, v := range x.Data {
			w, ok := y.Data[k]
			if !ok || !sameBundle(v, w) {
				return false
			}
		}
	}
	return true
}

// SameJSON compares two JSON values by meaning: layout aside, and absent,
// null and {} alike.
func SameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	x, xok := jsonValue(a)
	y, yok := jsonValue(b)
	return xok && yok && reflect.DeepEqual(x, y)
}

// sameCellMetadata is SameJSON without the "trusted" mark.
func sameCellMetadata(a, b json.RawMessage) bool {
	if SameJSON(a, b) {
		return true
	}
	x, xok := jsonValue(a)
	y, yok := jsonValue(b)
	if !xok || !yok {
		return false
	}
	mx, _ := x.(map[string]any)
	my, _ := y.(map[string]any)
	if mx == nil && x != nil || my == nil && y != nil {
		return false
	}
	delete(mx, "trusted")
	delete(my, "trusted")
	return reflect.DeepEqual(orNil(mx), orNil(my))
}

// sameBundle compares mime bundles (attachments hold one per name) or a
// value of one by meaning: a list of strings is its joined text.
func sameBundle(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	x, xok := jsonValue(a)
	y, yok := jsonValue(b)
	return xok && yok && reflect.DeepEqual(joinLines(x), joinLines(y))
}

// jsonValue decodes raw, with absent, null and {} as nil; ok is false for
// JSON that does not decode.
func jsonValue(raw json.RawMessage) (v any, ok bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, true
	}
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	if m, isMap := v.(map[string]any); isMap && len(m) == 0 {
		return nil, true
	}
	return v, true
}

func orNil(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// joinLines turns lists of strings into one string, anywhere in v.
func joinLines(v any) any {
	switch x := v.(type) {
	case []any:
		var sb strings.Builder
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				for i := range x {
					x[i] = joinLines(x[i])
				}
				return x
			}
			sb.WriteString(s)
		}
		return sb.String()
	case map[string]any:
		for k, e := range x {
			x[k] = joinLines(e)
		}
	}
	return v
}
