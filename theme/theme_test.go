package theme

import (
	"io"
	"reflect"
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
