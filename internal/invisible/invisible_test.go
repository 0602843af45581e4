package invisible

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShow(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "print('hi')\n\tx = 1", "print('hi')\n\tx = 1"},
		{"lone CR is a line break", "print('safe')  # note\rprint('PAYLOAD')", "print('safe')  # note⟨CR⟩\nprint('PAYLOAD')"},
		{"CRLF is a newline", "a\r\nb\r\n", "a\nb\n"},
		{"CR at the end", "a\r", "a⟨CR⟩\n"},
		{"escape in a string", "x = \"\x1b]\"; print('rest')", "x = \"⟨ESC⟩]\"; print('rest')"},
		{"SGR fg = bg", "\x1b[30;40mos.remove('x')\x1b[0m", "⟨ESC⟩[30;40mos.remove('x')⟨ESC⟩[0m"},
		{"C0 and DEL", "\x00\x07\x08\x0b\x0c\x7f", "⟨NUL⟩⟨BEL⟩⟨BS⟩⟨VT⟩⟨FF⟩⟨DEL⟩"},
		{"C1", "a\u009bb\u0085c", "a⟨U+009B⟩b⟨U+0085⟩c"},
		{"bidi", "if x\u202e == 1\u2066:", "if x⟨U+202E⟩ == 1⟨U+2066⟩:"},
		{"zero width", "ad\u200bmin\u200d\ufeff\u2060\u00ad", "ad⟨U+200B⟩min⟨U+200D⟩⟨U+FEFF⟩⟨U+2060⟩⟨U+00AD⟩"},
		{"separators", "a\u2028b\u2029", "a⟨U+2028⟩b⟨U+2029⟩"},
		{"fillers and selectors", "\u3164x\ufe0f\U000e0041", "⟨U+3164⟩x⟨U+FE0F⟩⟨U+E0041⟩"},
		{"invalid byte", "a\xffb", "a⟨0xFF⟩b"},
		{"private use", "\ue000\U000f0000", "⟨U+E000⟩⟨U+F0000⟩"},
		{"wide text is visible", "日本語 é ✓", "日本語 é ✓"},
	}
	for _, tc := range tests {
		if got := Show(tc.in); got != tc.want {
			t.Errorf("%s: Show(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	if got := ShowLine("a\nb\rc\td"); got != "a⟨LF⟩b⟨CR⟩c\td" {
		t.Errorf("ShowLine = %q", got)
	}
}

// Show's output holds no control but tab and newline, no hidden character,
// and valid UTF-8, whatever the input; clean input is returned as is.
func FuzzShow(f *testing.F) {
	for _, s := range []string{"", "a\rb", "\x1b]52;c;x\x07", "\u202e\u200b", "\xff\xfe", "ok\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Show(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Show(%q) = %q: not UTF-8", s, got)
		}
		for _, r := range got {
			if ClassOf(r) != Visible {
				t.Fatalf("Show(%q) = %q holds %U", s, got, r)
			}
		}
		if !Inspect(s).Any() && got != s {
			t.Fatalf("Show(%q) = %q changed text Inspect finds clean", s, got)
		}
		if strings.Count(got, "\n") != strings.Count(s, "\n")+Inspect(s).LoneCR {
			t.Fatalf("Show(%q) = %q: lines do not match the lone CRs", s, got)
		}
	})
}

func TestInspect(t *testing.T) {
	t.Parallel()
	r := Inspect("ok\nx = \"\x1b]\"\r\ny\u202e\rz\x1b")
	if r.Counts["ESC"] != 2 || r.Counts["U+202E"] != 1 || r.LoneCR != 1 || r.FirstLine != 2 {
		t.Fatalf("report %+v", r)
	}
	if got := r.Summary(); got != "2 × ESC, 1 × U+202E (bidirectional control), 1 lone carriage return" {
		t.Fatalf("summary %q", got)
	}
	if r.Total() != 4 {
		t.Fatalf("total %d", r.Total())
	}
	if Inspect("plain\r\ntext\n").Any() {
		t.Fatal("CRLF flagged")
	}
	var all Report
	all.Add(Inspect("a"))
	all.Add(Inspect("\u200b"))
	all.Add(Inspect("\x00"))
	if all.Total() != 2 || all.FirstLine != 1 {
		t.Fatalf("merged %+v", all)
	}
}
