package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui"
)

// feedRecord is what a stdio server writes so that "attach" can find its
// live feed without the user copying an address around: a unix socket in
// the same private directory (no token: the directory keeps other users
// out), or on loopback TCP (Windows, or --feed HOST:PORT) with a token that
// keeps out other users of the machine. Neither keeps out code running as
// our own user, which can read the record and reach the socket: an attached
// workbench only watches until the person at the MCP host pairs it
// (engine/observe/pairing.go).
type feedRecord struct {
	PID     int       `json:"pid"`
	URL     string    `json:"url"`
	Token   string    `json:"token,omitempty"`
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

// feedAddr is the feed's address as --feed gives it: "auto" is a unix
// socket in the feed directory (loopback TCP where there are no unix
// sockets); anything else is a TCP address.
func feedListen(addr, dir string) (net.Listener, string, string, error) {
	if addr == "auto" && unixFeeds {
		sock := filepath.Join(dir, fmt.Sprintf("feed-%d.sock", os.Getpid()))
		// A socket left by a process that had our pid before.
		if err := os.Remove(sock); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, "", "", err
		}
		ln, err := net.Listen("unix", sock)
		if err != nil {
			return nil, "", "", err
		}
		return ln, "unix:" + sock, "", nil
	}
	if addr == "auto" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", "", err
	}
	b := make([]byte, 16)
	rand.Read(b)
	return ln, "ws://" + ln.Addr().String() + "/feed", hex.EncodeToString(b), nil
}

// startFeed serves the live feed (engine events out, the person's actions
// in, from paired workbenches only) and records where it is.
func startFeed(eng *engine.Engine, info observe.HeaderInfo, addr string, opts observe.FeedOptions, logger *slog.Logger) (func(), error) {
	dir := feedDir()
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	ln, url, token, err := feedListen(addr, dir)
	if err != nil {
		return nil, err
	}
	opts.Token = token
	opts.PairTimeout = eng.Calls().ApprovalTimeout()
	feed := observe.ServeFeed(eng, info, opts)
	srv := feed.Serve(ln)

	rec := feedRecord{PID: os.Getpid(), URL: url, Token: token, Started: time.Now(), Jupyter: info.JupyterURL}
	path := filepath.Join(dir, fmt.Sprintf("feed-%d.json", os.Getpid()))
	data, _ := json.Marshal(rec)
	if err := writePrivate(path, data); err != nil {
		logger.Warn("cannot record the feed address", "err", err)
	}
	logger.Info("live feed", "url", rec.URL, "attach", "jupyter-mcp-server attach")
	return func() {
		os.Remove(path)
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		feed.Close()
		if strings.HasPrefix(url, "unix:") {
			os.Remove(strings.TrimPrefix(url, "unix:"))
		}
	}, nil
}

// privateDir makes dir if it is missing (its parent must exist), then
// checks it (checkPrivateDir: ours, private, no link).
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("the feed directory %s: %w", dir, err)
	}
	return checkPrivateDir(dir)
}

// writePrivate writes data to path, mode 0600, never through a link: into
// a file of its own made beside it (O_EXCL, O_NOFOLLOW), renamed over path
// (a rename replaces a link at path, it does not follow it).
func writePrivate(path string, data []byte) error {
	b := make([]byte, 8)
	rand.Read(b)
	tmp := path + "." + hex.EncodeToString(b) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// readPrivate reads a file that must be a regular file, not a link.
func readPrivate(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// liveFeeds lists the feed records of running servers, newest first, and
// removes those whose process is gone. A feed directory that is not ours
// and private is not read.
func liveFeeds() ([]feedRecord, error) {
	dir := feedDir()
	if err := checkPrivateDir(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	files, _ := filepath.Glob(filepath.Join(dir, "feed-*.json"))
	var out []feedRecord
	for _, f := range files {
		data, err := readPrivate(f)
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
	return out, nil
}

const attachUsage = `usage: jupyter-mcp-server attach [--watch] [PID|ADDRESS]

Opens the workbench on a running 'jupyter-mcp-server --transport stdio'.
With no argument it attaches to the newest one started by this user.

To decide held calls and act for you (undo, interrupt, cancel, pause), the
workbench is paired first: it shows a code, and your MCP host asks you to
type it. Code running as your user (a notebook's kernel) can attach too, but
cannot answer your host's question, so it only ever watches. --watch skips
the pairing.
`

// runAttach opens the workbench on a running stdio server's live feed: the
// newest one, or the one whose PID or URL is given, paired unless --watch
// says to watch only.
func runAttach(args []string) int {
	watch := false
	var rest []string
	for _, a := range args {
		switch a {
		case "-h", "--help":
			fmt.Print(attachUsage)
			return 0
		case "--watch", "-watch":
			watch = true
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) > 1 {
		fmt.Fprint(os.Stderr, attachUsage)
		return 2
	}
	th, err := envTheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server attach:", err)
		return 2
	}
	feeds, err := liveFeeds()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server attach:", err)
		return 1
	}
	var pick *feedRecord
	for i := range feeds {
		if len(rest) == 0 || fmt.Sprint(feeds[i].PID) == rest[0] || feeds[i].URL == rest[0] {
			pick = &feeds[i]
			break
		}
	}
	if pick == nil {
		if len(rest) == 0 {
			fmt.Fprintln(os.Stderr, "jupyter-mcp-server attach: no running stdio server found (start one with --transport stdio; its feed is recorded under "+feedDir()+")")
		} else {
			fmt.Fprintf(os.Stderr, "jupyter-mcp-server attach: no running stdio server matches %q\n", rest[0])
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
	if !watch {
		if err := pairAttach(ctx, feed, pick.PID, os.Stdout); err != nil {
			if ctx.Err() != nil {
				return 1
			}
			feed.WatchOnly(err.Error())
		}
	}
	if err := ui.Run(ctx, feed, ui.RunOptions{Theme: th, ImageProtocol: envImageProtocol(), Notify: envNotify(), ExportDir: exportsDir("")}); err != nil {
		fmt.Fprintln(os.Stderr, "jupyter-mcp-server attach:", err)
		return 1
	}
	return 0
}

// pairAttach pairs the attached workbench: it shows the code the feed
// sends and waits for the person at the MCP host to type it there.
func pairAttach(ctx context.Context, feed *observe.RemoteSource, pid int, out io.Writer) error {
	if why := feed.CanPair(); why != "" {
		return fmt.Errorf("not paired: %s", why)
	}
	err := feed.Pair(ctx, func(code string) {
		fmt.Fprintf(out, "To let this terminal decide held calls and act for you on server %d, type this code\n"+
			"into the question your MCP host now shows:\n\n    %s\n\n"+
			"(Ctrl-C quits; attach --watch only watches.) Waiting for your host...\n", pid, code)
	})
	if err != nil {
		return fmt.Errorf("not paired: %v", err)
	}
	return nil
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
func envImageProtocol() string { return envOption("image-protocol").ImageProtocol }

// envNotify is --notify for attach, as envImageProtocol.
func envNotify() string { return envOption("notify").Notify }

// envOption is a config with the option name set from its environment
// variable, or to its default when the variable is unset or refused.
func envOption(name string) *config {
	c := &config{}
	for _, o := range c.options() {
		if o.name != name {
			continue
		}
		v := os.Getenv(o.env)
		if v == "" || o.set.parse(v) != "" {
			o.set.parse(o.def)
		}
	}
	return c
}

// startRecorder writes every event to path as JSON lines, secrets redacted.
// The function it returns writes what is still buffered, syncs the file and
// closes it; serve calls it once the MCP transport has stopped (so the last
// call's result is in), whichever way the run ended.
func startRecorder(eng *engine.Engine, path string, secrets []string, logger *slog.Logger) (func(), error) {
	// Not through a link someone left at the path.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|oNoFollow, 0o600)
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
