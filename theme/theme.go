// Package theme holds the workbench's colours and styles. Colours are named
// by what they mean (semantic tokens), never by what they look like, and
// every style is built from a *lipgloss.Renderer so that colour detection
// follows the terminal the UI draws on (the TTY), not stdout, which may be a
// pipe carrying the MCP protocol.
package theme

import (
	"io"
	"os"
	"strconv"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Palette is the set of semantic colour tokens. Every colour the workbench
// shows comes from one of these fields.
type Palette struct {
	Text        lipgloss.Color // ordinary text
	Muted       lipgloss.Color // secondary text: timestamps, counts, hints
	Subtle      lipgloss.Color // borders of unfocused panes, separators
	Accent      lipgloss.Color // focused pane border, titles, the product name
	SelectedFg  lipgloss.Color // text of the selected row
	SelectedBg  lipgloss.Color // background of the selected row
	HighlightBg lipgloss.Color // background of the acted-on cell
	MatchFg     lipgloss.Color // text found by a search
	MatchBg     lipgloss.Color // background of text found by a search

	Running   lipgloss.Color // a call or execution in progress
	OK        lipgloss.Color // success
	Error     lipgloss.Color // failure
	Cancelled lipgloss.Color // stopped by a person or by a timeout
	Held      lipgloss.Color // waiting for a person
	Denied    lipgloss.Color // refused by a person

	Warning lipgloss.Color // confirmations pending, missed events, pause

	JSONKey    lipgloss.Color // object keys in the structured tree
	JSONString lipgloss.Color // string values
	JSONNumber lipgloss.Color // numbers, booleans and null
}

// Dark is the palette for terminals with a dark background.
func Dark() Palette {
	return Palette{
		Text:        lipgloss.Color("#D8DEE9"),
		Muted:       lipgloss.Color("#8A93A6"),
		Subtle:      lipgloss.Color("#4C566A"),
		Accent:      lipgloss.Color("#88C0D0"),
		SelectedFg:  lipgloss.Color("#ECEFF4"),
		SelectedBg:  lipgloss.Color("#3B4252"),
		HighlightBg: lipgloss.Color("#2E3A2F"),
		MatchFg:     lipgloss.Color("#2E3440"),
		MatchBg:     lipgloss.Color("#EBCB8B"),
		Running:     lipgloss.Color("#81A1C1"),
		OK:          lipgloss.Color("#A3BE8C"),
		Error:       lipgloss.Color("#BF616A"),
		Cancelled:   lipgloss.Color("#D08770"),
		Held:        lipgloss.Color("#EBCB8B"),
		Denied:      lipgloss.Color("#B48EAD"),
		Warning:     lipgloss.Color("#EBCB8B"),
		JSONKey:     lipgloss.Color("#88C0D0"),
		JSONString:  lipgloss.Color("#A3BE8C"),
		JSONNumber:  lipgloss.Color("#B48EAD"),
	}
}

// Light is the palette for terminals with a light background.
func Light() Palette {
	return Palette{
		Text:        lipgloss.Color("#2E3440"),
		Muted:       lipgloss.Color("#6B7280"),
		Subtle:      lipgloss.Color("#C0C6D0"),
		Accent:      lipgloss.Color("#1F6FA8"),
		SelectedFg:  lipgloss.Color("#111827"),
		SelectedBg:  lipgloss.Color("#DCE6F2"),
		HighlightBg: lipgloss.Color("#E3F2E1"),
		MatchFg:     lipgloss.Color("#111827"),
		MatchBg:     lipgloss.Color("#FDE68A"),
		Running:     lipgloss.Color("#2563EB"),
		OK:          lipgloss.Color("#15803D"),
		Error:       lipgloss.Color("#B91C1C"),
		Cancelled:   lipgloss.Color("#C2410C"),
		Held:        lipgloss.Color("#A16207"),
		Denied:      lipgloss.Color("#7E22CE"),
		Warning:     lipgloss.Color("#A16207"),
		JSONKey:     lipgloss.Color("#1F6FA8"),
		JSONString:  lipgloss.Color("#15803D"),
		JSONNumber:  lipgloss.Color("#7E22CE"),
	}
}

// Dark16 is the dark palette for terminals of 16 colours. Nearest-colour
// conversion of Dark lands on the wrong hues there (errors in grey, success
// in yellow), and what the 16 colours look like is the terminal's choice, so
// the tokens are chosen by meaning instead: text in the terminal's own
// foreground (empty: no colour), states in the ANSI hue that names them.
// The selected row and the acted-on cell have no background colour: styles
// built from this palette mark them with reverse video and an underline,
// which read on any scheme.
func Dark16() Palette {
	return Palette{
		Muted: "8", Subtle: "8", Accent: "6",
		Running: "12", OK: "2", Error: "9", Cancelled: "3", Held: "11", Denied: "13",
		Warning: "11",
		JSONKey: "6", JSONString: "2", JSONNumber: "13",
	}
}

// Light16 is the light palette for terminals of 16 colours: like Dark16,
// without the bright yellows and cyans that vanish on white.
func Light16() Palette {
	return Palette{
		Muted: "8", Subtle: "8", Accent: "4",
		Running: "4", OK: "2", Error: "1", Cancelled: "9", Held: "5", Denied: "13",
		Warning: "5",
		JSONKey: "4", JSONString: "2", JSONNumber: "5",
	}
}

// Themes a person can ask for (--theme): Auto follows the terminal's
// background as the renderer detects it.
const (
	Auto      = "auto"
	LightName = "light"
	DarkName  = "dark"
)

// PaletteFor is the palette for a background and a colour profile: the
// 16-colour palettes on ANSI terminals, the full ones elsewhere.
func PaletteFor(dark bool, profile termenv.Profile) Palette {
	switch {
	case profile == termenv.ANSI && dark:
		return Dark16()
	case profile == termenv.ANSI:
		return Light16()
	case dark:
		return Dark()
	}
	return Light()
}

// For returns the palette converted to profile. lipgloss resolves a colour
// against the renderer's profile on every Render, and on a 256-colour
// terminal (tmux, screen) resolving a hex colour is a nearest-colour search
// in HSLuv space: under an output flood that search was a tenth of the
// workbench's CPU. Converted once here, the colours are palette numbers
// that lipgloss takes as they are. TrueColor keeps the hex values, and
// Ascii (NO_COLOR) keeps them too, since lipgloss draws no colour then.
func (p Palette) For(profile termenv.Profile) Palette {
	if profile == termenv.TrueColor || profile == termenv.Ascii {
		return p
	}
	conv := func(c *lipgloss.Color) {
		switch v := profile.Color(string(*c)).(type) {
		case termenv.ANSI256Color:
			*c = lipgloss.Color(strconv.Itoa(int(v)))
		case termenv.ANSIColor:
			*c = lipgloss.Color(strconv.Itoa(int(v)))
		}
	}
	for _, c := range []*lipgloss.Color{
		&p.Text, &p.Muted, &p.Subtle, &p.Accent, &p.SelectedFg, &p.SelectedBg, &p.HighlightBg, &p.MatchFg, &p.MatchBg,
		&p.Running, &p.OK, &p.Error, &p.Cancelled, &p.Held, &p.Denied, &p.Warning,
		&p.JSONKey, &p.JSONString, &p.JSONNumber,
	} {
		conv(c)
	}
	return p
}

// Styles is every style the workbench uses, built once from a renderer.
type Styles struct {
	Renderer *lipgloss.Renderer
	// Palette is the palette converted to the renderer's profile (see
	// Palette.For): build any further style from it, not from Dark or
	// Light, or rendering goes back to searching for the nearest colour.
	Palette Palette
	// Colorless is true when the renderer prints no colour at all (NO_COLOR
	// or a dumb terminal); panes then mark state with characters instead.
	Colorless bool

	Header      lipgloss.Style // the header bar
	HeaderTitle lipgloss.Style // the product name in the header
	HeaderKey   lipgloss.Style // labels in the header ("endpoint")
	HeaderValue lipgloss.Style // values in the header

	// The focused pane gets a thick border and the others a thin one, so
	// focus shows even without colour.
	FocusedBorder lipgloss.Border
	BlurredBorder lipgloss.Border
	PaneFocused   lipgloss.Style // colour of the focused pane's border
	PaneBlurred   lipgloss.Style // colour of the other panes' borders
	Title         lipgloss.Style // pane title, focused
	TitleBlur     lipgloss.Style // pane title, not focused

	Text      lipgloss.Style
	Muted     lipgloss.Style
	Bold      lipgloss.Style
	Selected  lipgloss.Style // the selected row
	Highlight lipgloss.Style // the acted-on cell
	Match     lipgloss.Style // text found by a search
	Warning   lipgloss.Style
	Error     lipgloss.Style
	StatusBar lipgloss.Style // the bottom line

	Running   lipgloss.Style
	OK        lipgloss.Style
	Failed    lipgloss.Style
	Cancelled lipgloss.Style
	Held      lipgloss.Style
	Denied    lipgloss.Style

	JSONKey    lipgloss.Style
	JSONString lipgloss.Style
	JSONNumber lipgloss.Style

	// A held call's preview: the lines of a diff, and code by the kind of
	// token (the workbench's lexer says which).
	DiffAdd  lipgloss.Style
	DiffDel  lipgloss.Style
	DiffHunk lipgloss.Style
	Syntax   Syntax
	// Hidden marks what stands in for characters that draw nothing (a
	// control, bidi or zero-width character shown as ⟨ESC⟩) and for what
	// a card folded (a run of blank lines): in reverse video, so it reads
	// as not part of the text in any palette, colour or none.
	Hidden lipgloss.Style

	// Own marks what the person at the workbench did themselves: a call
	// they resent, in the timeline and beside its original.
	Own lipgloss.Style

	Help help.Styles
}

// Syntax styles code by token kind. The colours are the palette's: a
// keyword is drawn like a title, a string like a JSON string, so code reads
// in the same scheme as the rest of the screen.
type Syntax struct {
	Keyword  lipgloss.Style // def, if, import
	Name     lipgloss.Style // the name a def or class introduces, builtins
	String   lipgloss.Style
	Number   lipgloss.Style
	Comment  lipgloss.Style
	Operator lipgloss.Style
	Plain    lipgloss.Style // everything else
}

// NewRenderer returns a renderer writing to w (the TTY), with termenv's
// output options (tests use them to pose as a terminal). It honours
// NO_COLOR (https://no-color.org): any non-empty value selects the Ascii
// profile.
func NewRenderer(w io.Writer, opts ...termenv.OutputOption) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(w, opts...)
	if os.Getenv("NO_COLOR") != "" {
		r.SetColorProfile(termenv.Ascii)
	}
	return r
}

// New builds the styles for r, choosing the light or dark palette from the
// renderer's idea of the terminal background.
func New(r *lipgloss.Renderer) Styles {
	return ForTheme(r, Auto)
}

// ForTheme builds the styles for r with the named theme: Light, Dark, or
// Auto (or "") to ask the terminal for its background. A named theme is
// also set on the renderer, so the terminal is not queried at all.
func ForTheme(r *lipgloss.Renderer, name string) Styles {
	switch name {
	case LightName:
		r.SetHasDarkBackground(false)
	case DarkName:
		r.SetHasDarkBackground(true)
	}
	return NewWithPalette(r, PaletteFor(r.HasDarkBackground(), r.ColorProfile()))
}

// NewWithPalette builds the styles for r with an explicit palette (tests
// and forced themes). The palette is first converted to the renderer's
// colour profile, and Styles.Palette holds the converted colours.
func NewWithPalette(r *lipgloss.Renderer, p Palette) Styles {
	profile := r.ColorProfile()
	p = p.For(profile)
	s := Styles{Renderer: r, Palette: p, Colorless: profile == termenv.Ascii}
	fg := func(c lipgloss.Color) lipgloss.Style { return r.NewStyle().Foreground(c) }

	s.Header = r.NewStyle().Foreground(p.Text)
	s.HeaderTitle = r.NewStyle().Foreground(p.Accent).Bold(true)
	s.HeaderKey = fg(p.Muted)
	s.HeaderValue = fg(p.Text)

	s.FocusedBorder = lipgloss.ThickBorder()
	s.BlurredBorder = lipgloss.NormalBorder()
	s.PaneFocused = fg(p.Accent)
	s.PaneBlurred = fg(p.Subtle)
	s.Title = r.NewStyle().Foreground(p.Accent).Bold(true)
	s.TitleBlur = fg(p.Muted)

	s.Text = fg(p.Text)
	s.Muted = fg(p.Muted)
	s.Bold = r.NewStyle().Bold(true)
	s.Selected = r.NewStyle().Foreground(p.SelectedFg).Background(p.SelectedBg).Bold(true)
	if p.SelectedBg == "" {
		// No selection colour (the 16-colour palettes): reverse video
		// swaps the terminal's own colours, readable on every scheme.
		s.Selected = r.NewStyle().Reverse(true).Bold(true)
	}
	s.Highlight = r.NewStyle().Background(p.HighlightBg)
	if p.HighlightBg == "" {
		s.Highlight = r.NewStyle().Underline(true).Bold(true)
	}
	s.Match = r.NewStyle().Foreground(p.MatchFg).Background(p.MatchBg)
	if p.MatchBg == "" {
		// As the selection: reverse video reads on any 16-colour scheme.
		s.Match = r.NewStyle().Reverse(true)
	}
	s.Warning = fg(p.Warning).Bold(true)
	s.Error = fg(p.Error)
	s.StatusBar = fg(p.Muted)

	s.Running = fg(p.Running)
	s.OK = fg(p.OK)
	s.Failed = fg(p.Error).Bold(true)
	s.Cancelled = fg(p.Cancelled)
	s.Held = fg(p.Held).Bold(true)
	s.Denied = fg(p.Denied)

	s.JSONKey = fg(p.JSONKey)
	s.JSONString = fg(p.JSONString)
	s.JSONNumber = fg(p.JSONNumber)

	s.DiffAdd = fg(p.OK)
	s.DiffDel = fg(p.Error)
	s.DiffHunk = fg(p.Accent)
	s.Hidden = fg(p.Warning).Reverse(true)
	s.Own = fg(p.Accent).Bold(true)
	s.Syntax = Syntax{
		Keyword:  fg(p.Accent).Bold(true),
		Name:     fg(p.Running),
		String:   fg(p.JSONString),
		Number:   fg(p.JSONNumber),
		Comment:  fg(p.Muted).Italic(true),
		Operator: fg(p.Cancelled),
		Plain:    fg(p.Text),
	}

	s.Help = help.Styles{
		Ellipsis:       fg(p.Subtle),
		ShortKey:       fg(p.Accent),
		ShortDesc:      fg(p.Muted),
		ShortSeparator: fg(p.Subtle),
		FullKey:        fg(p.Accent),
		FullDesc:       fg(p.Muted),
		FullSeparator:  fg(p.Subtle),
	}
	return s
}
