// Package engine is the domain core that shares one set of locks: the
// notebooks in use and their group commit, cells and the changes to them
// (each one value, committed or previewed), executions, kernels, sessions,
// watching for edits made elsewhere, previews of held calls, notices and
// sandboxes. It knows Jupyter; it knows nothing of MCP or of screens.
//
// Its sub-packages are rooms that reach the core only through data and the
// funcs they are given, and never import it: event (the events, the bus
// and the payloads the workbench draws), calls (the call registry: admission,
// holds, decisions, resend; Engine.Calls), nbfile (a notebook's file on the
// shared server: its read, save lock and checked save), undo (undo records
// and their revert), notebook (the document model and its one cell diff),
// and jupyter, output, observe, sandbox, secret and procgroup.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/nbfile"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/undo"
)

// Config is what the engine needs to run. main builds it from flags and env.
type Config struct {
	JupyterURL   string
	JupyterToken string
	// JupyterStarting says the server at JupyterURL is a managed one still
	// starting: New does not check it, and requests to it wait until
	// SetJupyterState says it is up (or has failed to start).
	JupyterStarting bool
	// CheckLater makes New not check the server at JupyterURL (CheckJupyter
	// does, when the caller wants): start-up does not wait on a server
	// that may be far away, and a request that finds it unreachable or
	// refusing the token says so.
	CheckLater bool

	DefaultTimeout time.Duration // execution timeout when a call passes 0 (default 300s)
	MaxTimeout     time.Duration // upper bound on any execution timeout (default 3600s)

	// MaxOutputBytes bounds the text of one output wherever it is shown
	// (tool results, the workbench): longer text is cut, saying where the
	// whole is (default output.DefaultLimit).
	MaxOutputBytes int

	// Capabilities with their values and where each value came from.
	Capabilities []Capability

	// SandboxVariant is SANDBOX_VARIANT: the variant launch_sandbox uses
	// when a call names none.
	SandboxVariant string

	// Python is --python: the eval sandbox's interpreter ("" = the one
	// jupyter.FindPython finds).
	Python string
	// KeepKernels leaves running the kernels this process started, when
	// their notebook is released and when the engine closes. Without it
	// they are shut down then (kernels.go).
	KeepKernels bool
	// SerialSaves saves every mutation of a notebook on its own, one
	// after the other, instead of saving the mutations that wait at once
	// together (groupcommit.go). It is the baseline of make bench.
	SerialSaves bool

	// CreatedHeading, when set, is the text of the one markdown cell a
	// notebook created by UseNotebook starts with (the reference's
	// skeleton, which its clients count on); empty: created notebooks are
	// empty.
	CreatedHeading string

	// WatchInterval is how often each notebook in use is checked for
	// changes made elsewhere (watch.go); 0 turns the polling off (the
	// check before every call remains).
	WatchInterval time.Duration

	Logger *slog.Logger
}

// Capability is one switchable behaviour of the server, served at
// capabilities://.
type Capability struct {
	Name        string `json:"name"` // e.g. kernel.auto-restart
	Enabled     bool   `json:"enabled"`
	Value       string `json:"value,omitempty"`
	Source      string `json:"source"` // default, flag, env
	Description string `json:"description"`
}

// Capability names.
const (
	CapKernelAutoRestart = "kernel.auto-restart"
	CapImages            = "outputs.images"
	// CapInterruptOnTimeout interrupts a kernel whose run outlasts the
	// call's timeout, as the reference does, and returns what the run
	// produced, the KeyboardInterrupt included. Off, the run goes on and
	// its outputs keep being saved into the notebook.
	CapInterruptOnTimeout = "execution.interrupt-on-timeout"
)

// UserError is a problem the caller can fix that has no type of its own in
// errors.go (those carry the facts for mcp/ to word). Its message says what
// was wrong, naming no tool or argument. MCP turns it into a tool result
// with isError; an error that is no user error is an infrastructure failure.
type UserError struct{ Msg string }

func (e *UserError) Error() string { return e.Msg }

// CallerCanFix marks a *UserError as a problem the caller can fix.
func (*UserError) CallerCanFix() bool { return true }

// Userf returns a *UserError.
func Userf(format string, args ...any) error { return &UserError{Msg: fmt.Sprintf(format, args...)} }

// IsUserError reports whether err is (or wraps) a problem the caller can
// fix: a *UserError, one of the typed errors of errors.go, or a sandbox
// refusal.
func IsUserError(err error) bool {
	var u userFault
	return errors.As(err, &u) && u.CallerCanFix()
}

// Engine is the shared core behind every MCP session and the workbench.
//
// Lock order. A goroutine that holds one of these locks takes only locks
// further down the list, never one above it:
//
//  1. useMu: adding and dropping notebooks and kernels (use, unuse,
//     connect). UseNotebook saves the cell ids it gave under it.
//  2. an execution's flushMu: one run's writes of its outputs, taken
//     before the save it makes.
//  3. a document's writeMu: one notebook's freshness check, change and
//     save (the group commit's leader). Never two documents' at once.
//  4. the call registry's lock (engine/calls): it fills the header's
//     server facts under it, which reads mu.
//  5. mu: the maps below, for map work only, never across a REST call.
//  6. a document's mu: its model, read by the maps' info under mu.
//
// The others are leaves, held for a few lines and taking no lock of ours:
// a document's commit queue and freshness check, the sandbox registry, the
// undo log, an execution's mu, the bus and its subscriptions, a kernel
// channel's own. Nothing holds a lock of ours across the network but
// useMu and writeMu, whose holders are the ones waiting for it.
type Engine struct {
	// Each part of the engine keeps its state in its own registry, defined
	// in its own file.
	calls     *calls.Registry  // engine/calls; reached through Calls
	sandboxes *sandboxRegistry // sandboxes.go

	cfg  Config
	log  *slog.Logger
	bus  *event.Bus
	caps []Capability

	// useMu serializes the calls that add or drop notebooks and kernels
	// (use, unuse, connect): they are rare and do REST work, and
	// serializing them keeps the registry free of half-opened entries.
	useMu sync.Mutex

	// mu guards the maps and the client below. It is only ever held for
	// map work, never across a REST call or a websocket operation, so that
	// the hot read path (read_cell) never waits for the network.
	mu      sync.RWMutex
	client  *jupyter.Client
	docs    map[string]*document    // by notebook name
	current map[string]string       // session -> current notebook name
	kernels map[string]*kernelEntry // by kernel id: one channel per kernel

	// sessions.go: the sessions seen, the notebook most recently
	// activated (a new session starts on it), and the kernels this
	// process started on the server in use (by id).
	sessions map[string]*sessionState
	lastUsed string
	started  map[string]bool
	// retiring holds the kernels whose channel is being retired (see
	// kernels.go): a new channel to one waits until it is done.
	retiring map[string]chan struct{}
	// retireHook, when set (tests, under mu), runs as a retirement has
	// decided to shut its kernel down; retireWaits counts the waits for a
	// retirement (kernels.go).
	retireHook  func(kernelID string)
	retireWaits atomic.Int64

	saveLockTimes nbfile.LockTimes // zero: the defaults (tests shorten them)

	// first is the client of the server the engine started with: the one a
	// supervisor's SetJupyterState speaks of (jupyter_state.go).
	first *jupyter.Client
	// jupyterState is what that supervisor last said.
	jupyterState atomic.Pointer[jupyter.ServerState]
	// health is what WatchJupyter last found (jupyter_health.go).
	health atomic.Pointer[jupyterHealth]

	undo    *undoLog // what it takes to revert each call's change (undo.go)
	undoSeq atomic.Uint64

	execSeq atomic.Uint64
	execs   sync.WaitGroup // executions still collecting outputs
	checks  background     // freshness checks in flight (freshness.go)
	closed  atomic.Bool
}

// New returns an engine talking to the Jupyter server in cfg. It checks that
// the server answers and that the token is accepted, unless the server is
// still starting (Config.JupyterStarting).
func New(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = 300 * time.Second
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = 3600 * time.Second
	}
	if cfg.MaxOutputBytes <= 0 {
		cfg.MaxOutputBytes = output.DefaultLimit
	}
	if cfg.DefaultTimeout > cfg.MaxTimeout {
		cfg.DefaultTimeout = cfg.MaxTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	client, err := jupyter.NewClient(cfg.JupyterURL, cfg.JupyterToken, jupyter.Options{})
	if err != nil {
		return nil, err
	}
	if cfg.JupyterStarting {
		client.SetServerState(jupyter.ServerState{Phase: jupyter.PhaseStarting})
	} else if !cfg.CheckLater {
		if _, err := client.Status(ctx); err != nil {
			return nil, err
		}
	}
	bus := event.NewBus()
	e := &Engine{
		cfg:     cfg,
		log:     log,
		bus:     bus,
		caps:    withDefaultCapabilities(cfg.Capabilities),
		client:  client,
		docs:    map[string]*document{},
		current: map[string]string{},
		kernels: map[string]*kernelEntry{},

		sessions: map[string]*sessionState{},
		started:  map[string]bool{},
		retiring: map[string]chan struct{}{},
	}
	e.undo = undo.NewLog[*document]()
	e.first = client
	e.calls = calls.New(bus, calls.Options{
		FillServer: func(st *event.ServerEvent) {
			st.JupyterURL = e.JupyterURL()
			e.fillJupyterState(st)
		},
		Undoable: e.undo.Has,
		ClientOf: e.clientOf,
		Log:      log,
	})
	if cfg.JupyterStarting {
		e.jupyterState.Store(&jupyter.ServerState{Phase: jupyter.PhaseStarting})
	}
	e.sandboxes = newSandboxRegistry(bus, e.jupyterClient, cfg.SandboxVariant, cfg.MaxTimeout, log)
	e.sandboxes.python = cfg.Python
	return e, nil
}

// Close stops executions, closes kernel channels and sandboxes, and shuts
// down the kernels this process started unless Config.KeepKernels (kernels
// it attached to are left alone).
func (e *Engine) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	e.calls.Close()
	e.mu.Lock()
	kernels := e.kernels
	e.kernels = map[string]*kernelEntry{}
	docs := e.documentsLocked()
	e.mu.Unlock()
	stopWatching(docs...)
	// A check of a file in flight may reload it and publish: it ends
	// before the channels and the client go.
	e.awaitClosing(e.checks.close(), "checks of notebook files still running at close")
	// Closing a channel fails the runs on it with ErrDisconnected; their
	// collectors then write what they have into the notebook and stop.
	e.retireAll(kernels)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if e.sandboxes != nil {
		e.sandboxes.closeAll(ctx)
	}
	done := make(chan struct{})
	go func() { e.execs.Wait(); close(done) }()
	e.awaitClosing(done, "executions still saving outputs at close")
	e.mu.Lock()
	client := e.client
	e.mu.Unlock()
	if client != nil {
		client.CloseIdleConnections()
	}
	return nil
}

// awaitClosing waits a while for done as the engine closes, and says so
// (stillRunning) when it has not come.
func (e *Engine) awaitClosing(done <-chan struct{}, stillRunning string) {
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		e.log.Warn(stillRunning)
	}
}

// CheckJupyter checks that the Jupyter server in use answers and accepts
// the token.
func (e *Engine) CheckJupyter(ctx context.Context) error {
	_, err := e.jupyterClient().Status(ctx)
	return err
}

// Bus is the engine's event bus.
func (e *Engine) Bus() *event.Bus { return e.bus }

// Calls is the call registry: admission, holds, decisions, resend.
func (e *Engine) Calls() *calls.Registry { return e.calls }

// JupyterURL is the base URL of the Jupyter server in use (no token).
func (e *Engine) JupyterURL() string { return e.jupyterClient().BaseURL() }

// jupyterClient is the REST client of the server in use.
func (e *Engine) jupyterClient() *jupyter.Client {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.client
}

// publish hands an event to the bus.
func (e *Engine) publish(ev event.Event) { e.bus.Publish(ev) }

// CellRef addresses a cell: by ID when ID is set (the id wins), else by
// Index. Neither set is an error naming both arguments.
type CellRef struct {
	Index *int
	ID    string
}

// NotebookInfo describes a notebook in use.
type NotebookInfo struct {
	Name        string
	Path        string
	KernelID    string
	KernelState string
	Current     bool // the asking session's current notebook
	Cells       int
}

// CellInfo is a copy of a cell with its position.
type CellInfo struct {
	Index          int
	ID             string
	Type           string
	Source         string
	ExecutionCount *int
	Metadata       json.RawMessage
	Outputs        []notebook.Output
}

// SourceEdit is the answer of an edit: the cell after the edit, its source
// before, a unified diff, and how many replacements were made.
type SourceEdit struct {
	Cell         CellInfo
	OldSource    string
	Diff         string
	Replacements int
}

// FileEntry is one file or directory.
type FileEntry struct {
	Path         string
	Type         string // file, notebook, directory
	Size         *int64
	LastModified time.Time
}

// KernelInfo is a running kernel.
type KernelInfo struct {
	ID           string
	Name         string
	DisplayName  string
	Language     string // the kernel spec's language ("" when unknown)
	State        string
	Connections  int
	LastActivity time.Time
	Notebooks    []string // names of notebooks in use on it
}

// ExecOptions tune an execution.
type ExecOptions struct {
	Timeout  time.Duration // 0 = Config.DefaultTimeout; capped at MaxTimeout
	KernelID string        // execute_code: a specific kernel
	CallID   string        // the tool call that started it (for events)
	// Progress, when set, is called every ProgressInterval while the
	// execution runs (never after it returns).
	Progress         func(ExecProgress)
	ProgressInterval time.Duration
}

// ExecProgress is a progress report of a running execution.
type ExecProgress struct {
	Elapsed time.Duration
	Timeout time.Duration // how long the call waits; the run may go on after
	// Outputs is how many outputs the run has so far, counted as the
	// notebook and the result count them: consecutive text of one stream
	// is one output, and clear_output starts over.
	Outputs int
	// Latest are the newest lines of those outputs (output.Tail): at most
	// ProgressLines, each at most ProgressLineWidth characters.
	Latest []string
}

// The bounds on ExecProgress.Latest: a progress report is a glance at a
// run, not its result.
const (
	ProgressLines     = 3
	ProgressLineWidth = 200
)

// ExecResult is what an execution produced by the time the call returned.
type ExecResult struct {
	ExecID         string
	Notebook       string // "" for execute_code
	Cell           CellInfo
	KernelID       string
	SandboxName    string
	Outputs        []notebook.Output
	ExecutionCount *int
	Status         string // ok, error, aborted; running when StillRunning; died when the kernel died (KernelRestarted)
	StillRunning   bool   // the timeout passed; outputs keep being collected into the notebook
	// Timeout is how long the call waited, set when the timeout passed
	// before the run ended. Interrupted says the kernel was interrupted
	// then (Config.InterruptOnTimeout); StillRunning stays set when it had
	// not stopped within a few seconds of that.
	Timeout         time.Duration
	Interrupted     bool
	Elapsed         time.Duration
	KernelRestarted bool // the kernel died and was replaced (kernel.auto-restart): state was lost
	// InterruptedByPerson: the person at the workbench interrupted the
	// kernel while this ran (person_interrupt.go).
	InterruptedByPerson bool
}
