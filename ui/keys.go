package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key binding of the workbench, grouped by pane. Bindings
// that do not apply at the moment (approve when nothing is held, filter
// outside the calls pane) are disabled so that the help shows only what
// works.
type KeyMap struct {
	// Global.
	NextPane  key.Binding
	PrevPane  key.Binding
	Help      key.Binding
	Quit      key.Binding
	Wider     key.Binding
	Narrower  key.Binding
	Taller    key.Binding
	Shorter   key.Binding
	CopyToken key.Binding
	ShowToken key.Binding
	Zoom      key.Binding
	CopyCall  key.Binding
	Export    key.Binding
	Stats     key.Binding

	// Actions on the engine.
	Pause     key.Binding
	Interrupt key.Binding
	Cancel    key.Binding
	Approve   key.Binding
	Deny      key.Binding
	// A held call, beyond allow and deny.
	AllowSession key.Binding
	RevokeAll    key.Binding
	DenyReason   key.Binding
	EditArgs     key.Binding
	// The held-call card (card.go): the next held call, or the card back
	// when it was put aside; put the card aside (the call stays held).
	NextHeld key.Binding
	Later    key.Binding
	// Undo of a finished call's change (u u).
	Undo key.Binding
	// Resend the selected call, its arguments edited (resend.go).
	Resend key.Binding

	// Replay of a recording (enabled only there).
	ReplayPause key.Binding
	ReplayStep  key.Binding

	// Moving in the focused pane.
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding

	// Calls pane. n and N step through the matches of a search, unless
	// the selected call is held: then n denies it (Deny comes first).
	Filter      key.Binding
	ClearFilter key.Binding
	NextMatch   key.Binding
	PrevMatch   key.Binding

	// Stats view.
	StatsSort key.Binding
	StatsOpen key.Binding

	// Detail pane.
	Toggle key.Binding

	// Notebook pane.
	OpenImage    key.Binding
	PrevNotebook key.Binding
	NextNotebook key.Binding
}

// DefaultKeyMap returns the workbench's key bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NextPane:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:  key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Wider:     key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "widen left column")),
		Narrower:  key.NewBinding(key.WithKeys("["), key.WithHelp("[", "narrow left column")),
		Taller:    key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "grow pane")),
		Shorter:   key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "shrink pane")),
		CopyToken: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "copy token")),
		ShowToken: key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "show the token")),
		Zoom:      key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "zoom pane")),
		CopyCall:  key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "copy call as JSON")),
		Export:    key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "export shown calls (JSONL)")),
		Stats:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "stats")),

		Pause:     key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause new calls")),
		Interrupt: key.NewBinding(key.WithKeys("i"), key.WithHelp("i i", "interrupt kernel")),
		Cancel:    key.NewBinding(key.WithKeys("x"), key.WithHelp("x x", "cancel call")),
		Approve:   key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "allow held call")),
		Deny:      key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "deny held call")),
		Undo:      key.NewBinding(key.WithKeys("u"), key.WithHelp("u u", "undo the call's change")),
		Resend:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "resend call (edit arguments)")),

		ReplayPause: key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "pause replay"), key.WithDisabled()),
		ReplayStep:  key.NewBinding(key.WithKeys("."), key.WithHelp(".", "step one call"), key.WithDisabled()),

		AllowSession: key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "allow this tool for the session")),
		RevokeAll:    key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "revoke tools allowed for sessions")),
		DenyReason:   key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "deny with a reason")),
		EditArgs:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit arguments, then allow")),
		NextHeld:     key.NewBinding(key.WithKeys("H"), key.WithHelp("H", "show the held calls")),
		Later:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "later (it stays held)"), key.WithDisabled()),

		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "first")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "last (follow)")),

		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		ClearFilter: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear search")),
		NextMatch:   key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next match")),
		PrevMatch:   key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous match")),

		StatsSort: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "sort by next column")),
		StatsOpen: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "show slow call")),

		Toggle: key.NewBinding(key.WithKeys("enter", " "), key.WithHelp("enter/space", "fold/unfold")),

		OpenImage:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open image full-window")),
		PrevNotebook: key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "previous notebook")),
		NextNotebook: key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "next notebook")),
	}
}

// ShortHelp is the one-line help at the bottom: the keys that work now.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.NextPane, k.Filter, k.NextMatch, k.PrevMatch, k.StatsSort, k.StatsOpen, k.Toggle, k.OpenImage, k.ReplayPause, k.ReplayStep, k.Approve, k.Deny, k.EditArgs, k.NextHeld, k.Later, k.Interrupt, k.Cancel, k.Undo, k.Resend, k.Pause, k.Stats, k.Help, k.Quit}
}

// FullHelp is the `?` screen, one column per group.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.NextPane, k.PrevPane, k.Zoom, k.Wider, k.Narrower, k.Taller, k.Shorter, k.CopyToken, k.ShowToken, k.CopyCall, k.Export, k.Stats, k.Help, k.Quit},
		{k.Pause, k.Interrupt, k.Cancel, k.Undo, k.Resend, k.Approve, k.AllowSession, k.Deny, k.DenyReason, k.EditArgs, k.NextHeld, k.Later, k.RevokeAll, k.ReplayPause, k.ReplayStep},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Filter, k.ClearFilter, k.NextMatch, k.PrevMatch, k.Toggle, k.OpenImage, k.PrevNotebook, k.NextNotebook, k.StatsSort, k.StatsOpen},
	}
}

// helpGroupTitles name the FullHelp columns.
var helpGroupTitles = []string{"Workbench", "Actions", "Move", "Pane"}
