package notebook

import (
	"encoding/json"
	"testing"
)

// DifferentFields sees what a reader sees, not how a file lays it out.
func TestDifferentFields(t *testing.T) {
	t.Parallel()
	one, two := 1, 2
	base := func() *Cell {
		return &Cell{ID: "c", Type: Code, Source: "x", Metadata: json.RawMessage(`{"tags":["a","b"]}`), ExecutionCount: &one,
			Outputs: []Output{{OutputType: ExecuteResult, ExecutionCount: &one, Data: map[string]json.RawMessage{"text/plain": json.RawMessage(`"2\n3"`)}}}}
	}
	for _, tc := range []struct {
		name   string
		change func(c *Cell)
		want   Field
	}{
		{"laid out otherwise", func(c *Cell) { c.Metadata = json.RawMessage("{\n \"tags\": [\"a\", \"b\"]\n}") }, 0},
		{"trusted by Jupyter", func(c *Cell) { c.Metadata = json.RawMessage(`{"tags":["a","b"],"trusted":true}`) }, 0},
		{"text split in lines", func(c *Cell) {
			c.Outputs = []Output{{OutputType: ExecuteResult, ExecutionCount: &one, Data: map[string]json.RawMessage{"text/plain": json.RawMessage(`["2\n", "3"]`)}}}
		}, 0},
		{"tags joined are other tags", func(c *Cell) { c.Metadata = json.RawMessage(`{"tags":"ab"}`) }, FieldMetadata},
		{"another result", func(c *Cell) {
			c.Outputs = []Output{{OutputType: ExecuteResult, ExecutionCount: &one, Data: map[string]json.RawMessage{"text/plain": json.RawMessage(`"4"`)}}}
		}, FieldOutputs},
		{"run again", func(c *Cell) { c.ExecutionCount = &two }, FieldCount},
		{"source and type", func(c *Cell) { c.Source, c.Type = "y", Markdown }, FieldSource | FieldType},
	} {
		a := base()
		tc.change(a)
		if got := DifferentFields(base(), a); got != tc.want {
			t.Errorf("%s: fields %b, want %b", tc.name, got, tc.want)
		}
	}
}

// Diff matches cells by id, names the moved ones, and lists deleted,
// changed and moved cells in the old order, then the inserted.
func TestDiff(t *testing.T) {
	t.Parallel()
	cell := func(id, src string) *Cell { return &Cell{ID: id, Type: Code, Source: src} }
	before := []*Cell{cell("a", "a"), cell("b", "b"), cell("c", "c"), cell("d", "d")}
	after := []*Cell{cell("d", "d"), cell("a", "a2"), cell("c", "c"), cell("e", "e")}
	diffs, reordered := Diff(before, after, DifferentFields)
	type row struct {
		id       string
		from, to int
		fields   Field
		moved    bool
	}
	var got []row
	for _, d := range diffs {
		got = append(got, row{d.ID, d.From, d.To, d.Fields, d.Moved})
	}
	want := []row{{"a", 0, 1, FieldSource, false}, {"b", 1, -1, 0, false}, {"d", 3, 0, 0, true}, {"e", -1, 3, 0, false}}
	if len(got) != len(want) || !reordered {
		t.Fatalf("Diff = %+v (reordered %v), want %+v", got, reordered, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Diff[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if d, r := Diff(before, before, ChangedFields); len(d) != 0 || r {
		t.Errorf("a list against itself: %+v %v", d, r)
	}
}
