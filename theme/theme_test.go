package theme

import (
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestNoColorSelectsAscii(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	r := NewRenderer(io.Discard)
	r.SetHasDarkBackground(true)
	s := New(r)
	if !s.Colorless || r.ColorProfile() != termenv.Ascii {
		t.Fatalf("NO_COLOR: profile %v, colorless %v", r.ColorProfile(), s.Colorless)
	}
	if got := s.Failed.Render("error"); got != "error" {
		t.Errorf("NO_COLOR output has escapes: %q", got)
	}
}

func TestPaletteFollowsBackground(t *testing.T) {
	for _, dark := range []bool{true, false} {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(termenv.TrueColor)
		r.SetHasDarkBackground(dark)
		s := New(r)
		want := Light()
		if dark {
			want = Dark()
		}
		if s.Palette != want {
			t.Errorf("dark=%v: wrong palette", dark)
		}
		if got := s.OK.Render("ok"); got == "ok" {
			t.Errorf("dark=%v: a colour terminal got no colour", dark)
		}
	}
	// Every token differs between the variants that share a meaning with
	// the background: text must stay readable on both.
	if Dark().Text == Light().Text || Dark().SelectedBg == Light().SelectedBg {
		t.Error("light and dark palettes share text or selection colours")
	}
}

// TestPaletteForProfile checks that converting the palette once changes no
// byte of what is drawn, and that on palette terminals every token is a
// palette number, so rendering never searches for the nearest colour.
func TestPaletteForProfile(t *testing.T) {
	for _, profile := range []termenv.Profile{termenv.TrueColor, termenv.ANSI256, termenv.ANSI, termenv.Ascii} {
		for _, base := range []Palette{Dark(), Light()} {
			r := lipgloss.NewRenderer(io.Discard)
			r.SetColorProfile(profile)
			conv := base.For(profile)
			bv, cv := reflect.ValueOf(base), reflect.ValueOf(conv)
			for i := 0; i < bv.NumField(); i++ {
				name := bv.Type().Field(i).Name
				hex, got := bv.Field(i).Interface().(lipgloss.Color), cv.Field(i).Interface().(lipgloss.Color)
				if (profile == termenv.ANSI256 || profile == termenv.ANSI) && strings.HasPrefix(string(got), "#") {
					t.Errorf("%v: %s is still %s", profile, name, got)
				}
				want := r.NewStyle().Foreground(hex).Background(hex).Render("x")
				if drawn := r.NewStyle().Foreground(got).Background(got).Render("x"); drawn != want {
					t.Errorf("%v: %s draws %q, want %q", profile, name, drawn, want)
				}
			}
		}
	}
	// The styles are built from the converted palette.
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(true)
	if s := New(r); s.Palette != Dark().For(termenv.ANSI256) {
		t.Error("Styles.Palette is not the converted palette")
	}
}

// TestNoColorOnATerminal checks NO_COLOR where it matters: on a terminal
// that would otherwise get 256 colours, in both themes.
func TestNoColorOnATerminal(t *testing.T) {
	t.Setenv("TERM", "xterm-256color")
	t.Setenv("COLORTERM", "")
	t.Setenv("CLICOLOR_FORCE", "")
	for _, noColor := range []string{"", "1"} {
		t.Setenv("NO_COLOR", noColor)
		for _, name := range []string{Auto, LightName, DarkName} {
			r := NewRenderer(io.Discard, termenv.WithTTY(true))
			s := ForTheme(r, name)
			sel := s.Selected.Render("row")
			if noColor == "" {
				if r.ColorProfile() != termenv.ANSI256 || sel == "row" {
					t.Fatalf("%s without NO_COLOR: profile %v, selected %q", name, r.ColorProfile(), sel)
				}
				continue
			}
			if !s.Colorless || sel != "row" || s.OK.Render("ok") != "ok" {
				t.Errorf("%s with NO_COLOR: colorless %v, selected %q", name, s.Colorless, sel)
			}
		}
	}
}

// TestForThemeOverridesTheBackground checks --theme: a named theme wins over
// what the terminal says, and is what anything else asking the renderer
// sees.
func TestForThemeOverridesTheBackground(t *testing.T) {
	for _, c := range []struct {
		name     string
		detected bool
		want     Palette
	}{
		{LightName, true, Light()},
		{DarkName, false, Dark()},
		{Auto, true, Dark()},
		{Auto, false, Light()},
		{"", false, Light()},
	} {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(termenv.TrueColor)
		r.SetHasDarkBackground(c.detected)
		s := ForTheme(r, c.name)
		if s.Palette != c.want {
			t.Errorf("theme %q on a dark=%v terminal: wrong palette", c.name, c.detected)
		}
		if r.HasDarkBackground() != (c.want == Dark()) {
			t.Errorf("theme %q: the renderer still says dark=%v", c.name, r.HasDarkBackground())
		}
	}
}

// xterm16 is xterm's default 16 colours: the reference for checking that
// the 16-colour palettes read on a black and on a white background.
var xterm16 = []string{
	"#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
	"#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
}

// luminance is the WCAG relative luminance of a #rrggbb colour.
func luminance(t *testing.T, hex string) float64 {
	t.Helper()
	var rgb [3]float64
	for i := range rgb {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		if err != nil {
			t.Fatalf("colour %q: %v", hex, err)
		}
		c := float64(v) / 255
		if c <= 0.03928 {
			rgb[i] = c / 12.92
		} else {
			rgb[i] = math.Pow((c+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*rgb[0] + 0.7152*rgb[1] + 0.0722*rgb[2]
}

// contrast is the WCAG contrast ratio of two colours, 1 to 21.
func contrast(t *testing.T, a, b string) float64 {
	t.Helper()
	la, lb := luminance(t, a), luminance(t, b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// TestPalettesRead checks every foreground token against the background its
// palette is for (black for the dark ones, white for the light ones), and
// the selected and acted-on rows against their text. Text that is a colour
// needs 3:1; borders (Subtle) 1.4:1. On 16 colours the hues are the
// terminal's: the xterm defaults stand in, and 2:1 is asked (xterm's green
// on white is 2.2:1; its statuses are words too).
func TestPalettesRead(t *testing.T) {
	hexOf := func(c lipgloss.Color) string {
		if n, err := strconv.Atoi(string(c)); err == nil {
			return xterm16[n]
		}
		return string(c)
	}
	for _, c := range []struct {
		name    string
		p       Palette
		bg      string
		minText float64
	}{
		{"dark", Dark(), "#000000", 3},
		{"light", Light(), "#ffffff", 3},
		{"dark16", Dark16(), "#000000", 2},
		{"light16", Light16(), "#ffffff", 2},
	} {
		v := reflect.ValueOf(c.p)
		for i := 0; i < v.NumField(); i++ {
			name := v.Type().Field(i).Name
			col := v.Field(i).Interface().(lipgloss.Color)
			if strings.HasSuffix(name, "Bg") || name == "MatchFg" || col == "" {
				continue // backgrounds and text on them below; "" is the terminal's own text colour
			}
			need := c.minText
			if name == "Subtle" {
				need = 1.4
			}
			if got := contrast(t, hexOf(col), c.bg); got < need {
				t.Errorf("%s: %s (%s) has contrast %.2f on %s, want >= %.1f", c.name, name, col, got, c.bg, need)
			}
		}
		if c.p.SelectedBg == "" || c.p.HighlightBg == "" {
			// Reverse video and underline: no colour of their own.
			if c.p.SelectedBg != "" || c.p.HighlightBg != "" || c.p.MatchBg != "" || c.p.Text != "" {
				t.Errorf("%s: a 16-colour palette mixes its own colours with the terminal's", c.name)
			}
			continue
		}
		for _, pair := range [][3]string{
			{"SelectedFg on SelectedBg", string(c.p.SelectedFg), string(c.p.SelectedBg)},
			{"Text on SelectedBg", string(c.p.Text), string(c.p.SelectedBg)},
			{"Text on HighlightBg", string(c.p.Text), string(c.p.HighlightBg)},
			{"MatchFg on MatchBg", string(c.p.MatchFg), string(c.p.MatchBg)},
		} {
			if got := contrast(t, pair[1], pair[2]); got < 4.5 {
				t.Errorf("%s: %s has contrast %.2f, want >= 4.5", c.name, pair[0], got)
			}
		}
	}
}

// TestSixteenColourStyles checks the styles an ANSI terminal gets: the
// 16-colour palettes, the selected row in reverse video (readable whatever
// the terminal's colours) and the acted-on cell underlined.
func TestSixteenColourStyles(t *testing.T) {
	for _, c := range []struct {
		name string
		want Palette
	}{{DarkName, Dark16()}, {LightName, Light16()}} {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(termenv.ANSI)
		s := ForTheme(r, c.name)
		if s.Palette != c.want {
			t.Errorf("%s: ANSI terminal got palette %+v", c.name, s.Palette)
		}
		if got := s.Selected.Render("row"); !sgrHas(got, "7") || sgrHas(got, "4") || strings.Contains(got, "[4") || strings.Contains(got, ";4") {
			t.Errorf("%s: selected row %q, want reverse video without a background colour", c.name, got)
		}
		if got := s.Highlight.Render("cell"); !sgrHas(got, "4") {
			t.Errorf("%s: acted-on cell %q, want it underlined", c.name, got)
		}
		if got := s.Text.Render("text"); got != "text" {
			t.Errorf("%s: text %q, want the terminal's own colour", c.name, got)
		}
	}
}

// sgrHas reports whether one of the SGR sequences in s has the parameter p.
func sgrHas(s, p string) bool {
	for _, part := range strings.Split(s, "\x1b[")[1:] {
		params, _, ok := strings.Cut(part, "m")
		if ok && slices.Contains(strings.Split(params, ";"), p) {
			return true
		}
	}
	return false
}
