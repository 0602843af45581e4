package mcp

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
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
	o := engine.CallOutcome{Structured: json.RawMessage(`{"kind":"outputs","result":["x"]}`)}
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
