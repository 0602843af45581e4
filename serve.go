package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/observe"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/secret"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/mcp/guard"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/ui"
	"golang.org/x/term"
)

// serialSavesEnv, set to 1, turns group commit off (engine.Config.
// SerialSaves): every mutation is saved on its own. It is no option for
// users: make bench sets it on the baseline server it compares group commit
// with.
const serialSavesEnv = "JUPYTER_MCP_SERIAL_SAVES"

// workbenchMode reports whether this run shows the TUI in this terminal: no
// transport given and stdin is a terminal, or streamable HTTP with --tui.
func workbenchMode(cfg *config) bool {
	switch cfg.Transport {
	case "":
		return term.IsTerminal(int(os.Stdin.Fd()))
	case "streamable-http":
		return cfg.TUI
	}
	return false
}

// transport is the transport this run serves: the flag's, or with none
// given, streamable HTTP under the workbench in a terminal and stdio when an
// MCP host spawned us with pipes.
func transport(cfg *config) string {
	if t := cfg.Transport; t != "" {
		return t
	}
	if term.IsTerminal(int(os.Stdin.Fd())) {
		return "streamable-http"
	}
	return "stdio"
}

// serve starts (or connects to) Jupyter, builds the engine and the MCP
// server, and runs the chosen mode until ctx ends.
func serve(ctx context.Context, cfg *config, logger *slog.Logger) error {
	// Bind the HTTP endpoint first: a port in use is then reported at once,
	// before a Jupyter server is started for nothing.
	var ln net.Listener
	if transport(cfg) != "stdio" {
		var err error
		if ln, err = listen(cfg); err != nil {
			return err
		}
		defer ln.Close()
	}
	managed, err := startManaged(ctx, cfg, logger)
	if err != nil {
		return err
	}
	jupyterURL, jupyterToken := cfg.JupyterURL, cfg.JupyterToken
	if managed != nil {
		defer managed.Stop()
		jupyterURL, jupyterToken = managed.URL, managed.Token
	}
	eng, err := engine.New(ctx, engine.Config{
		JupyterURL:      jupyterURL,
		JupyterToken:    jupyterToken,
		JupyterStarting: managed != nil,
		CheckLater:      managed == nil,
		DefaultTimeout:  cfg.Timeout,
		MaxTimeout:      cfg.MaxTimeout,
		MaxOutputBytes:  cfg.MaxOutput,
		Capabilities:    capabilities(cfg),
		SandboxVariant:  cfg.SandboxVariant,
		Python:          cfg.Python,
		KeepKernels:     cfg.KeepKernels,
		SerialSaves:     os.Getenv(serialSavesEnv) == "1",
		WatchInterval:   cfg.WatchInterval,
		CreatedHeading:  mcp.CreatedNotebookHeading,
		Logger:          logger,
	})
	if err != nil {
		return err
	}
	defer eng.Close()
	eng.Calls().SetApproval(cfg.Approve, cfg.ApproveTimeout)
	var tell io.Writer // where a managed server's failure is told in full
	if !workbenchMode(cfg) {
		tell = os.Stderr // under the workbench the screen says it
	}
	if managed != nil {
		followManaged(managed, eng, logger, tell)
	}
	go watchJupyter(ctx, eng, logger)

	// The MCP token is chosen before the recorder starts so that a
	// recording redacts it too.
	secrets := []string{jupyterToken}
	var token string
	if transport(cfg) != "stdio" {
		if token, err = mcpToken(cfg); err != nil {
			return err
		}
		secrets = append(secrets, token)
	}
	if path := cfg.Record; path != "" {
		stopRec, err := startRecorder(eng, path, secrets, logger)
		if err != nil {
			return err
		}
		defer stopRec()
	}

	if len(cfg.Peers) > 0 && cfg.Instance == "" {
		return fmt.Errorf("--peers needs --instance: this replica's name, as its peers list it")
	}
	// Building the MCP server (every tool's schemas) takes tens of
	// milliseconds: the workbench does not wait for it (see lateHandler).
	newServer := func() *mcp.Server {
		return mcp.New(eng, mcp.Options{
			Version:        version,
			Images:         cfg.Images,
			Logger:         logger,
			SessionTimeout: cfg.SessionTimeout,
			MaxSessions:    cfg.MaxSessions,
			MaxBodyBytes:   cfg.MaxBody,
			// The guard (httpHandler) checks the Host header.
			HostsCheckedInFront: true,
			TrustClientApproval: cfg.TrustClientApproval,
			Instance:            cfg.Instance,
			Peers:               cfg.Peers,
			TaskAfter:           taskAfter(cfg.TaskAfter),
			MaxTasks:            cfg.MaxTasks,
			MaxTaskBytes:        int(cfg.MaxTaskBytes),
		})
	}
	info := observe.HeaderInfo{JupyterURL: eng.JupyterURL(), Version: version}
	if transport(cfg) == "stdio" {
		return serveStdio(ctx, cfg, eng, info, newServer, logger)
	}
	return serveHTTP(ctx, cfg, ln, eng, info, token, newServer, logger)
}

// startManaged starts the managed Jupyter server when no --jupyter-url was
// given (nil otherwise), rooted at --root-dir or the working directory. The
// server is not waited for: the workbench draws and MCP answers at once,
// and calls that need Jupyter wait until it is up (or fail saying why it
// could not start).
func startManaged(ctx context.Context, cfg *config, logger *slog.Logger) (*jupyter.Managed, error) {
	if cfg.JupyterURL != "" {
		return nil, nil
	}
	root := cfg.RootDir
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		root = wd
	}
	logger.Info("starting a managed Jupyter server", "root", root)
	return jupyter.LaunchManaged(ctx, jupyter.ManagedOptions{
		RootDir: root,
		Python:  cfg.Python,
		Log:     slogWriter{logger},
		// The server's own kernel restarter stays on: without it
		// jupyter_server never notices a kernel dying and nothing tells
		// the websocket. The engine still reports the death (and the lost
		// state) unless kernel.auto-restart is on.
		Restart: true,
	})
}

// watchJupyter keeps the header's word on Jupyter's health current (up,
// refusing the token, not answering), checking beside the start-up, not
// before it: a far server would delay the first frame and the initialize
// answer. The log gets one line per change.
func watchJupyter(ctx context.Context, eng *engine.Engine, logger *slog.Logger) {
	eng.WatchJupyter(ctx, engine.JupyterCheckInterval, func(state, problem string) {
		switch state {
		case event.JupyterUp:
			logger.Info("the Jupyter server answers and takes the token", "url", eng.JupyterURL())
		default:
			logger.Warn("the Jupyter server does not answer as it should; calls that need it will fail until it does", "err", problem)
		}
	})
}

// followManaged tells the engine of every state of the managed server:
// starting, up, failed to start; and a server that dies is started again at
// the same address, calls meanwhile failing at once saying so. The header
// shows each; the log gets one line per change.
//
// A failure to start is told to tell (stderr, headless) in full, as the
// lines it is written in: the log's one line quotes them into one.
func followManaged(managed *jupyter.Managed, eng *engine.Engine, logger *slog.Logger, tell io.Writer) {
	up, down := false, false
	managed.OnState(func(st jupyter.ServerState) {
		switch st.Phase {
		case jupyter.PhaseStarting:
		case jupyter.PhaseFailed:
			if tell == nil {
				logger.Error("the managed Jupyter server failed to start", "problem", st.Problem)
			} else {
				first, _, _ := strings.Cut(st.Problem, "\n")
				logger.Error("the managed Jupyter server failed to start (all of it on stderr)", "problem", first)
				fmt.Fprint(tell, failedToStart(st.Problem))
			}
		case jupyter.PhaseUp:
			switch {
			case !up:
				up = true
				logger.Info("the managed Jupyter server is up", "url", managed.URL, "python", managed.Python, "found", managed.PythonFrom)
			case down:
				down = false
				logger.Info("the managed Jupyter server is back", "url", managed.URL)
			}
		default:
			down = true
			// Each attempt is announced with its delay, then again as it
			// begins; one log line is enough.
			if !st.Retry.IsZero() {
				logger.Warn("the managed Jupyter server is down", "state", st.Phase, "attempt", st.Attempt, "cause", st.Cause, "problem", st.Problem)
			}
		}
		eng.SetJupyterState(st)
	})
}

// serveStdio serves MCP on stdin/stdout, with the live feed for attach when
// --feed asks for it, until the host closes stdin or ctx ends.
func serveStdio(ctx context.Context, cfg *config, eng *engine.Engine, info observe.HeaderInfo, newServer func() *mcp.Server, logger *slog.Logger) error {
	info.Mode = "stdio"
	srv := newServer()
	if addr := cfg.Feed; addr != "" && addr != "off" {
		// An attached workbench is paired by the person at our host, the
		// one channel to them that code in a kernel cannot open.
		stopFeed, err := startFeed(eng, info, addr, observe.FeedOptions{Pair: srv.AskHostToPair, CanPair: srv.HostCanPair}, logger)
		if err != nil {
			logger.Warn("live feed not started", "err", err)
		} else {
			defer stopFeed()
		}
	}
	// A signal ending the session (ctx done) is a clean end, like the host
	// closing stdin: exit 0 once everything is shut down.
	if err := srv.RunStdio(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// serveHTTP serves MCP over streamable HTTP on ln, with the workbench in
// this terminal when workbenchMode says so, until ctx ends.
func serveHTTP(ctx context.Context, cfg *config, ln net.Listener, eng *engine.Engine, info observe.HeaderInfo, token string, newServer func() *mcp.Server, logger *slog.Logger) error {
	info.Mode = "streamable-http"
	late := &lateHandler{ready: make(chan struct{})}
	handler, err := httpHandler(cfg, late, token, logger)
	if err != nil {
		return err
	}
	// The person resends calls (r) as the workbench's own MCP session,
	// through this server like any client's: its caller is set once the
	// server is built (until then, a resend says it cannot be made).
	var wc *mcp.WorkbenchCaller
	go func() {
		srv := newServer()
		if workbenchMode(cfg) {
			wc = srv.WorkbenchCaller()
			eng.Calls().SetWorkbenchCaller(wc)
		}
		late.h = srv.HTTPHandler()
		close(late.ready)
	}()
	info.Endpoint = "http://" + ln.Addr().String() + "/mcp"
	info.Token = token
	httpSrv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		httpSrv.Shutdown(sctx)
	}()
	if workbenchMode(cfg) {
		defer func() {
			<-late.ready
			wc.Close()
		}()
		return ui.Run(ctx, observe.Local(eng, info), ui.RunOptions{Theme: cfg.Theme, ImageProtocol: cfg.ImageProtocol, Notify: cfg.Notify, ExportDir: exportsDir(servedRoot(cfg))})
	}
	shown := token
	if from := cfg.origin(&cfg.MCPToken).from; from != "default" {
		// The user chose this token; it may be reused elsewhere and end up
		// in CI logs, so only a generated one is printed whole.
		shown = secret.Mask(token) + " (from " + from + ")"
	}
	fmt.Fprintf(os.Stderr, "MCP endpoint: %s\nBearer token: %s\n", info.Endpoint, shown)
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}

// capabilities lists the switchable behaviours with where each value came
// from, for capabilities://.
func capabilities(cfg *config) []engine.Capability {
	c := func(name string, field *bool, desc string) engine.Capability {
		o := cfg.origin(field)
		return engine.Capability{Name: name, Enabled: *field, Value: o.raw, Source: o.from, Description: desc}
	}
	return []engine.Capability{
		c(engine.CapKernelAutoRestart, &cfg.KernelAutoRestart, "A kernel that dies mid-execution is replaced with a fresh one; the result says its state was lost."),
		c(engine.CapInterruptOnTimeout, &cfg.InterruptOnTimeout, "An execution that outlasts its call's timeout is interrupted, as the reference does; off, it goes on and its outputs keep being saved into the notebook."),
		c(engine.CapImages, &cfg.Images, "image/png and image/jpeg outputs are returned as image content."),
	}
}

// mcpToken is the bearer token HTTP clients must present: --mcp-token, or a
// random one generated for this run.
func mcpToken(cfg *config) (string, error) {
	if t := cfg.MCPToken; t != "" {
		return t, nil
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// listen binds the MCP endpoint. A port already in use is reported with
// what to do about it.
func listen(cfg *config) (net.Listener, error) {
	addr := net.JoinHostPort(cfg.Bind, strconv.Itoa(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if isAddrInUse(err) {
			return nil, fmt.Errorf("port %d is already in use on %s: pass --port N (or PORT=N) to use another one", cfg.Port, cfg.Bind)
		}
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	return ln, nil
}

// httpHandler guards the MCP endpoint: token, Origin, Host, body size.
func httpHandler(cfg *config, mcpHandler http.Handler, token string, logger *slog.Logger) (http.Handler, error) {
	bind := cfg.Bind
	if !guard.IsLoopback(bind) {
		logger.Warn("the MCP endpoint is bound to a non-loopback address: anyone who can reach it and has the token can run code", "bind", bind)
		fmt.Fprintf(os.Stderr, "WARNING: serving MCP on %s, reachable from other machines; anyone with the token can run code on your Jupyter server.\n", bind)
	}
	if cfg.NoAuthLoopbackOnly {
		fmt.Fprintln(os.Stderr, "WARNING: --no-auth-loopback-only: MCP requests are accepted WITHOUT a token from any local process.")
	}
	guarded, err := guard.New(mcpHandler, guard.Options{
		Token:        token,
		NoAuth:       cfg.NoAuthLoopbackOnly,
		BindHost:     bind,
		AllowedHosts: allowedHosts(cfg, logger),
		MaxBodyBytes: cfg.MaxBody,
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", guarded)
	return mux, nil
}

// allowedHosts are the Host names the endpoint answers to besides loopback
// ones: --allowed-hosts, and with a non-loopback bind the names of this
// machine (its host name, the bind address, its interfaces' addresses), so
// that --bind 0.0.0.0 serves the clients it was asked for. A name that is
// none of these (a rebound DNS name) is still refused.
func allowedHosts(cfg *config, logger *slog.Logger) []string {
	hosts := append([]string(nil), cfg.AllowedHosts...)
	bind := cfg.Bind
	if guard.IsLoopback(bind) {
		return hosts
	}
	if ip := net.ParseIP(bind); ip == nil || !ip.IsUnspecified() {
		hosts = append(hosts, bind)
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		hosts = append(hosts, name)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		logger.Warn("cannot list this machine's addresses; clients must name it by host name or --allowed-hosts", "err", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
			hosts = append(hosts, n.IP.String())
		}
	}
	logger.Info("the MCP endpoint answers to these Host names besides loopback ones", "hosts", strings.Join(hosts, ","))
	return hosts
}

// lateHandler serves MCP once the server is built: requests that arrive
// before wait for it (the listener is bound from the start, so a client
// never finds the port closed).
type lateHandler struct {
	ready chan struct{} // closed once h is set
	h     http.Handler
}

func (l *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case <-l.ready:
		l.h.ServeHTTP(w, r)
	case <-r.Context().Done():
	}
}

// slogWriter turns the managed server's output lines into debug logs.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Debug("jupyter-server", "out", string(p))
	return len(p), nil
}
