package mcp

import (
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

type cellKind string

type textish string

func (t textish) MarshalText() ([]byte, error) { return []byte("T:" + string(t)), nil }

// jsonValue must agree with a json.Marshal/json.Unmarshal round trip
// whenever it claims to, since output validation relies on it.
func TestJSONValueMatchesRoundTrip(t *testing.T) {
	t.Parallel()
	n := 7
	var nilMap map[string]any
	var nilList []string
	cases := []any{
		nil, "plain", "tab\t<&>\u2028", 42, int64(1) << 60, uint8(3), 1.5, true,
		[]string{"a", "b"}, nilList, []any{1, "x", nil, []int{}}, nilMap,
		map[string]any{"kind": "cell.read", "count": 2, "exec": &n, "none": (*int)(nil), "type": cellKind("code")},
		[]map[string]any{{"ID": "k"}, {}},
		map[string]any{"sandbox": engine.SandboxInfo{Name: "s"}},    // struct: round trip
		map[string]any{"raw": json.RawMessage(`{"a": 1}`)},          // Marshaler
		map[string]any{"t": textish("x")},                           // TextMarshaler
		map[string]any{"bytes": []byte("hi")},                       // base64
		map[string]any{"bad": "\xff"},                               // invalid UTF-8
		map[string]any{"f": float32(0.1)},                           // float32 formatting
		map[cellKind]any{"k": 1},                                    // named key type
		map[string]any{"when": time.Unix(0, 0).UTC()},               // time.Time
		[]notebook.Output{{OutputType: notebook.Stream, Text: "x"}}, // struct list
	}
	for _, c := range cases {
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("%#v: %v", c, err)
		}
		var want any
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		got, ok := jsonView(c)
		if ok && !reflect.DeepEqual(got, want) {
			t.Errorf("jsonView(%#v) = %#v, the round trip gives %#v", c, got, want)
		}
		got, ok = jsonValue(reflect.ValueOf(c))
		if ok && !reflect.DeepEqual(got, want) {
			t.Errorf("jsonValue(%#v) = %#v, the round trip gives %#v", c, got, want)
		}
	}
	// The shapes of real answers take the fast way.
	for _, c := range cases[:14] {
		if _, ok := jsonView(c); !ok {
			t.Errorf("jsonView(%#v) fell back to the round trip", c)
		}
		if _, ok := jsonValue(reflect.ValueOf(c)); !ok {
			t.Errorf("jsonValue(%#v) fell back to the round trip", c)
		}
	}
}

func benchServer(tb testing.TB) *Server {
	s := &Server{
		log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		tools:    map[string]*toolDef{},
		resolved: map[string]*jsonschema.Resolved{},
		opts:     Options{Images: true},
	}
	for _, d := range allTools() {
		r, err := d.output.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		if err != nil {
			tb.Fatal(err)
		}
		s.resolved[d.name] = r
		s.tools[d.name] = d
	}
	return s
}

// BenchmarkToResultReadCell shapes a read_cell answer like the ones of
// figure 5 (a 2,500-character cell with an output).
func BenchmarkToResultReadCell(b *testing.B) {
	s := benchServer(b)
	src := strings.Repeat("x = compute(x)  # some code\n", 90)
	outs := []notebook.Output{{OutputType: notebook.Stream, Name: "stdout", Text: strings.Repeat("line of output\n", 20)}}
	b.ReportAllocs()
	for b.Loop() {
		a := outputs(outs, outputLoc{notebook: "reader", cellID: "c1"}, renderOpts{images: true, maxBytes: output.DefaultLimit}, []string{"Cell 5 (code)", src})
		n := 5
		a.structured["cell"] = map[string]any{"index": 5, "id": "c1", "type": notebook.Code, "source": src, "execution_count": &n}
		c := &call{}
		s.toResult(s.tools["read_cell"], c, a.withCell("c1"))
		if c.schemaOK == nil || !*c.schemaOK {
			b.Fatal(c.schemaProblem)
		}
	}
}
