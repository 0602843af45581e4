package theme

import (
	"io"
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
