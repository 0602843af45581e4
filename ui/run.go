package ui

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
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
	// ImageProtocol forces how images opened full-window are drawn;
	// "" or auto detects it from the environment and, when that says
	// nothing, by asking the terminal once, before the workbench starts.
	ImageProtocol string
	// Notify is how a held call is announced on the desktop: one of
	// NotifyModes ("" is auto: where the terminal is known to show
	// notices), or off. The bell rings either way.
	Notify string
	// ExportDir is where E writes (Options.ExportDir).
	ExportDir string
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
	//
	// termenv takes any CI variable to mean "not a terminal" and would then
	// draw without colour (no search marks, images as an ASCII ramp): the
	// workbench opened a terminal, so ask the device itself.
	r := theme.NewRenderer(tty, termenv.WithTTY(term.IsTerminal(int(tty.Fd()))))
	styles := theme.ForTheme(r, opts.Theme)
	target := detectImages(tty, ImageProtocol(opts.ImageProtocol))
	passthrough := false
	if os.Getenv("TMUX") != "" && opts.Notify != NotifyOff {
		passthrough = tmuxPassthroughOn()
	}
	bell, notify := terminalAttention(tty, opts.Notify, os.Getenv, passthrough)
	m := NewModel(b, styles, Options{
		Bell:           bell,
		Notify:         notify,
		ImageProtocol:  target.proto,
		ImageReason:    target.reason,
		ImageTmux:      target.tmux,
		TmuxPaneOffset: tmuxPaneOffset,
		CellSize: func() (int, int) {
			if w, h := cellSizeOf(tty); w > 0 && h > 0 {
				return w, h
			}
			return target.cellW, target.cellH
		},
		Copy: func(s string) error {
			r.Output().Copy(s)
			return nil
		},
		FrameInterval: defaultFrameInterval,
		ExportDir:     opts.ExportDir,
	})
	events, stop := b.Subscribe()
	defer stop()
	// The server's state as it is now goes into the first frame (the
	// managed Jupyter server still starting); changes after the
	// subscription arrive as events.
	if s, ok := b.(interface{ ServerState() event.ServerEvent }); ok {
		st := s.ServerState()
		nm, _ := m.Update(eventsMsg{{Type: event.EvServerState, Server: &st}})
		m = nm.(Model)
	}
	p := tea.NewProgram(m,
		tea.WithInput(in), tea.WithOutput(tty),
		tea.WithAltScreen(), tea.WithContext(ctx))
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

// probeTimeout bounds the wait for the terminal's answers at start-up.
// Terminals answer in milliseconds, over ssh in a round trip; one that
// answers nothing costs this once.
const probeTimeout = 500 * time.Millisecond

// detectedImages is how images are drawn, and the cell size the terminal
// told when it was asked.
type detectedImages struct {
	imageTarget
	cellW, cellH int
}

// detectImages decides how images are drawn full-window: forced, or from
// the environment, or by asking the terminal (only when the environment
// says nothing, and never inside tmux, which answers for itself).
func detectImages(tty *os.File, forced ImageProtocol) detectedImages {
	var probe termProbe
	if needsProbe(forced, os.Getenv) {
		probe = probeTerminal(tty, probeTimeout)
	}
	passthrough := false
	if os.Getenv("TMUX") != "" && (forced == "" || forced == ImageAuto) {
		passthrough = tmuxPassthroughOn()
	}
	return detectedImages{chooseProtocol(forced, os.Getenv, passthrough, probe), probe.cellW, probe.cellH}
}

// tmuxPassthroughOn asks tmux whether this pane lets escapes through to
// the terminal around it (allow-passthrough on or all).
func tmuxPassthroughOn() bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tmux", "show-options", "-Apv", "allow-passthrough").Output()
	if err != nil {
		return false
	}
	v := strings.TrimSpace(string(out))
	return v == "on" || v == "all"
}

// tmuxPaneOffset asks tmux where this pane starts in the terminal around
// tmux: the rows above it (the status lines when they are on top, and the
// panes above) and the columns left of it. 0, 0 when tmux does not say.
func tmuxPaneOffset() (rows, cols int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	args := []string{"display-message", "-p"}
	if pane := os.Getenv("TMUX_PANE"); pane != "" {
		args = append(args, "-t", pane)
	}
	out, err := exec.CommandContext(ctx, "tmux", append(args, "#{pane_top} #{pane_left} #{status} #{status-position}")...).Output()
	if err != nil {
		return 0, 0
	}
	return parseTmuxOffset(string(out))
}

// parseTmuxOffset reads tmux's "pane_top pane_left status status-position".
// status is on, off or the number of status lines.
func parseTmuxOffset(s string) (rows, cols int) {
	f := strings.Fields(s)
	if len(f) != 4 {
		return 0, 0
	}
	top, err1 := strconv.Atoi(f[0])
	left, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, 0
	}
	if f[3] == "top" {
		switch n, err := strconv.Atoi(f[2]); {
		case f[2] == "on":
			top++
		case err == nil && n > 0:
			top += n
		}
	}
	return top, left
}

// bridgeBatch bounds the events of one batch, so a flood costs one screen
// update per hundred events.
const bridgeBatch = 100

// bridge is the one goroutine between the engine and the program. Between
// the bus and a frame there is one throttle and the frame limit: the
// backends' subscriptions gather a burst of events before handing them
// over (observe's batch window), and the program draws at most once per
// FrameInterval. The bridge adds no wait of its own: it sends what has
// arrived, up to bridgeBatch events at a time. send (program.Send) blocks
// while the UI is busy; meanwhile events queue and the batches grow, and
// past the bus's bound they are dropped and counted, so tool calls never
// wait for the screen.
func bridge(events <-chan event.Event, send func(tea.Msg), done <-chan struct{}) {
	for {
		var ev event.Event
		var ok bool
		select {
		case ev, ok = <-events:
		case <-done:
			return
		}
		if !ok {
			send(feedClosedMsg{})
			return
		}
		batch := []event.Event{ev}
		closed := false
	more:
		for len(batch) < bridgeBatch {
			select {
			case ev, ok := <-events:
				if !ok {
					closed = true
					break more
				}
				batch = append(batch, ev)
			default:
				break more
			}
		}
		send(eventsMsg(batch))
		if closed {
			send(feedClosedMsg{})
			return
		}
	}
}
