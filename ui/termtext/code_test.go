package termtext

import (
	"encoding/json"
	"testing"
)

func TestCode(t *testing.T) {
	t.Parallel()
	// Nothing is dropped: what String removes, Code shows.
	for in, want := range map[string]string{
		"print('safe')  # note\rprint('PAYLOAD')": "print('safe')  # note⟨CR⟩\nprint('PAYLOAD')",
		"x = \"\x1b]\"; print('rest')":            "x = \"⟨ESC⟩]\"; print('rest')",
		"\x1b[30;40mhidden\x1b[0m":                "⟨ESC⟩[30;40mhidden⟨ESC⟩[0m",
		"ok":                                      "ok",
	} {
		if got := Code(in); got != want {
			t.Errorf("Code(%q) = %q, want %q", in, got, want)
		}
		if got := Code(in); !Clean(got) {
			t.Errorf("Code(%q) = %q is not clean for the screen", in, got)
		}
	}
	if got := Name("tool\x1b[31m\nx"); got != "tool⟨ESC⟩[31m⟨LF⟩x" {
		t.Errorf("Name = %q", got)
	}
}

func TestJSONCode(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"code":"print(1)"}`, `{"code":"print(1)"}`},
		{`{"code":"x = \"\u001b]\"; print('rest')"}`, `{"code":"x = \"\u001b]\"; print('rest')"}`},
		{"{\"code\":\"a\u202eb\u200bc\"}", `{"code":"a\u202eb\u200bc"}`},
		{"{\"k\":\"\U000e0041\"}", `{"k":"\udb40\udc41"}`},
		{"{\r\n  \"k\": 1\r\n}", "{\n  \"k\": 1\n}"},
		{"{\"k\":\"\x1b[31m\"}", `{"k":"\u001b[31m"}`},
		{"not json \x1b]0;t\x07", "not json ⟨ESC⟩]0;t⟨BEL⟩"},
		{`{"open":"\`, `{"open":"\`},
	}
	for _, tc := range tests {
		got := string(JSONCode([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("JSONCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !Clean(got) {
			t.Errorf("JSONCode(%q) = %q is not clean", tc.in, got)
		}
		// Valid JSON keeps its values.
		var a, b any
		if json.Unmarshal([]byte(tc.in), &a) == nil {
			if err := json.Unmarshal([]byte(got), &b); err != nil {
				t.Errorf("JSONCode(%q) = %q: %v", tc.in, got, err)
			} else if ja, _ := json.Marshal(a); string(ja) != string(mustMarshal(b)) {
				t.Errorf("JSONCode(%q) changed the value: %s vs %s", tc.in, ja, mustMarshal(b))
			}
		}
	}
	clean := []byte(`{"a":[1,2,{"b":"c d"}]}`)
	if got := JSONCode(clean); &got[0] != &clean[0] {
		t.Error("clean JSON was copied")
	}
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// Output keeps its colours, but text drawn in its background's colour gets
// the terminal's colours back.
func TestStringUndoesForegroundEqualsBackground(t *testing.T) {
	t.Parallel()
	fix := colourFix
	for in, want := range map[string]string{
		"\x1b[30;40mhidden\x1b[0m":                  "\x1b[30;40m" + fix + "hidden\x1b[0m",
		"\x1b[40m\x1b[30mhidden":                    "\x1b[40m\x1b[30m" + fix + "hidden",
		"\x1b[38;5;1m\x1b[41mhidden":                "\x1b[38;5;1m\x1b[41m" + fix + "hidden",
		"\x1b[38;2;9;9;9;48;2;9;9;9mx":              "\x1b[38;2;9;9;9;48;2;9;9;9m" + fix + "x",
		"\x1b[38:2::1:2:3m\x1b[48:2::1:2:3mx":       "\x1b[38:2::1:2:3m\x1b[48:2::1:2:3m" + fix + "x",
		"\x1b[97m\x1b[107mx\x1b[0m":                 "\x1b[97m\x1b[107m" + fix + "x\x1b[0m",
		"\x1b[31;41;7mx":                            "\x1b[31;41;7m" + fix + "x",
		"\x1b[31mred\x1b[0m \x1b[32;40mgreen\x1b[m": "\x1b[31mred\x1b[0m \x1b[32;40mgreen\x1b[m",
		"\x1b[30m\x1b[0m\x1b[40mx":                  "\x1b[30m\x1b[0m\x1b[40mx",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
		if Clean(in) != (String(in) == in) {
			t.Errorf("Clean(%q) disagrees with String", in)
		}
		if again := String(want); again != want {
			t.Errorf("String(%q) = %q: not idempotent", want, again)
		}
	}
}
