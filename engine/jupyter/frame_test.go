package jupyter

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/gorilla/websocket"
)

// v1Golden is serialize_msg_to_ws_v1([header, {}, {}, content, b"BUF"],
// "shell") from jupyter_server 1.23, so our framing matches the server's
// byte for byte.
const v1Golden = "0700000000000000400000000000000045000000000000005300000000000000550000000000000057000000000000005e0000000000000061000000000000007368656c6c7b226d73675f6964223a2268227d7b7d7b7d7b2263223a327d425546"

func TestEncodeV1MatchesServer(t *testing.T) {
	want, _ := hex.DecodeString(v1Golden)
	got := encodeV1("shell", [][]byte{[]byte(`{"msg_id":"h"}`), []byte("{}"), []byte("{}"), []byte(`{"c":2}`), []byte("BUF")})
	if !bytes.Equal(got, want) {
		t.Fatalf("encodeV1:\n got %x\nwant %x", got, want)
	}
	m, err := decodeV1(want)
	if err != nil {
		t.Fatal(err)
	}
	if m.Channel != "shell" || m.Header.MsgID != "h" || string(m.Content) != `{"c":2}` || len(m.Buffers) != 1 || string(m.Buffers[0]) != "BUF" {
		t.Fatalf("decodeV1: %+v", m)
	}
}

// legacyGolden is serialize_binary_message of a display_data with two
// buffers (the legacy protocol's binary form).
const legacyGolden = "00000003000000100000009c0000009e7b22686561646572223a207b226d73675f6964223a202278222c20226d73675f74797065223a2022646973706c61795f64617461227d2c2022706172656e745f686561646572223a207b226d73675f6964223a202270227d2c20226d65746164617461223a207b7d2c2022636f6e74656e74223a207b7d2c20226368616e6e656c223a2022696f707562227d00017a7a"

func TestDecodeLegacy(t *testing.T) {
	data, _ := hex.DecodeString(legacyGolden)
	m, err := decodeLegacy(websocket.BinaryMessage, data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Channel != "iopub" || m.Header.MsgType != "display_data" || m.ParentHeader.MsgID != "p" ||
		len(m.Buffers) != 2 || !bytes.Equal(m.Buffers[0], []byte{0, 1}) || string(m.Buffers[1]) != "zz" {
		t.Fatalf("%+v", m)
	}
	m, err = decodeLegacy(websocket.TextMessage, []byte(`{"channel":"shell","header":{"msg_type":"execute_reply"},"parent_header":{"msg_id":"q"},"content":{"status":"ok"}}`))
	if err != nil || m.Channel != "shell" || m.ParentHeader.MsgID != "q" {
		t.Fatalf("%+v %v", m, err)
	}
}

func TestSplitV1RejectsGarbage(t *testing.T) {
	for _, in := range []string{"", "01", "ffffffffffffffff", "0200000000000000ff00000000000000ff00000000000000"} {
		b, _ := hex.DecodeString(in)
		if _, _, err := splitV1(b); err == nil {
			t.Errorf("splitV1(%s) accepted", in)
		}
	}
}

// The reader parses whatever the server sends; it must never panic.
func FuzzDecodeFrames(f *testing.F) {
	v1, _ := hex.DecodeString(v1Golden)
	leg, _ := hex.DecodeString(legacyGolden)
	f.Add(v1)
	f.Add(leg)
	f.Add([]byte(`{"channel":"iopub"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if ch, parts, err := splitV1(data); err == nil {
			// What splits must survive a re-encode unchanged.
			ch2, parts2, err := splitV1(encodeV1(ch, parts))
			if err != nil || ch2 != ch || len(parts2) != len(parts) {
				t.Fatalf("re-encoding changed the frame: %v", err)
			}
			for i := range parts {
				if !bytes.Equal(parts[i], parts2[i]) {
					t.Fatalf("part %d changed", i)
				}
			}
		}
		_, _ = decodeV1(data)
		_, _ = decodeLegacy(websocket.BinaryMessage, data)
		_, _ = decodeLegacy(websocket.TextMessage, data)
	})
}

func TestEscapePathAndResolve(t *testing.T) {
	c, err := NewClient("https://hub.example.org/user/al ice/", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"":                    "https://hub.example.org/user/al%20ice/api/contents",
		"/a b/c#d?.ipynb":     "https://hub.example.org/user/al%20ice/api/contents/a%20b/c%23d%3F.ipynb",
		"x/100%.txt":          "https://hub.example.org/user/al%20ice/api/contents/x/100%25.txt",
		"ünï/..hidden/ok.txt": "https://hub.example.org/user/al%20ice/api/contents/%C3%BCn%C3%AF/..hidden/ok.txt",
	}
	for in, want := range cases {
		if got := c.resolve(contentsPath(in), nil).String(); got != want {
			t.Errorf("%q -> %s, want %s", in, got, want)
		}
	}
}

// headerCases are headers as kernels send them, and shapes the hand parser
// must leave to encoding/json.
var headerCases = []string{
	`{}`,
	` { } `,
	`{"msg_id": "a1b2_7", "msg_type": "stream", "username": "u", "session": "s-1", "date": "2026-01-01T00:00:00.000000Z", "version": "5.3"}`,
	`{"date":"2026","msg_id":"x","msg_type":"status","session":"s","username":"username","version":"5.4","subshell_id":null}`,
	`{"msg_id":"x","msg_id":"y"}`,
	`{"msg_id":null,"msg_type":"t"}`,
	`{"MSG_ID":"upper"}`,
	`{"msg_id":"with \"escape\""}`,
	`{"msg_id":"caf\u00e9"}`,
	"{\"msg_id\":\"café\"}",
	"{\"msg_id\":\"\xff\"}",
	`{"msg_id":5}`,
	`{"msg_id":"x","extra":{"nested":1}}`,
	`{"msg_id":"x","n":1.5e3}`,
	`{"msg_id":"x",}`,
	`{"msg_id":"x"`,
	`{"msg_id":"x"} trailing`,
	`{"msg_id" "x"}`,
	`[]`,
	``,
	`null`,
	`{"msg_id":nul}`,
}

func TestDecodeHeaderMatchesEncodingJSON(t *testing.T) {
	for _, in := range headerCases {
		var want Header
		wantErr := json.Unmarshal([]byte(in), &want)
		var got Header
		gotErr := decodeHeader([]byte(in), &got)
		if (gotErr != nil) != (wantErr != nil) || got != want {
			t.Errorf("decodeHeader(%q) = %+v, %v; encoding/json says %+v, %v", in, got, gotErr, want, wantErr)
		}
	}
	// The usual shapes take the fast path.
	var h Header
	for _, in := range headerCases[:4] {
		if !fastHeader([]byte(in), &h) {
			t.Errorf("fastHeader(%q) fell back", in)
		}
	}
}

func FuzzDecodeHeader(f *testing.F) {
	for _, in := range headerCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want, got Header
		wantErr := json.Unmarshal(data, &want)
		gotErr := decodeHeader(data, &got)
		if (gotErr != nil) != (wantErr != nil) || (wantErr == nil && got != want) {
			t.Fatalf("decodeHeader(%q) = %+v, %v; encoding/json says %+v, %v", data, got, gotErr, want, wantErr)
		}
	})
}

func BenchmarkDecodeV1(b *testing.B) {
	hdr := []byte(`{"msg_id": "0b6c1a0e-6f5bd0d0a1b1e0f7c2d1e8a9_1234_56", "msg_type": "execute_result", "username": "username", "session": "0b6c1a0e-6f5bd0d0a1b1e0f7c2d1e8a9", "date": "2026-11-30T00:42:38.123456Z", "version": "5.3"}`)
	parent := []byte(`{"msg_id": "5d0f8e0c-2b1a-4c3d-9e8f-7a6b5c4d3e2f", "msg_type": "execute_request", "username": "jupyter-mcp-server", "session": "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "date": "2026-11-30T00:42:38.120000Z", "version": "5.3"}`)
	frame := encodeV1("iopub", [][]byte{hdr, parent, []byte("{}"), []byte(`{"data": {"text/plain": "2"}, "metadata": {}, "execution_count": 3}`)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeV1(frame); err != nil {
			b.Fatal(err)
		}
	}
}
