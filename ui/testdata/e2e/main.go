// Command e2e runs the workbench on a recording for the tmux end-to-end
// test. Actions are not refused as in a replay: each is appended to a log
// file, so the test can check that keys reach the backend.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui"
)

// loggingBackend plays a recording and logs the actions asked of it.
type loggingBackend struct {
	ui.Backend
	mu  sync.Mutex
	log *os.File
}

func (b *loggingBackend) write(format string, args ...any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := fmt.Fprintf(b.log, format+"\n", args...)
	return err
}

func (b *loggingBackend) Info() observe.HeaderInfo {
	return observe.HeaderInfo{Endpoint: "http://127.0.0.1:4040/mcp", Token: "e2e-secret-token-0123456789", Mode: "e2e", Version: "test"}
}

func (b *loggingBackend) InterruptKernel(_ context.Context, id string) error {
	return b.write("interrupt %s", id)
}
func (b *loggingBackend) CancelCall(id string) error { return b.write("cancel %s", id) }
func (b *loggingBackend) SetPaused(p bool) error     { return b.write("paused %v", p) }
func (b *loggingBackend) Decide(id string, v calls.Verdict) error {
	if v.Plain() {
		return b.write("decide %s %v", id, v.Allow)
	}
	return b.write("settle %s allow=%v session=%v reason=%q args=%s", id, v.Allow, v.ForSession, v.Reason, v.Args)
}
func (b *loggingBackend) RevokeAllowed() error { return b.write("revoke") }

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: e2e RECORDING ACTIONLOG")
		os.Exit(2)
	}
	replay, err := observe.Replay(os.Args[1], observe.ReplayOptions{Speed: -1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	log, err := os.Create(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer log.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := ui.Run(ctx, &loggingBackend{Backend: replay, log: log}, ui.RunOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
