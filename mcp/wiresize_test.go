package mcp

import (
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// TestJSONStringLen holds the counted size to what encoding/json writes.
func TestJSONStringLen(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and \ backslash`, "line\nfeed\r\ttab\b\f",
		"ctrl \x00\x01\x1f", "<html> & </html>", "héllo wörld ✓ 😀",
		"bad \xff utf8 \xc3", "sep \u2028 \u2029", "\x7f del",
	} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonStringLen(s); got != len(b) {
			t.Errorf("jsonStringLen(%q) = %d, encoding/json writes %d bytes: %s", s, got, len(b), b)
		}
	}
}

func FuzzJSONStringLen(f *testing.F) {
	f.Add("a<b>\n\xff\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		b, _ := json.Marshal(s)
		if got := jsonStringLen(s); got != len(b) {
			t.Fatalf("jsonStringLen(%q) = %d, want %d", s, got, len(b))
		}
	})
}

// TestMeasureResult checks each part's size against the part as the SDK
// encodes it.
func TestMeasureResult(t *testing.T) {
	img := make([]byte, 1000)
	res := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "first <part>"},
		&sdk.ImageContent{Data: img, MIMEType: "image/png"},
		&sdk.TextContent{Text: "second\n"},
	}}
	o := calls.Outcome{Structured: json.RawMessage(`{"kind":"outputs","result":["x"]}`)}
	measureResult(&o, res)
	want := 0
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b, _ := json.Marshal(tc.Text)
			want += len(b)
		}
	}
	if o.TextBytes != want {
		t.Errorf("TextBytes %d, want %d", o.TextBytes, want)
	}
	b, _ := json.Marshal(img) // []byte encodes as a base64 string
	if o.ImageBytes != len(b) {
		t.Errorf("ImageBytes %d, want %d", o.ImageBytes, len(b))
	}
	if o.StructuredBytes != len(o.Structured) {
		t.Errorf("StructuredBytes %d, want %d", o.StructuredBytes, len(o.Structured))
	}
}

// TestCallSizesOnTheWire runs real calls (a plot, a read) and holds the sizes
// the call.finished event carries to the result the client received.
func TestCallSizesOnTheWire(t *testing.T) {
	h := newHarness(t)
	cs := h.connect()
	path := h.writeNotebook("sizes.ipynb", "x = '<b>' * 3\nprint(x)")
	ok(t, cs, "use_notebook", map[string]any{"notebook_name": "sizes", "notebook_path": path})
	sub := h.e.Bus().Subscribe(1024)
	defer sub.Close()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"execute_cell", map[string]any{"cell_index": 0}},
		{"execute_code", map[string]any{"code": "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.figure(figsize=(1,1)); plt.plot([1, 2]); plt.show()"}},
	} {
		_, _, res := ok(t, cs, c.tool, c.args)
		var want event.CallEvent
		for _, part := range res.Content {
			switch p := part.(type) {
			case *sdk.TextContent:
				b, _ := json.Marshal(p.Text)
				want.TextBytes += len(b)
			case *sdk.ImageContent:
				b, _ := json.Marshal(p.Data)
				want.ImageBytes += len(b)
			}
		}
		if res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			want.StructuredBytes = len(b)
		}
		var got *event.CallEvent
		deadline := time.After(10 * time.Second)
		for got == nil {
			select {
			case ev := <-sub.C():
				if ev.Type == event.EvCallFinished && ev.Call != nil && ev.Call.Tool == c.tool {
					got = ev.Call
				}
			case <-deadline:
				t.Fatalf("%s: no call.finished event", c.tool)
			}
		}
		if got.TextBytes != want.TextBytes || got.StructuredBytes != want.StructuredBytes || got.ImageBytes != want.ImageBytes {
			t.Errorf("%s: event sizes text %d structured %d images %d; the client got %d, %d, %d",
				c.tool, got.TextBytes, got.StructuredBytes, got.ImageBytes, want.TextBytes, want.StructuredBytes, want.ImageBytes)
		}
		if c.tool == "execute_code" && got.ImageBytes == 0 {
			t.Errorf("execute_code: the plot's image was not measured")
		}
	}
}
