package termtext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello, world", "hello, world"},
		{"tab and newline kept", "a\tb\nc", "a\tb\nc"},
		{"unicode kept", "héllo ─ 日本 🎉 \uFFFD", "héllo ─ 日本 🎉 \uFFFD"},
		{"SGR kept", "\x1b[31mred\x1b[0m", "\x1b[31mred\x1b[0m"},
		{"SGR reset without parameters", "\x1b[mx", "\x1b[mx"},
		{"SGR truecolour, colon form", "\x1b[38;2;1;2;3m\x1b[38:2::1:2:3mx", "\x1b[38;2;1;2;3m\x1b[38:2::1:2:3mx"},
		{"SGR conceal dropped", "a\x1b[8mhidden\x1b[0m", "ahidden\x1b[0m"},
		{"SGR conceal among others dropped", "\x1b[1;08;31mx", "x"},
		{"SGR colour 8 is not conceal", "\x1b[38;5;8m\x1b[48;2;8;8;8m\x1b[38:5:8mx", "\x1b[38;5;8m\x1b[48;2;8;8;8m\x1b[38:5:8mx"},
		{"SGR 28 reveal kept", "\x1b[28mx", "\x1b[28mx"},
		{"traceback colours", "\x1b[0;31mValueError\x1b[0m: bad", "\x1b[0;31mValueError\x1b[0m: bad"},
		{"OSC 52 BEL", "a\x1b]52;c;aGVsbG8=\x07b", "ab"},
		{"OSC 52 ST", "a\x1b]52;c;aGVsbG8=\x1b\\b", "ab"},
		{"OSC 0 title", "\x1b]0;pwned\x07x", "x"},
		{"OSC 8 hyperlink", "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"OSC 9 notification", "\x1b]9;hi\x07.", "."},
		{"OSC 133 shell integration", "\x1b]133;A\x07$", "$"},
		{"OSC unterminated", "a\x1b]52;c;aGVsbG8=", "a"},
		{"OSC ends at newline", "a\x1b]0;t\nb", "a\nb"},
		{"OSC cancelled by CAN", "a\x1b]0;t\x18b", "ab"},
		{"OSC broken off by ESC", "a\x1b]0;t\x1b[1mb", "a\x1b[1mb"},
		{"DCS", "a\x1bP1$r\x1b\\b", "ab"},
		{"DCS sixel", "a\x1bPq#0;2;0;0;0~~\x1b\\b", "ab"},
		{"APC kitty graphics", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
		{"PM", "a\x1b^secret\x1b\\b", "ab"},
		{"SOS", "a\x1bXsecret\x1b\\b", "ab"},
		{"CSI clear screen", "a\x1b[2Jb", "ab"},
		{"CSI cursor home", "a\x1b[Hb\x1b[10;20Hc", "abc"},
		{"CSI erase line", "a\x1b[2Kb", "ab"},
		{"CSI scroll region", "a\x1b[1;5rb", "ab"},
		{"CSI alternate screen", "a\x1b[?1049hb\x1b[?1049l", "ab"},
		{"CSI mouse reporting", "a\x1b[?1000h\x1b[?1006hb", "ab"},
		{"CSI with intermediate", "a\x1b[0 qb", "ab"},
		{"CSI private SGR-like", "a\x1b[>4;1mb", "ab"},
		{"CSI device status query", "a\x1b[6nb", "ab"},
		{"SGR unterminated", "a\x1b[31", "a"},
		{"SGR split by newline", "a\x1b[3\n1mb", "a\n1mb"},
		{"SGR broken by non-ASCII", "a\x1b[3é", "aé"},
		{"lone ESC at end", "a\x1b", "a"},
		{"ESC ESC", "a\x1b\x1b[1mb", "a\x1b[1mb"},
		{"ESC c reset", "a\x1bcb", "ab"},
		{"ESC 7 save cursor", "a\x1b7b\x1b8", "ab"},
		{"ESC charset", "a\x1b(0b", "ab"},
		{"ESC # 8 alignment", "a\x1b#8b", "ab"},
		{"ESC then control", "a\x1b\nb", "a\nb"},
		{"BEL", "a\x07b", "ab"},
		{"backspace", "a\bb", "ab"},
		{"lone CR dropped", "a\rb", "ab"},
		{"CRLF becomes LF", "a\r\nb", "a\nb"},
		{"NUL", "a\x00b", "ab"},
		{"form feed vertical tab", "a\f\vb", "ab"},
		{"DEL", "a\x7fb", "ab"},
		{"SI SO", "a\x0e\x0fb", "ab"},
		{"C1 CSI UTF-8", "a\u009b2Jb", "a2Jb"},
		{"C1 OSC UTF-8", "a\u009d0;t\u009cb", "a0;tb"},
		{"C1 NEL", "a\u0085b", "ab"},
		{"C1 raw byte CSI", "a\x9b2Jb", "a2Jb"},
		{"C1 raw bytes", "a\x80\x90\x9fb", "ab"},
		{"NBSP kept", "a\u00a0b", "a\u00a0b"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"truncated UTF-8", "a\xe2\x94", "a\uFFFD"},
		{"overlong UTF-8", "a\xc0\xafb", "a\uFFFD\uFFFDb"},
		{"surrogate in UTF-8", "a\xed\xa0\x80b", "a\uFFFD\uFFFDb"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if Clean(tt.in) != (tt.in == tt.want) {
				t.Errorf("Clean(%q) = %v", tt.in, Clean(tt.in))
			}
			if got := String(tt.want); got != tt.want {
				t.Errorf("not idempotent: String(%q) = %q", tt.want, got)
			}
		})
	}
}

func TestStringCleanDoesNotAllocate(t *testing.T) {
	for _, s := range []string{"plain text", "\x1b[1;31mred\x1b[0m and ünïcödé\tand\nlines"} {
		if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
			t.Errorf("String(%q) allocates %v times", s, n)
		}
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", `{"code":"print(1)","n":3}`, `{"code":"print(1)","n":3}`},
		{"layout kept", "{\n  \"b\": [1, 2],\n  \"a\": \"x\"\n}", "{\n  \"b\": [1, 2],\n  \"a\": \"x\"\n}"},
		{"newline and tab escapes kept", `{"a":"x\ny\tz\"q\\\/"}`, `{"a":"x\ny\tz\"q\\\/"}`},
		{"SGR kept", `{"tb":"\u001b[31mErr\u001b[0m"}`, `{"tb":"\u001b[31mErr\u001b[0m"}`},
		{"OSC 52 dropped", `{"code":"print(\"\u001b]52;c;aGVsbG8=\u0007\")"}`, `{"code":"print(\"\")"}`},
		{"in a key", `{"\u001b]0;t\u0007k":1}`, `{"k":1}`},
		{"CSI clear", `["a\u001b[2Jb"]`, `["ab"]`},
		{"CR escape dropped", `"a\rb"`, `"ab"`},
		{"C1 escaped", `"a\u009bb"`, `"ab"`},
		{"C1 raw", "\"a\u009bb\"", `"ab"`},
		{"invalid UTF-8", "\"a\xffb\"", "\"a\uFFFDb\""},
		{"HTML not escaped", `"<\u0007>&"`, `"<>&"`},
		{"unicode escapes kept", `"\u00e9\u65e5"`, `"\u00e9\u65e5"`},
		{"not JSON sanitized as text", "oops \x1b]52;c;x\x07", "oops "},
		{"CR outside strings dropped", "{\r\n\"a\": 1}", "{\n\"a\": 1}"},
		{"open string", "\"a\x1b[2J", "\"a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(JSON([]byte(tt.in))); got != tt.want {
				t.Errorf("JSON(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	raw := []byte(`{"a":"ünï \"q\" \n\t","c":[1,true,null,{"d":"\u00e9"}]}`)
	if n := testing.AllocsPerRun(100, func() { _ = JSON(raw) }); n != 0 {
		t.Errorf("JSON of clean text allocates %v times", n)
	}
}

// checkSafe fails unless out is what may reach the terminal: no ESC except
// in a well-formed SGR, no C0 control but tab and newline, no DEL, no C1,
// valid UTF-8.
func checkSafe(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("String(%q) = %q: invalid UTF-8", in, out)
	}
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == 0x1b:
			k := i + 2
			if k > len(out) || out[i+1] != '[' {
				t.Fatalf("String(%q) = %q: ESC not starting a CSI at %d", in, out, i)
			}
			for k < len(out) && (out[k] >= '0' && out[k] <= ';') {
				k++
			}
			if k == len(out) || out[k] != 'm' {
				t.Fatalf("String(%q) = %q: escape at %d is not an SGR", in, out, i)
			}
			i = k + 1
			continue
		case r < 0x20 && r != '\t' && r != '\n', r >= 0x7f && r <= 0x9f:
			t.Fatalf("String(%q) = %q: control %U at %d", in, out, r, i)
		}
		i += n
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31mred\x1b[0m", "\x1b]52;c;aGVsbG8=\x07", "\x1b]0;t\x1b\\",
		"\x1b[2J\x1b[?1049h", "\x1bPq~~\x1b\\", "\x1b_G;A\x1b\\", "\x9b2J", "\u009d0;x\u009c", "a\rb\x00\x07",
		"\xff\xe2\x94", "\x1b[3", "\x1b[38:2::1:2:3m", "\x1b\x1b[", "\x1b(", "\x1b[1;\n2m", "\x1b[30;40mx\x1b[0m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := String(in)
		checkSafe(t, in, out)
		if again := String(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
		if Clean(in) != (out == in) {
			t.Fatalf("Clean(%q) = %v but String gives %q", in, Clean(in), out)
		}
		j := JSON([]byte(in))
		checkSafe(t, in, String(string(j))) // JSON never makes things worse
	})
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `{"a":"\u001b]52;c;x\u0007"}`, `["\u001b[31mx\u001b[0m"]`, "\"\xff\"", `"\r"`, `"\ud800"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := JSON([]byte(in))
		checkSafe(t, in, string(out)) // as text
		if !jsonValid([]byte(in)) {
			return
		}
		// Valid JSON stays valid, and every string in it decodes clean.
		if !jsonValid(out) {
			t.Fatalf("JSON(%q) = %q: no longer valid JSON", in, out)
		}
		for _, s := range jsonStrings(t, out) {
			checkSafe(t, in, s)
		}
	})
}

func jsonValid(b []byte) bool { return json.Valid(b) }

// jsonStrings decodes b and returns every key and string value in it.
func jsonStrings(t *testing.T, b []byte) []string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

var (
	benchPlain  = strings.Repeat("Epoch 12/100 - loss: 0.2345 - accuracy: 0.9123 ünïcödé\n", 200)
	benchColour = strings.Repeat("\x1b[0;31mValueError\x1b[0m                                Traceback (most recent call last)\n\x1b[0;32m<ipython-input>\x1b[0m in \x1b[0;36m<module>\x1b[0;34m\x1b[0m\n", 100)
	benchHeavy  = strings.Repeat("\x1b]52;c;aGVsbG8=\x07\x1b[2J\x1b[H\x1b]0;title\x1b\\\x1b[?1049hx\r\x07\u009b\x1b[31mred\x1b[0m\n", 200)
)

func benchString(b *testing.B, s string) {
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		_ = String(s)
	}
}

func BenchmarkStringPlain(b *testing.B)  { benchString(b, benchPlain) }
func BenchmarkStringColour(b *testing.B) { benchString(b, benchColour) }
func BenchmarkStringEscapeHeavy(b *testing.B) {
	benchString(b, benchHeavy)
}

func BenchmarkJSONClean(b *testing.B) {
	raw := []byte(`{"cell_index":-1,"cell_source":"import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.head()","notebook_name":"sales ünï"}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		_ = JSON(raw)
	}
}

func BenchmarkJSONHostile(b *testing.B) {
	raw := []byte(`{"cell_source":"print(\"\u001b]52;c;aGVsbG8=\u0007\u001b[2J\")","tb":"\u001b[31mErr\u001b[0m"}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		_ = JSON(raw)
	}
}
