package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

func TestSaveableOutputs(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 300) + `"]]"` + strings.Repeat("]", 300)
	outs := []notebook.Output{
		{OutputType: notebook.Stream, Name: "stdout", Text: "before\n"},
		{OutputType: notebook.DisplayData, Metadata: json.RawMessage("{}"), Data: map[string]json.RawMessage{"application/json": json.RawMessage(deep)}},
		{OutputType: notebook.DisplayData, Metadata: json.RawMessage(`{"a":{"b":"[[[["}}`), Data: map[string]json.RawMessage{"text/plain": json.RawMessage(`"x"`)}},
	}
	if d := outs[1].Depth(); d != 300 {
		t.Fatalf("depth %d, want 300 (brackets in strings do not count)", d)
	}
	if d := outs[2].Depth(); d != 2 {
		t.Fatalf("depth %d, want 2", d)
	}
	saved, unsaved := saveableOutputs(outs)
	if len(unsaved) != 1 || unsaved[0].index != 1 || unsaved[0].depth != 300 {
		t.Fatalf("unsaved %+v", unsaved)
	}
	if saved[0].Text != "before\n" || saved[2].Depth() != 2 || !strings.Contains(notebook.DataText(saved[1].Data["text/plain"]), "nests 300 levels deep") {
		t.Fatalf("saved %+v", saved)
	}
	if outs[1].Depth() != 300 {
		t.Fatal("the outputs given were changed")
	}
	nb := notebook.New()
	c := nb.NewCell(notebook.Code, "x")
	c.Outputs = saved
	nb.Cells = append(nb.Cells, c)
	if _, err := nb.Marshal(); err != nil {
		t.Fatalf("the saveable outputs do not marshal: %v", err)
	}
	if n := unsavedNote(outs); n == nil || !strings.Contains(n.Text, "output 1 (display_data, application/json, nested 300 levels deep)") {
		t.Fatalf("note %+v", n)
	}
	if unsavedNote(saved) != nil || unsavedNote(outs[:1]) != nil {
		t.Fatal("a note for outputs that were all saved")
	}
}
