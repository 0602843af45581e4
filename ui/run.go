package ui

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/theme"
)

// RunOptions tune Run.
type RunOptions struct {
	// TTY is the terminal device to draw on and read keys from. Default
	// /dev/tty (on Windows the console, CONIN$ and CONOUT$): stdin and
	// stdout may carry the MCP protocol.
	TTY string
	// Theme is theme.LightName, theme.DarkName, or theme.Auto ("" too):
	// follow the terminal's background.
	Theme string
}

// Run shows the workbench on the terminal until the person quits or ctx is
// done. It opens the TTY for input and output, builds the styles for it,
// subscribes to the backend and feeds events through one bridge goroutine.
func Run(ctx context.Context, b Backend, opts RunOptions) error {
	in, tty, err := openTerminal(opts.TTY)
	if err != nil {
		return err
	}
	defer tty.Close()
	if in != tty {
		defer in.Close()
	}

	// The renderer asks the terminal for its background colour (unless a
	// theme was named): do it before bubbletea starts reading keys from the
	// same TTY.
	r := theme.NewRenderer(tty)
	styles := theme.ForTheme(r, opts.Theme)
	m := NewModel(b, styles, Options{
		Copy: func(s string) error {
			r.Output().Copy(s)
			return nil
		},
		FrameInterval: defaultFrameInterval,
	})
	p := tea.NewProgram(m,
		tea.WithInput(in), tea.WithOutput(tty),
		tea.WithAltScreen(), tea.WithContext(ctx))

	events, stop := b.Subscribe()
	defer stop()
	done := make(chan struct{})
	defer close(done)
	go bridge(events, p.Send, done)

	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		// Cancelled from outside (signal, server shutdown): not a failure.
		return nil
	}
	return err
}

// Bridge batching: a batch is sent when it holds bridgeBatch events or when
// its first event is bridgeDelay old, so a flood costs one screen update per
// hundred events and a lone event shows within a frame.
const (
	bridgeBatch = 100
	bridgeDelay = 16 * time.Millisecond
)

// bridge is the one goroutine between the engine and the program. send
// (program.Send) blocks while the UI is busy; meanwhile the bus buffers and,
// past its bound, drops and counts, so tool calls never wait for the screen.
func bridge(events <-chan engine.Event, send func(tea.Msg), done <-chan struct{}) {
	var batch []engine.Event
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	flush := func() {
		if len(batch) > 0 {
			send(eventsMsg(batch))
			batch = nil
		}
		timer.Stop()
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				flush()
				send(feedClosedMsg{})
				return
			}
			batch = append(batch, ev)
			if len(batch) == 1 {
				timer.Reset(bridgeDelay)
			}
			if len(batch) >= bridgeBatch {
				flush()
			}
		case <-timer.C:
			flush()
		case <-done:
			return
		}
	}
}
