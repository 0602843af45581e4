package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui"
)

// feedRecord is what a stdio server writes so that "attach" can find its
// live feed without the user copying an address around. The file is private
// to the user (0600) because the token lets its holder interrupt kernels.
type feedRecord struct {
	PID     int       `json:"pid"`
	URL     string    `json:"url"`
	Token   string    `json:"token"`
	Started time.Time `json:"started"`
	Jupyter string    `json:"jupyter"`
}

// feedDir is where feed records live: the user's runtime directory.
func feedDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "jupyter-mcp-server")
	}
	return tempFeedDir()
}

// startFeed serves the live feed (engine events out, human actions in) on a
// loopback websocket and records where it is.
func startFeed(ctx context.Context, eng *engine.Engine, info observe.HeaderInfo, addr string, logger *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 16)
	rand.Read(b)
	token := hex.EncodeToString(b)
	mux := http.NewServeMux()
	mux.Handle("/feed", observe.ServeFeed(eng, info, token))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)

	rec := feedRecord{PID: os.Getpid(), URL: "ws://" + ln.Addr().String() + "/feed", Token: token, Started: time.Now(), Jupyter: info.JupyterURL}
	dir := feedDir()
	path := filepath.Join(dir, fmt.Sprintf("feed-%d.json", os.Getpid()))
	if err := os.MkdirAll(dir, 0o700); err == nil {
		data, _ := json.Marshal(rec)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			logger.Warn("cannot record the feed address", "err", err)
		}
	}
	logger.Info("live feed", "url", rec.URL, "attach", "jupyter-mcp-server attach")
	return func() {
		os.Remove(path)
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}, nil
}

// liveFeeds lists the feed records of running servers, newest first, and
// removes those whose process is gone.
func liveFeeds() []feedRecord {
	files, _ := filepath.Glob(filepath.Join(feedDir(), "feed-*.json"))
	var out []feedRecord
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var r feedRecord
		if json.Unmarshal(data, &r) != nil || !processAlive(r.PID) {
			os.Remove(f)
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out
}

// runAttach opens the workbench on a running stdio server's live feed: the
// newest one, or the one whose PID or URL is given.
func runAttach(args []string) int {
	feeds := liveFeeds()
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Println("usage: jupyter-mcp-server attach [PID|ws://ADDRESS/feed]\n\nOpens the workbench on a running 'jupyter-mcp-server --transport stdio'.\nWith no argument it attaches to the newest one started by this user.")
		return 0
	}
	th, err := envTheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server attach:", err)
		return 2
	}
	var pick *feedRecord
	for i := range feeds {
		if len(args) == 0 || fmt.Sprint(feeds[i].PID) == args[0] || feeds[i].URL == args[0] {
			pick = &feeds[i]
			break
		}
	}
	if pick == nil {
		if len(args) == 0 {
			fmt.Fprintln(os.Stderr, "jupyter-mcp-server attach: no running stdio server found (start one with --transport stdio; its feed is recorded under "+feedDir()+")")
		} else {
			fmt.Fprintf(os.Stderr, "jupyter-mcp-server attach: no running stdio server matches %q\n", args[0])
		}
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	feed, err := observe.Dial(dctx, pick.URL, pick.Token)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server attach:", err)
		return 1
	}
	if err := ui.Run(ctx, feed, ui.RunOptions{Theme: th, ImageProtocol: envImageProtocol(), ExportDir: exportsDir("")}); err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server attach:", err)
		return 1
	}
	return 0
}

// envTheme is the workbench theme for attach and replay, which take no
// flags: the --theme option's environment variable, checked by the same
// entry of the option table.
func envTheme() (string, error) {
	var c config
	for _, o := range c.options() {
		if o.name != "theme" {
			continue
		}
		v := os.Getenv(o.env)
		if v == "" {
			v = o.def
		}
		if allowed := o.set.parse(v); allowed != "" {
			return "", fmt.Errorf("%s=%q is not valid: %s", o.env, v, allowed)
		}
	}
	return c.Theme, nil
}

// envImageProtocol is --image-protocol for attach and replay, which take no
// flags: its environment variable, checked by the same entry of the option
// table; a value it refuses is auto.
func envImageProtocol() string {
	var c config
	for _, o := range c.options() {
		if o.name != "image-protocol" {
			continue
		}
		v := os.Getenv(o.env)
		if v == "" || o.set.parse(v) != "" {
			o.set.parse(o.def)
		}
	}
	return c.ImageProtocol
}

// startRecorder writes every event to path as JSON lines, secrets redacted.
// The function it returns writes what is still buffered, syncs the file and
// closes it; serve calls it once the MCP transport has stopped (so the last
// call's result is in), whichever way the run ended.
func startRecorder(eng *engine.Engine, path string, secrets []string, logger *slog.Logger) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open the record file: %w", err)
	}
	rec := observe.NewRecorder(f, eng, secrets)
	return func() {
		err := rec.Close()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			logger.Error("the recording may be incomplete", "file", path, "err", err)
		}
	}, nil
}
