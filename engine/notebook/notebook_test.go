package notebook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const testdataDir = "testdata"

// TestRoundTripJupyterFiles checks that notebooks written by nbformat itself
// come back byte for byte after Parse and Marshal.
func TestRoundTripJupyterFiles(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"executed.ipynb", "handmade.ipynb", "empty.ipynb"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(testdataDir, name))
			if err != nil {
				t.Fatal(err)
			}
			nb, err := Parse(want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := nb.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Marshal differs from the nbformat file:\n%s", firstDiff(got, want))
			}
		})
	}
}

func firstDiff(got, want []byte) string {
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n got: %q\nwant: %q", i+1, g, w)
		}
	}
	return "same lines, different bytes"
}

func TestParseFields(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testdataDir, "handmade.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if nb.NBFormat != 4 || nb.NBFormatMinor != 5 || len(nb.Cells) != 4 {
		t.Fatalf("got nbformat %d.%d with %d cells", nb.NBFormat, nb.NBFormatMinor, len(nb.Cells))
	}
	if _, ok := nb.Extra["x_custom_top"]; !ok {
		t.Errorf("unknown top-level key lost: %v", nb.Extra)
	}
	md := nb.Cells[0]
	if md.Type != Markdown || md.Source != "![img](attachment:a.png)\nline two\r\nwindows\rmac\fff\x1cfs" {
		t.Errorf("markdown cell: %q %q", md.Type, md.Source)
	}
	if md.Attachments == nil || md.Extra["x_cell_extra"] == nil {
		t.Errorf("markdown cell lost attachments or extra keys")
	}
	code := nb.Cells[1]
	if code.ExecutionCount == nil || *code.ExecutionCount != 3 || len(code.Outputs) != 5 {
		t.Fatalf("code cell: count %v, %d outputs", code.ExecutionCount, len(code.Outputs))
	}
	st := code.Outputs[0]
	if st.OutputType != Stream || st.Name != "stdout" || st.Text != "one\ntwo\n\nthree" || string(st.Extra["x_output_extra"]) != `"kept"` {
		t.Errorf("stream output: %+v", st)
	}
	res := code.Outputs[2]
	if got := DataText(res.Data["text/plain"]); got != "multi\nline\n" {
		t.Errorf("text/plain = %q", got)
	}
	if got := DataText(res.Data["application/json"]); !strings.Contains(got, `"k"`) {
		t.Errorf("application/json = %q", got)
	}
	if res.ExecutionCount == nil || *res.ExecutionCount != 3 {
		t.Errorf("execute_result count %v", res.ExecutionCount)
	}
	er := code.Outputs[4]
	if er.EName != "ValueError" || er.EValue != "bad ü" || len(er.Traceback) != 2 {
		t.Errorf("error output: %+v", er)
	}
	if nb.Cells[2].Source != "" || nb.Cells[2].ExecutionCount != nil || len(nb.Cells[2].Outputs) != 0 {
		t.Errorf("empty code cell: %+v", nb.Cells[2])
	}
}

func TestUpgradeAddsIDs(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testdataDir, "v44.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if nb.NBFormatMinor != 5 {
		t.Errorf("minor = %d, want 5", nb.NBFormatMinor)
	}
	if nb.Cells[0].Source != "# Old\nnotebook" {
		t.Errorf("source = %q", nb.Cells[0].Source)
	}
	ids := map[string]bool{}
	for _, c := range nb.Cells {
		if len(c.ID) != 8 || !ValidCellID(c.ID) {
			t.Errorf("generated id %q is not 8 valid characters", c.ID)
		}
		ids[c.ID] = true
	}
	if len(ids) != len(nb.Cells) {
		t.Errorf("ids are not unique: %v", ids)
	}
	out, err := nb.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"nbformat_minor": 5`)) || !bytes.Contains(out, []byte(`"id": "`+nb.Cells[0].ID+`"`)) {
		t.Errorf("upgraded notebook not written with ids:\n%s", out)
	}
}

func TestIDRepair(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 65)
	src := `{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
		{"cell_type": "markdown", "id": "same", "metadata": {}, "source": "a"},
		{"cell_type": "markdown", "id": "same", "metadata": {}, "source": "b"},
		{"cell_type": "markdown", "id": "has space", "metadata": {}, "source": "c"},
		{"cell_type": "markdown", "id": "` + long + `", "metadata": {}, "source": "d"},
		{"cell_type": "markdown", "id": 7, "metadata": {}, "source": "e"},
		{"cell_type": "markdown", "id": "ok-id_9", "metadata": {}, "source": "f"}]}`
	nb, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if nb.Cells[0].ID != "same" || nb.Cells[5].ID != "ok-id_9" {
		t.Errorf("valid ids changed: %q %q", nb.Cells[0].ID, nb.Cells[5].ID)
	}
	seen := map[string]bool{}
	for i, c := range nb.Cells {
		if !ValidCellID(c.ID) || seen[c.ID] {
			t.Errorf("cell %d has id %q", i, c.ID)
		}
		seen[c.ID] = true
	}
	if nb.IndexOf("ok-id_9") != 5 || nb.IndexOf("missing") != -1 {
		t.Errorf("IndexOf wrong")
	}
}

func TestValidCellID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"":                        false,
		"a":                       true,
		"A-z_0":                   true,
		strings.Repeat("x", 64):   true,
		strings.Repeat("x", 65):   false,
		"dot.":                    false,
		"ü":                       false,
		"8a7b6c5d-1111-2222-3333": true,
	} {
		if got := ValidCellID(id); got != want {
			t.Errorf("ValidCellID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	cell := func(s string) string {
		return `{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [` + s + `]}`
	}
	out := func(s string) string {
		return cell(`{"cell_type": "code", "id": "a", "metadata": {}, "source": "", "execution_count": null, "outputs": [` + s + `]}`)
	}
	tests := []struct {
		name, src, want string
	}{
		{"not json", `{"nbformat": 4,`, "not a notebook"},
		{"trailing", `{"nbformat": 4, "cells": []} x`, "after the end"},
		{"array", `[]`, "not an object"},
		{"no nbformat", `{"cells": []}`, "no nbformat"},
		{"nbformat 3", `{"nbformat": 3, "nbformat_minor": 0, "worksheets": []}`, "nbformat 3 notebooks are not supported; open and save it in Jupyter to upgrade"},
		{"nbformat 5", `{"nbformat": 5, "cells": []}`, "nbformat 5 notebooks are not supported"},
		{"nbformat string", `{"nbformat": "4", "cells": []}`, "not an integer"},
		{"bad minor", `{"nbformat": 4, "nbformat_minor": -1, "cells": []}`, "nbformat_minor"},
		{"no cells", `{"nbformat": 4, "nbformat_minor": 5, "metadata": {}}`, "no cells"},
		{"cells object", `{"nbformat": 4, "cells": {}}`, "cells is a object"},
		{"metadata list", `{"nbformat": 4, "cells": [], "metadata": []}`, "metadata is a array"},
		{"cell string", cell(`"x"`), "cell 0: a cell must be an object"},
		{"no cell_type", cell(`{"source": ""}`), "cell_type is missing"},
		{"bad cell_type", cell(`{"cell_type": "heading", "source": ""}`), `cell_type "heading"`},
		{"source number", cell(`{"cell_type": "raw", "source": 1}`), "source is not a string"},
		{"source mixed list", cell(`{"cell_type": "raw", "source": ["a", 1]}`), "source is not a string"},
		{"cell metadata string", cell(`{"cell_type": "raw", "source": "", "metadata": "x"}`), "metadata is a string"},
		{"execution_count string", cell(`{"cell_type": "code", "source": "", "execution_count": "1", "outputs": []}`), "execution_count"},
		{"execution_count float", cell(`{"cell_type": "code", "source": "", "execution_count": 1.0, "outputs": []}`), "execution_count"},
		{"outputs object", cell(`{"cell_type": "code", "source": "", "outputs": {}}`), "outputs is a object"},
		{"output string", out(`"x"`), "output 0: an output must be an object"},
		{"no output_type", out(`{"name": "stdout"}`), "output_type is missing"},
		{"bad output_type", out(`{"output_type": "pyout"}`), `output_type "pyout"`},
		{"stream text number", out(`{"output_type": "stream", "name": "stdout", "text": 3}`), "text is"},
		{"stream name list", out(`{"output_type": "stream", "name": [], "text": ""}`), "name is a array"},
		{"data list", out(`{"output_type": "display_data", "data": [], "metadata": {}}`), "data is a array"},
		{"traceback string", out(`{"output_type": "error", "ename": "E", "evalue": "", "traceback": "x"}`), "traceback is a string"},
		{"traceback numbers", out(`{"output_type": "error", "ename": "E", "evalue": "", "traceback": [1]}`), "traceback line"},
		{"second output bad", out(`{"output_type": "stream", "name": "stdout", "text": ""}, {"output_type": "nope"}`), "output 1"},
		{"control char", "{\"nbformat\": 4, \"cells\": [], \"metadata\": {\"x\": \"a\x01\"}}", "control character"},
		{"bad escape", `{"nbformat": 4, "cells": [], "metadata": {"x": "\q"}}`, "invalid escape"},
		{"invalid utf8", "{\"nbformat\": 4, \"cells\": [], \"metadata\": {\"x\": \"\xff\"}}", "UTF-8"},
		{"nan spelled wrong", `{"nbformat": 4, "cells": [], "metadata": {"x": nan}}`, "invalid literal"},
		{"infinity cut", `{"nbformat": 4, "cells": [], "metadata": {"x": -Inf}}`, "invalid literal"},
		{"deep", `{"nbformat": 4, "cells": [], "metadata": {"x": ` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}}`, "nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nb, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", nb)
			}
			if nb != nil {
				t.Errorf("Parse returned a notebook with its error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestMarshalRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(nb *Notebook)
		want string
	}{
		{"duplicate id", func(nb *Notebook) { nb.Cells[1].ID = nb.Cells[0].ID }, "repeats the id"},
		{"empty id", func(nb *Notebook) { nb.Cells[0].ID = "" }, "invalid id"},
		{"bad cell type", func(nb *Notebook) { nb.Cells[0].Type = "heading" }, `cell_type "heading"`},
		{"bad output type", func(nb *Notebook) {
			nb.Cells[1].Outputs = append(nb.Cells[1].Outputs, Output{OutputType: "pyout"})
		}, `output_type "pyout"`},
		{"metadata not object", func(nb *Notebook) { nb.Cells[0].Metadata = json.RawMessage(`[1]`) }, "must be a JSON object"},
		{"bad raw", func(nb *Notebook) { nb.Metadata = json.RawMessage(`{"a":`) }, "notebook metadata"},
		{"bad data", func(nb *Notebook) {
			nb.Cells[1].Outputs = append(nb.Cells[1].Outputs, Output{OutputType: DisplayData, Data: map[string]json.RawMessage{"text/plain": json.RawMessage(`nope`)}})
		}, "data text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nb := New()
			nb.Cells = append(nb.Cells, nb.NewCell(Markdown, "a"))
			nb.Cells = append(nb.Cells, nb.NewCell(Code, "b"))
			tt.edit(nb)
			_, err := nb.Marshal()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Marshal error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestNewAndNewCell(t *testing.T) {
	t.Parallel()
	nb := New()
	seen := map[string]bool{}
	for i := range 300 {
		typ := []string{Code, Markdown, Raw}[i%3]
		c := nb.NewCell(typ, fmt.Sprintf("cell %d\n", i))
		if seen[c.ID] || !ValidCellID(c.ID) {
			t.Fatalf("NewCell id %q repeats or is invalid", c.ID)
		}
		seen[c.ID] = true
		if (typ == Code) != (c.Outputs != nil) {
			t.Errorf("%s cell outputs = %v", typ, c.Outputs)
		}
		nb.Cells = append(nb.Cells, c)
	}
	out, err := nb.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Cells) != 300 || back.Cells[299].ID != nb.Cells[299].ID || back.Cells[0].Source != "cell 0\n" {
		t.Fatalf("new notebook did not survive a round trip")
	}
	if !bytes.Contains(out, []byte(`"display_name": "Python 3 (ipykernel)"`)) || !bytes.Contains(out, []byte(`"nbformat_minor": 5`)) {
		t.Errorf("New lacks kernel metadata or 4.5:\n%s", out[len(out)-400:])
	}
}

func TestClone(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testdataDir, "handmade.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	cp := nb.Clone()
	cp.Cells[1].Source = "changed"
	*cp.Cells[1].ExecutionCount = 99
	cp.Cells[1].Outputs[0].Text = "changed"
	cp.Cells[1].Outputs[4].Traceback[0] = "changed"
	cp.Cells[1].Outputs[2].Data["text/plain"][1] = 'X'
	cp.Cells[1].Metadata[0] = ' '
	cp.Extra["new"] = json.RawMessage(`1`)
	cp.Cells = cp.Cells[:1]
	out, err := nb.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, data) {
		t.Fatalf("changing a clone changed the original:\n%s", firstDiff(out, data))
	}
}

func TestDataText(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`"a\nb"`:               "a\nb",
		`["a\n", "b"]`:         "a\nb",
		`{"k": 1}`:             `{"k": 1}`,
		` [1, 2] `:             `[1, 2]`,
		`"\u00fc\ud83d\ude00"`: "ü😀",
		`not json`:             "not json",
	} {
		if got := DataText(json.RawMessage(raw)); got != want {
			t.Errorf("DataText(%s) = %q, want %q", raw, got, want)
		}
	}
	if got := DataText(DataString("x<y>&\"\x01")); got != "x<y>&\"\x01" {
		t.Errorf("DataString did not round-trip: %q", got)
	}
}

func TestPyFloat(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"1e-05": "1e-05", "0.0001": "0.0001", "1e16": "1e+16", "1e15": "1000000000000000.0",
		"1E2": "100.0", "-0.0": "-0.0", "0.1": "0.1", "2.5e-300": "2.5e-300", "1.5e+300": "1.5e+300",
		"123456789.125": "123456789.125", "0e0": "0.0", "12345678901234567.0": "1.2345678901234568e+16",
	} {
		w := &writer{}
		w.number([]byte(in), true)
		if string(w.b) != want {
			t.Errorf("%s written as %s, want %s", in, w.b, want)
		}
	}
}

// randomText mixes the characters the writer must treat like Python does:
// every kind of line break, control characters, quotes, HTML characters,
// non-ASCII and characters outside the BMP.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", "word ", "\n", "\r\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\u0085",
		"\u2028", "\u2029", "\x00", "\x01", "\x1b[31m", "\x7f", "\"", "\\", "/", "<", ">", "&",
		"ü", "漢", "😀", "\t", " ", "\b", "\ufeff"}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestMatchesPythonWriter writes random notebooks and has nbformat read
// and write each one: a byte-identical answer shows Marshal is what
// nbformat.writes produces for inputs the fixed files do not cover.
func TestMatchesPythonWriter(t *testing.T) {
	t.Parallel()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import nbformat").Run(); err != nil {
		t.Skipf("needs %s with nbformat: %v", py, err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	var paths []string
	for i := range 20 {
		nb := New()
		meta, _ := json.Marshal(map[string]any{
			"kernelspec":  map[string]string{"name": "python3", "display_name": randomText(r), "language": "python"},
			randomText(r): []any{randomText(r), r.Float64() * 1e20, r.Float64() / 1e6, r.IntN(1000), nil, true},
			"trusted":     true, // only stripped from cell metadata
		})
		nb.Metadata = meta
		for range 1 + r.IntN(6) {
			typ := []string{Code, Markdown, Raw}[r.IntN(3)]
			c := nb.NewCell(typ, randomText(r))
			cm, _ := json.Marshal(map[string]any{"tags": []string{randomText(r)}, "trusted": false, "n": r.Float64()})
			c.Metadata = append(cm[:len(cm)-1], `, "nan": NaN}`...)
			if typ == Code {
				n := r.IntN(50)
				c.ExecutionCount = &n
				c.Outputs = []Output{
					{OutputType: Stream, Name: "stdout", Text: randomText(r)},
					{OutputType: ExecuteResult, ExecutionCount: &n, Data: map[string]json.RawMessage{
						"text/plain":             DataString(randomText(r)),
						"text/html":              json.RawMessage(`["<b>", "` + strings.Repeat("x", r.IntN(3)) + `\n", "</b>"]`),
						"image/png":              json.RawMessage(`["aGVs\n", "bG8=\n"]`),
						"application/json":       json.RawMessage(`{"z": [1.0, 2e-7, "\u003c", NaN, Infinity, -Infinity, 1e400], "a": null}`),
						"application/javascript": DataString(randomText(r)),
					}, Metadata: json.RawMessage(`{}`)},
					{OutputType: Error, EName: randomText(r), EValue: randomText(r), Traceback: []string{randomText(r), randomText(r)}},
				}
			}
			nb.Cells = append(nb.Cells, c)
		}
		out, err := nb.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		// Our own output must be a fixed point too.
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("notebook %d: Parse of Marshal: %v", i, err)
		}
		again, err := back.Marshal()
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("notebook %d: second Marshal differs (%v):\n%s", i, err, firstDiff(again, out))
		}
		p := filepath.Join(dir, fmt.Sprintf("nb%02d.ipynb", i))
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	script := `
import sys, nbformat, logging
logging.disable(logging.CRITICAL)
for p in sys.argv[1:]:
    with open(p, encoding="utf-8") as f:
        nb = nbformat.read(f, as_version=nbformat.NO_CONVERT)
    with open(p + ".py", "w", encoding="utf-8") as f:
        nbformat.write(nb, f)
`
	cmd := exec.Command(py, append([]string{"-c", script}, paths...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nbformat failed: %v\n%s", err, out)
	}
	for _, p := range paths {
		ours, _ := os.ReadFile(p)
		theirs, err := os.ReadFile(p + ".py")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("%s: nbformat writes it differently:\n%s", filepath.Base(p), firstDiff(ours, theirs))
		}
	}
}

// bigNotebook builds a notebook of about 5 MB in 2,000 cells, with an image
// every tenth cell, like a long analysis notebook.
func bigNotebook(tb testing.TB) []byte {
	tb.Helper()
	nb := New()
	img := DataString(strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB", 350) + "\n")
	for i := range 2000 {
		c := nb.NewCell(Code, strings.Repeat(fmt.Sprintf("x%d = compute(%d)  # ü\n", i, i), 12))
		n := i + 1
		c.ExecutionCount = &n
		c.Outputs = append(c.Outputs, Output{OutputType: Stream, Name: "stdout", Text: strings.Repeat("a line of output\twith a tab\n", 20)})
		data := map[string]json.RawMessage{"text/plain": DataString("<Figure size 640x480 with 1 Axes>")}
		if i%10 == 0 {
			data["image/png"] = img
		}
		c.Outputs = append(c.Outputs, Output{OutputType: DisplayData, Data: data, Metadata: json.RawMessage(`{}`)})
		nb.Cells = append(nb.Cells, c)
	}
	out, err := nb.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func BenchmarkParseMarshal(b *testing.B) {
	data := bigNotebook(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		nb, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := nb.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBigNotebookRoundTrip(t *testing.T) {
	t.Parallel()
	data := bigNotebook(t)
	if len(data) < 4<<20 {
		t.Fatalf("big notebook is only %d bytes", len(data))
	}
	nb, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := nb.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, data) {
		t.Fatalf("big notebook changed:\n%s", firstDiff(out, data))
	}
}

func FuzzParse(f *testing.F) {
	for _, data := range testNotebooks(f) {
		f.Add(data)
	}
	for _, s := range []string{
		`{"nbformat": 4, "nbformat_minor": 2, "metadata": {}, "cells": []}`,
		`{"nbformat": 4, "cells": [{"cell_type": "code", "source": ["a\n", "b"], "outputs": [{"output_type": "stream", "name": "stdout", "text": ["x\r\n"]}]}]}`,
		`{"nbformat": 4, "cells": [{"cell_type": "raw", "id": "x", "source": "\u2028"}, {"cell_type": "raw", "id": "x", "source": ""}]}`,
		`{"nbformat": 4, "cells": [], "metadata": {"a": [1.5e300, -0, 1E-7, "\ud800"]}, "z": {}}`,
		`{"nbformat": 4, "cells": [{"cell_type": "markdown", "source": "", "attachments": {"a": {"text/plain": ["a", "b"]}, "b": 1}}]}`,
		`{"nbformat": 4, "cells": [{"cell_type": "code", "source": "", "outputs": [{"output_type": "error", "text": ["a", "b"], "ename": "", "evalue": "", "traceback": []}]}]}`,
		`{"nbformat": 3}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nb, err := Parse(data)
		if err != nil {
			return
		}
		first, err := nb.Marshal()
		if err != nil {
			t.Fatalf("Marshal of a parsed notebook failed: %v", err)
		}
		back, err := Parse(first)
		if err != nil {
			t.Fatalf("Parse of our own output failed: %v\n%s", err, first)
		}
		second, err := back.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("Marshal is not stable:\n%s", firstDiff(second, first))
		}
	})
}

// NaN and the infinities are read and written as Python's json does (and
// so nbformat and Jupyter): a notebook holding them opens and saves.
func TestNonFiniteFloats(t *testing.T) {
	t.Parallel()
	src := `{"nbformat": 4, "nbformat_minor": 5, "metadata": {"a": NaN, "b": [Infinity, -Infinity, 1e400, -1e400, "NaN"]}, "cells": []}`
	nb, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := nb.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n \"cells\": [],\n \"metadata\": {\n  \"a\": NaN,\n  \"b\": [\n   Infinity,\n   -Infinity,\n   Infinity,\n   -Infinity,\n   \"NaN\"\n  ]\n },\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"
	if string(out) != want {
		t.Fatalf("Marshal:\n%s\nwant:\n%s", out, want)
	}
	if got := string(StrictJSON(nb.Metadata)); got != `{"a": null, "b": [null, null, 1e400, -1e400, "NaN"]}` {
		t.Errorf("StrictJSON = %s", got)
	}
}
