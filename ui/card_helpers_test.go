package ui

// aside puts aside the card a held call opened (esc), for the tests of the
// panes behind it: the call stays held and selected.
func aside(m Model) Model { return keys(m, "esc") }

// settled moves back the moment the held call on screen changed, past the
// guard that asks again for a decision key pressed right after it.
func settled(m Model) Model {
	m.card.changed = m.card.changed.Add(-cardSettle)
	return m
}
