package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
)

// Undo: `u` `u` on a finished call whose change to a notebook the engine
// keeps reverts that change. The engine refuses when a later change touched
// the same cells; the status line then says which. An undo is an entry of
// the timeline itself, and can be undone the same way.

// undoTarget is the selected call when it can be undone: finished, with
// its change kept (the engine says so when the call finishes).
func (m *Model) undoTarget() *observe.Call {
	if m.focus != FocusCalls && m.focus != FocusDetail {
		return nil
	}
	c := m.selectedCall()
	if c == nil || !c.Undoable || c.Status == event.CallRunning || c.Status == event.CallHeld {
		return nil
	}
	return c
}

// callLabel names a call as the timeline shows it: "insert_cell 14:31:23".
func callLabel(c *observe.Call) string {
	return c.Tool + " " + c.Started.Local().Format("15:04:05")
}

// undoCmd asks the backend to undo the call, reporting in the status line.
func (m Model) undoCmd(callID string) tea.Cmd {
	b := m.backend
	label := callID
	if c := m.st.Call(callID); c != nil {
		label = callLabel(c)
	}
	return func() tea.Msg {
		if err := b.Undo(callID); err != nil {
			return actionDoneMsg{"could not undo " + label, err}
		}
		return actionDoneMsg{"undid " + label, nil}
	}
}
