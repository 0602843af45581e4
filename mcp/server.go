// Package mcp is the protocol adapter: the table of the 22 tools, result
// shaping, output schemas, _meta, resources, the jupyter_cite prompt, the
// transports and the call observer. Handlers are thin: they unpack the typed
// input, call one engine method and wrap the answer.
package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// Options configure the MCP server.
type Options struct {
	// Version is reported in serverInfo.
	Version string
	// Images sends image outputs (plots) as images. When false (the zero
	// value, so main must turn it on) an image is replaced by a short text
	// saying one was there.
	Images bool
	// Logger receives server logs (never stdout). Default: discard.
	Logger *slog.Logger
	// SessionTimeout closes a streamable HTTP session that has sent no
	// request for this long (a long tool call counts as activity). Zero
	// keeps sessions until the client deletes them, so a client that
	// vanishes without doing so leaves its session (goroutines and its
	// current notebook) behind until the process exits.
	SessionTimeout time.Duration
	// MaxSessions caps the live streamable HTTP sessions (0: 256). Opening
	// one more closes the least recently used; its next request gets a 404
	// saying why (sessioncap.go).
	MaxSessions int
	// MaxBodyBytes limits HTTP request bodies (0: the SDK's 4 MiB). main's
	// guard enforces the same limit first, with a 413 that names the flag.
	MaxBodyBytes int64
	// HostsCheckedInFront says the Host header is checked before
	// HTTPHandler by a guard that knows this machine's names. The SDK's own
	// check knows loopback names only: it would refuse a client on this
	// machine that reaches 127.0.0.1 under the machine's host name.
	HostsCheckedInFront bool
	// TrustClientApproval says the operator takes every HTTP client's
	// user for the person supervising this server: their answer to the
	// approval question of their own call counts. Without it only the
	// stdio host's does (it spawned us); an HTTP client may be code that
	// found the bearer token (trust.go).
	TrustClientApproval bool
}

// Server is the MCP server over one engine. One Server serves any number of
// sessions, over stdio or streamable HTTP.
type Server struct {
	e    *engine.Engine
	opts Options
	log  *slog.Logger
	srv  *sdk.Server

	tools    map[string]*toolDef
	order    []*toolDef
	resolved map[string]*jsonschema.Resolved // output schemas, by tool

	mu       sync.Mutex
	sessions map[*sdk.ServerSession]string
	named    map[*sdk.ServerSession]string // ids given before a session initializes (workbench.go)
	anon     int                           // sessions without a transport id (stdio, in-memory)

	host *sdk.ServerSession // the stdio session: the host that spawned us (trust.go)
	// chose are the sessions that picked a current notebook themselves
	// (use_notebook); the others act on one they inherited (inherited.go).
	chose map[string]bool

	notebooks notebookList // the notebooks in use as resources (resources.go)
	subs      resourceSubs // resource subscriptions (subscriptions.go)

	// schemaProblems counts results that did not match their declared
	// output schema: a server bug. Tests assert it stays zero.
	problemsMu     sync.Mutex
	schemaProblems []string
}

// New builds the server: tools, resources, prompt, instructions, the call
// observer and the session hooks.
func New(e *engine.Engine, opts Options) *Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{
		e:        e,
		opts:     opts,
		log:      log,
		tools:    map[string]*toolDef{},
		resolved: map[string]*jsonschema.Resolved{},
		sessions: map[*sdk.ServerSession]string{},
		named:    map[*sdk.ServerSession]string{},
		chose:    map[string]bool{},
	}
	s.srv = sdk.NewServer(&sdk.Implementation{
		Name:    "Jupyter MCP Server",
		Title:   "Jupyter MCP Server",
		Version: opts.Version,
		Icons:   svgIcon(iconJupyter),
	}, &sdk.ServerOptions{
		Instructions: instructionsFor(e),
		Logger:       log,
		InitializedHandler: func(_ context.Context, req *sdk.InitializedRequest) {
			s.sessionID(req.Session)
		},
		CompletionHandler:  s.complete,
		SubscribeHandler:   s.subscribeResource,
		UnsubscribeHandler: s.unsubscribeResource,
		SetCacheable:       setCacheable,
	})
	for _, d := range allTools() {
		r, err := d.output.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		if err != nil {
			panic(fmt.Sprintf("tool %s: output schema: %v", d.name, err))
		}
		s.resolved[d.name] = r
		s.tools[d.name] = d
		s.order = append(s.order, d)
		d.register(s, d)
	}
	s.addResources()
	s.addPrompt()
	s.srv.AddReceivingMiddleware(s.observe)
	return s
}

// HTTPHandler serves streamable HTTP. main mounts it at /mcp; authentication
// is a wrapper around it (any http.Handler middleware will do), which keeps
// this package free of tokens.
//
// Streams are resumable: every event gets an id (after a priming event) and
// is kept in a memory event store bounded to eventStoreBytes over all
// sessions, so a client whose connection dropped mid-call sends
// Last-Event-ID and gets what it missed, the call's result included.
// Sessions are capped (Options.MaxSessions) and expire idle
// (Options.SessionTimeout); either way the client is told why.
func (s *Server) HTTPHandler() http.Handler {
	events := sdk.NewMemoryEventStore(nil)
	events.SetMaxBytes(eventStoreBytes)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv },
		&sdk.StreamableHTTPOptions{
			Logger:                     s.log,
			EventStore:                 events,
			SessionTimeout:             s.opts.SessionTimeout,
			MaxRequestBodyBytes:        s.opts.MaxBodyBytes,
			DisableLocalhostProtection: s.opts.HostsCheckedInFront,
		})
	return newSessionCap(h, s.srv, s.opts.MaxSessions, s.opts.SessionTimeout)
}

// SDK exposes the underlying go-sdk server, for tests and for transports this
// package does not wrap.
func (s *Server) SDK() *sdk.Server { return s.srv }

// sessionID names an MCP session for the engine: the transport's session id
// (streamable HTTP), or "stdio" for a session without one; a second such
// session on the same server (in-memory transports in tests) gets "stdio-2"
// so that two sessions never share a current notebook; a session named
// before it initialized (the workbench's own, workbench.go) keeps that
// name. The first sight of a
// session tells the engine it opened, and its end tells the engine it closed.
func (s *Server) sessionID(ss *sdk.ServerSession) string {
	if ss == nil {
		return "stdio"
	}
	s.mu.Lock()
	if id, ok := s.sessions[ss]; ok {
		s.mu.Unlock()
		return id
	}
	id := ss.ID()
	if n, ok := s.named[ss]; ok {
		id = n
		delete(s.named, ss)
	} else if id == "" {
		s.anon++
		id = "stdio"
		if s.anon > 1 {
			id = fmt.Sprintf("stdio-%d", s.anon)
		}
	}
	s.sessions[ss] = id
	s.mu.Unlock()

	client := ""
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		client = p.ClientInfo.Name
		if p.ClientInfo.Version != "" {
			client += " " + p.ClientInfo.Version
		}
	}
	s.e.SessionOpened(id, client)
	s.watchNotebooks()
	go func() {
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.sessions, ss)
		delete(s.chose, id)
		s.mu.Unlock()
		s.unwatchNotebooks()
		s.dropSubscriptions(ss, "")
		s.e.SessionClosed(id)
	}()
	return id
}

// setCacheable settles the cache fields the SDK puts at the top level of
// results (ttlMs, cacheScope), which it would send as "public" with ttlMs 0
// for everything. A notebook's contents, its cells and outputs, the list of
// notebooks in use and capabilities:// are one user's and change at any
// moment: private, stale at once. What is the same for every client of
// this server (the tool, prompt and template lists, server/discover) stays
// public; a list_changed notification says when it moves, so it too is
// given no time to live. The tool results' own hints (_meta, the three
// listings) are toResult's.
func setCacheable(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
	switch req.(type) {
	case *sdk.ReadResourceRequest, *sdk.ListResourcesRequest:
		c.CacheScope, c.TTLMs = "private", 0
	}
}

// render returns the output rendering options. The bound on an output's
// text is the engine's (--max-output), so the workbench shows what the agent
// got.
func (s *Server) render() renderOpts {
	o := renderOpts{images: s.opts.Images, maxBytes: output.DefaultLimit}
	if s.e != nil {
		o.maxBytes = s.e.MaxOutputBytes()
	}
	return o
}

// noteSchemaProblem records a result that did not match its output schema.
func (s *Server) noteSchemaProblem(tool, problem string) {
	s.log.Error("tool result does not match its output schema (server bug)", "tool", tool, "problem", problem)
	s.problemsMu.Lock()
	s.schemaProblems = append(s.schemaProblems, tool+": "+problem)
	s.problemsMu.Unlock()
}

// SchemaProblems lists the results so far that did not match their declared
// output schema. It should always be empty.
func (s *Server) SchemaProblems() []string {
	s.problemsMu.Lock()
	defer s.problemsMu.Unlock()
	return append([]string(nil), s.schemaProblems...)
}

// instructionsFor are the instructions, saying what a timeout does on this
// server (execution.interrupt-on-timeout).
func instructionsFor(e *engine.Engine) string {
	if e == nil {
		return instructions
	}
	for _, c := range e.Capabilities() {
		if c.Name == engine.CapInterruptOnTimeout && c.Enabled {
			return strings.Replace(instructions, timeoutInstruction, interruptInstruction, 1)
		}
	}
	return instructions
}

// The instruction about timeouts, and the one that replaces it when this
// server interrupts a run at its timeout.
const (
	timeoutInstruction   = "- Executions time out (timeout argument, 0 = server default) but keep running on the kernel: the result says so, and read_cell later shows the outputs that arrived since."
	interruptInstruction = "- Executions time out (timeout argument, 0 = server default): the kernel is then interrupted and the result holds what the run produced."
)

// instructions are sent in initialize, so an agent reads them before picking
// a tool. They say what the tools operate on and what is unusual about them.
const instructions = `Read, edit and run Jupyter notebooks. Execution happens on the Jupyter server, so a long computation keeps running after a call returns or this session ends.

How to use this server well:
- Start with use_notebook (notebook_name, notebook_path; mode "create" for a new file). It makes that notebook current for this session; list_notebooks shows what is in use.
- Find cells with read_notebook in the brief format (index, type, execution count, first line, cell id), then read_cell or the detailed format for the cells you need.
- Address cells by cell_id after the first read. Indices shift when anyone inserts or deletes a cell above; ids do not. Every result that acted on a cell carries its id in _meta "io.jupyter-mcp/cell_id".
- When several agents share this server, pass notebook_name explicitly to cell tools instead of relying on the current notebook.
- Executions time out (timeout argument, 0 = server default) but keep running on the kernel: the result says so, and read_cell later shows the outputs that arrived since.
- Long text outputs are cut in tool results; the cut names a resource notebook://{name}/cells/{cell_id}/outputs/{index} that serves the whole output.
- Prefer edit_cell_source for small changes (exact, unique old_string) and overwrite_cell_source to rewrite a cell.
- execute_code runs scratch code that is not saved in the notebook; do not use it to define state later cells depend on.
- capabilities:// says which server behaviours are on (for example whether a dead kernel is restarted automatically) and why.`
