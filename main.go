// Command jupyter-mcp-server lets an AI agent read, edit and run Jupyter
// notebooks over MCP while a person watches and steers in a terminal
// workbench. main only turns flags into a configuration and wires the engine,
// the MCP server and the workbench together.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// version is stamped at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "attach":
			return runAttach(args[1:])
		case "replay":
			return runReplay(args[1:])
		}
	}
	passed, err := takeSecrets()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server:", err)
		return 2
	}
	cfg, err := parseConfig(args, withSecrets(getenv, passed), os.Stdout)
	switch {
	case errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errVersion):
		fmt.Println("jupyter-mcp-server", version)
		return 0
	case err != nil:
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server:", err)
		return 2
	}
	if len(cfg.args) > 0 {
		fmt.Fprintf(os.Stderr, "jupyter-mcp-server: unexpected argument %q (see --help)\n", cfg.args[0])
		return 2
	}
	cfg.notePassed(passed)
	if passed == nil && exposedSecrets(cfg, args) {
		// Returns only when starting over failed.
		if err := hideSecrets(cfg, args); err != nil {
			fmt.Fprintln(os.Stderr, "jupyter-mcp-server: warning: the tokens stay in this process's environment or command line, where notebook code can read them:", err)
		}
	}
	scrubEnvironment(cfg)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger, closeLog, err := newLogger(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server:", err)
		return 1
	}
	defer closeLog()

	if err := serve(ctx, cfg, logger); err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server:", err)
		return 1
	}
	return 0
}

// newLogger writes to --log-file, or to stderr. Logs never go to stdout,
// which belongs to the protocol in stdio mode.
func newLogger(cfg *config) (*slog.Logger, func(), error) {
	var w io.Writer = os.Stderr
	closeFile := func() {}
	if path := cfg.LogFile; path != "" {
		// Not through a link someone left at the path.
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|oNoFollow, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot open the log file: %w", err)
		}
		w, closeFile = f, func() { f.Close() }
	} else if workbenchMode(cfg) {
		// The TUI owns the terminal; stderr would draw over it.
		return slog.New(slog.NewTextHandler(io.Discard, nil)), func() {}, nil
	}
	lw := newLogWriter(w)
	return slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: cfg.LogLevel})), func() {
		lw.Close()
		closeFile()
	}, nil
}
