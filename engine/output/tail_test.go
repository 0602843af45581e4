package output

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

func TestTail(t *testing.T) {
	t.Parallel()
	stream := func(name, text string) notebook.Output {
		return notebook.Output{OutputType: notebook.Stream, Name: name, Text: text}
	}
	bundle := func(data map[string]string) notebook.Output {
		o := notebook.Output{OutputType: notebook.DisplayData, Data: map[string]json.RawMessage{}}
		for k, v := range data {
			b, _ := json.Marshal(v)
			o.Data[k] = b
		}
		return o
	}
	long := strings.Repeat("x", 300)
	cases := []struct {
		name string
		outs []notebook.Output
		want []string
	}{
		{"nothing yet", nil, nil},
		{"the last lines of one stream", []notebook.Output{stream("stdout", "0\n1\n2\n3\n4\n")}, []string{"2", "3", "4"}},
		{"fewer lines than asked", []notebook.Output{stream("stdout", "0\n1\n")}, []string{"0", "1"}},
		{"an unterminated line counts", []notebook.Output{stream("stdout", "a\nb\nc\nd")}, []string{"b", "c", "d"}},
		{"blank lines skipped", []notebook.Output{stream("stdout", "a\n\n  \nb\n\n")}, []string{"a", "b"}},
		{"across outputs, oldest first", []notebook.Output{stream("stdout", "a\nb\n"), stream("stderr", "warn\n"), bundle(map[string]string{"text/plain": "42"})}, []string{"b", "warn", "42"}},
		{"a progress bar shows its last state", []notebook.Output{stream("stdout", "start\n 10%\r 50%\r100%\n")}, []string{"start", "100%"}},
		{"escapes stripped", []notebook.Output{stream("stdout", "\x1b[31mred\x1b[0m\n")}, []string{"red"}},
		{"an error is its name and value", []notebook.Output{{OutputType: notebook.Error, EName: "ValueError", EValue: "bad", Traceback: []string{"tb1", "tb2"}}}, []string{"ValueError: bad"}},
		{"an image is named", []notebook.Output{bundle(map[string]string{"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})}, []string{"[image/png image]"}},
		{"a long line is cut", []notebook.Output{stream("stdout", long)}, []string{strings.Repeat("x", 199) + "…"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Tail(c.outs, 3, 200); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Tail = %q, want %q", got, c.want)
			}
		})
	}
}

func TestTailReadsOnlyTheEndOfAStream(t *testing.T) {
	t.Parallel()
	// A "\r" early in the text must not reach the last lines.
	text := "a\rb\n" + strings.Repeat("line\n", 1000) + "x\ry\n"
	got := Tail([]notebook.Output{{OutputType: notebook.Stream, Name: "stdout", Text: text}}, 2, 200)
	if want := []string{"line", "y"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Tail = %q, want %q", got, want)
	}
	if got := lastLines(text, 2); got != "line\nx\ry" {
		t.Errorf("lastLines = %q", got)
	}
}
