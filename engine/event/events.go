// Package event is the vocabulary everyone who watches the engine shares:
// the typed events and the bus that carries them, and the payloads the
// workbench draws (a held call's preview, the cells an outside edit
// changed, how a kernel went away). It is data only: it knows nothing of
// notebooks in use, kernels or calls beyond what their events say.
package event

import (
	"encoding/json"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/output"
)

// EventType names what an Event is about. The TUI, the recorder and the
// attach feed switch on it; the payload pointer matching the type is set.
type EventType string

// Event types published on the bus.
const (
	// Calls (published by the MCP call observer, through the call
	// registry's Begin).
	EvCallStarted  EventType = "call.started"
	EvCallProgress EventType = "call.progress"
	EvCallFinished EventType = "call.finished"
	EvCallHeld     EventType = "call.held" // waiting for approval or for resume
	// EvCallTask: the call's client holds it as an MCP task, polled
	// apart from its request (its task id, state and polls changed).
	EvCallTask EventType = "call.task"

	// MCP client sessions.
	EvSessionOpened EventType = "session.opened"
	EvSessionClosed EventType = "session.closed"

	// Notebooks.
	EvNotebookOpened  EventType = "notebook.opened"  // Notebook.Cells holds a snapshot
	EvNotebookChanged EventType = "notebook.changed" // Notebook.Op says what changed
	EvNotebookClosed  EventType = "notebook.closed"
	// EvNotebookOutsideEdit: the file was changed by someone else (outside.go);
	// Notebook.Changes says which cells. EvNotebookChanged (OpReload) with
	// the new cells comes first.
	EvNotebookOutsideEdit EventType = "notebook.outside_edit"

	// Executions.
	EvExecStarted  EventType = "exec.started"
	EvExecOutput   EventType = "exec.output"
	EvExecFinished EventType = "exec.finished"

	// Kernels and sandboxes.
	EvKernelStatus  EventType = "kernel.status"
	EvKernelLost    EventType = "kernel.lost" // shut down or restarted outside, or died: Kernel.Lost says which
	EvSandboxStatus EventType = "sandbox.status"

	// Server-level state (pause, approval mode, Jupyter server switched).
	EvServerState EventType = "server.state"

	// EvMissed tells a subscriber how many events it lost because it was
	// slow; Missed holds the count.
	EvMissed EventType = "bus.missed"
)

// Event is one thing that happened in the engine. It is a tagged union: Type
// says which payload pointer is set. Events are plain data so that they can be
// serialized for the attach feed and for recordings.
type Event struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	Type EventType `json:"type"`

	Call     *CallEvent     `json:"call,omitempty"`
	Session  *SessionEvent  `json:"session,omitempty"`
	Notebook *NotebookEvent `json:"notebook,omitempty"`
	Exec     *ExecEvent     `json:"exec,omitempty"`
	Kernel   *KernelEvent   `json:"kernel,omitempty"`
	Sandbox  *SandboxEvent  `json:"sandbox,omitempty"`
	Server   *ServerEvent   `json:"server,omitempty"`
	Missed   uint64         `json:"missed,omitempty"`
}

// CallStatus is the state of one tool call.
type CallStatus string

// Call statuses.
const (
	CallRunning   CallStatus = "running"
	CallHeld      CallStatus = "held"
	CallOK        CallStatus = "ok"
	CallError     CallStatus = "error"
	CallCancelled CallStatus = "cancelled"
	CallDenied    CallStatus = "denied"
)

// CallEvent describes a tool call at one moment of its life.
type CallEvent struct {
	ID          string          `json:"id"`
	Session     string          `json:"session"`
	Tool        string          `json:"tool"`
	Args        json.RawMessage `json:"args,omitempty"`
	Destructive bool            `json:"destructive,omitempty"`
	Editable    bool            `json:"editable,omitempty"` // a person may edit its arguments while it is held
	Status      CallStatus      `json:"status"`
	Started     time.Time       `json:"started"`
	Duration    time.Duration   `json:"duration,omitempty"`
	// Held is how long the call waited for a person before it ran or was
	// refused: held for approval, or while new calls were paused. Duration
	// counts it too, so the server's own time is Duration - Held.
	Held time.Duration `json:"held,omitempty"`

	// Edited: a person edited its arguments before allowing it; Args are
	// then the edited ones, what ran (from the progress that says so).
	Edited bool `json:"edited,omitempty"`

	// Entries that are not tool calls: an undo made by the person at the
	// workbench (Tool "undo"). Summary is its one-line description
	// ("undo of insert_cell 14:31:23 by the person"), UndoOf the id of the
	// call it reverted.
	Summary string `json:"summary,omitempty"`
	UndoOf  string `json:"undoOf,omitempty"`
	// Undoable: the call changed a notebook and the change is kept, so a
	// person can undo it (set when it finishes).
	Undoable bool `json:"undoable,omitempty"`

	// ResendOf, on a call the person at the workbench made (Session
	// WorkbenchSession), is the id of the call it resent.
	ResendOf string `json:"resendOf,omitempty"`

	// DecidedBy, on a call that was held for approval (or let through by
	// an allow rule), says who decided it: which workbench, the person at
	// the client, the rule, or no one (the approval timed out). Set from
	// the progress that allows it, or the finish that denies it.
	DecidedBy string `json:"decidedBy,omitempty"`

	// Progress (EvCallProgress).
	Progress string `json:"progress,omitempty"`

	// Task, when the call's client holds it as an MCP task (EvCallTask,
	// and kept on the call from then on).
	Task *CallTask `json:"task,omitempty"`

	// Preview (EvCallHeld, when held for approval): what it would do.
	Preview *CallPreview `json:"preview,omitempty"`
	// HeldUntil (EvCallHeld, when held for approval) is when the call is
	// denied if no one decides it; zero for a call held by a pause.
	HeldUntil time.Time `json:"heldUntil,omitzero"`

	// Outcome (EvCallFinished).
	Text          string          `json:"text,omitempty"`          // the text content
	Structured    json.RawMessage `json:"structured,omitempty"`    // structuredContent
	Meta          json.RawMessage `json:"meta,omitempty"`          // _meta
	IsError       bool            `json:"isError,omitempty"`       // tool result with isError
	Error         string          `json:"error,omitempty"`         // protocol-level error
	SchemaOK      *bool           `json:"schemaOK,omitempty"`      // matched its output schema
	SchemaProblem string          `json:"schemaProblem,omitempty"` // why not
	CellID        string          `json:"cellID,omitempty"`        // acted-on cell
	Notebook      string          `json:"notebook,omitempty"`      // acted-on notebook name
	Images        int             `json:"images,omitempty"`
	// CellError names what the code the call ran raised (the exception's
	// name: ZeroDivisionError; KeyboardInterrupt when it was interrupted),
	// "" when it raised nothing. The call itself answered: the agent got
	// the traceback among the outputs.
	CellError string `json:"cellError,omitempty"`

	// What the result weighs on the wire (its JSON as the client gets
	// it), part by part: what the call costs the agent's context. Text is
	// the encoded strings of the text content, Structured the encoded
	// structuredContent, Images the base64 of the image content. They
	// are measured before anything is cut for the workbench.
	TextBytes       int `json:"textBytes,omitempty"`
	StructuredBytes int `json:"structuredBytes,omitempty"`
	ImageBytes      int `json:"imageBytes,omitempty"`
}

// CallTask is what a call's client does with it as a task: the task's
// id, its state in the client's words (working, input_required,
// completed, failed, cancelled), and how often the client polled it.
type CallTask struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Polls int    `json:"polls"`
}

// SessionEvent tells of an MCP client session opening or closing.
type SessionEvent struct {
	ID     string `json:"id"`
	Client string `json:"client,omitempty"` // clientInfo name and version
}

// NotebookOp names a change to a notebook.
type NotebookOp string

// Notebook changes.
const (
	OpInsert      NotebookOp = "insert"
	OpEdit        NotebookOp = "edit"
	OpDelete      NotebookOp = "delete"
	OpMove        NotebookOp = "move"
	OpClearOutput NotebookOp = "clear_output"
	OpOutput      NotebookOp = "output" // an output appended during execution
	OpExecCount   NotebookOp = "exec_count"
	OpReload      NotebookOp = "reload" // changed on disk by someone else and reloaded
)

// NotebookEvent tells of a notebook being opened, changed or closed. Cells
// holds the cells it concerns: every cell on open and reload, the changed
// cell(s) otherwise. Outputs in snapshots are bounded (see CellSnapshot).
type NotebookEvent struct {
	Name     string         `json:"name"`
	Path     string         `json:"path"`
	KernelID string         `json:"kernelID,omitempty"`
	Op       NotebookOp     `json:"op,omitempty"`
	Index    int            `json:"index"`             // position of the changed cell (after the change)
	From     int            `json:"from,omitempty"`    // for move: where it was
	CellIDs  []string       `json:"cellIDs,omitempty"` // for delete: the removed ids
	Cells    []CellSnapshot `json:"cells,omitempty"`
	Session  string         `json:"session,omitempty"` // the session that caused it, if any

	// EvNotebookOutsideEdit: what changed, cell by cell, when the file was
	// last modified, and whether the notebook's own metadata changed.
	ChangedCells    []ChangedCell `json:"changes,omitempty"`
	MetadataChanged bool          `json:"metadataChanged,omitempty"`
	At              time.Time     `json:"at,omitzero"`
}

// CellSnapshot is a copy of one cell for observers. Outputs beyond a bound are
// left out and counted in OutputsOmitted.
type CellSnapshot struct {
	ID             string           `json:"id"`
	Type           string           `json:"type"`
	Source         string           `json:"source"`
	ExecutionCount *int             `json:"executionCount,omitempty"`
	Outputs        []OutputSnapshot `json:"outputs,omitempty"`
	OutputsOmitted int              `json:"outputsOmitted,omitempty"`
}

// OutputSnapshot is one output as observers show it: the output model's
// view (its text bounded as in a tool result, or an image's bytes). In an
// EvExecOutput event a stream is the piece that arrived, its "\r"s and
// "\b"s not yet applied, since they act across pieces (output.Screen applies
// them); in a cell snapshot it is the whole stream with them applied.
type OutputSnapshot = output.View

// ExecEvent tells of an execution starting, producing output and finishing.
type ExecEvent struct {
	ID        string          `json:"id"`
	Notebook  string          `json:"notebook,omitempty"` // empty for execute_code
	CellID    string          `json:"cellID,omitempty"`
	KernelID  string          `json:"kernelID,omitempty"`
	SandboxID string          `json:"sandboxID,omitempty"`
	CallID    string          `json:"callID,omitempty"`
	Code      string          `json:"code,omitempty"` // on start
	Output    *OutputSnapshot `json:"output,omitempty"`
	Status    string          `json:"status,omitempty"` // on finish: ok, error, aborted, died, interrupted
	Elapsed   time.Duration   `json:"elapsed,omitempty"`
}

// KernelEvent tells of a kernel's execution state changing.
type KernelEvent struct {
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	State string `json:"state"` // starting, idle, busy, restarting, dead, disconnected
	// Lost says how the kernel went away (KernelLoss.String) until it is
	// restarted; "" while it is fine.
	Lost string `json:"lost,omitempty"`
}

// SandboxEvent tells of a sandbox launched, changing state or terminated.
type SandboxEvent struct {
	Name    string `json:"name"`
	ID      string `json:"id"`
	Variant string `json:"variant"`
	State   string `json:"state"` // running, busy, idle, terminated, failed
}

// ServerEvent carries server-wide state the workbench shows in its header.
type ServerEvent struct {
	JupyterURL   string `json:"jupyterURL,omitempty"`
	Paused       bool   `json:"paused"`
	ApprovalMode string `json:"approvalMode,omitempty"` // off, destructive, execute, all
	// Allowed are the tools a person allowed for a session from now on.
	Allowed []AllowedTool `json:"allowed,omitempty"`
	// Workbenches are the workbenches attached that may decide held calls
	// and act for the person (the one in this process, attached ones that
	// were paired); Watchers those attached that only watch.
	Workbenches int `json:"workbenches,omitempty"`
	Watchers    int `json:"watchers,omitempty"`

	// The managed Jupyter server when it is not up; otherwise what the
	// last check of the server in use found (up, refused, unreachable;
	// empty before the first check).
	Jupyter        string `json:"jupyter,omitempty"`        // restarting, starting, failed; up, refused, unreachable (jupyter_health.go)
	JupyterAttempt int    `json:"jupyterAttempt,omitempty"` // restart attempt, from 1
	JupyterCause   string `json:"jupyterCause,omitempty"`   // how it went down
	JupyterProblem string `json:"jupyterProblem,omitempty"` // why the last attempt (or the start) failed
}

// The values of ServerEvent.Jupyter for a managed server at start-up: still
// starting, or unable to start (JupyterProblem says why).
const (
	JupyterStarting = "starting" // jupyter.PhaseStarting
	JupyterFailed   = "failed"   // jupyter.PhaseFailed
)

// The values of ServerEvent.Jupyter the health check of the server in use
// gives (engine/jupyter_health.go). JupyterCause then says how: the HTTP
// status of a refusal ("403"), the network's reason for no answer
// ("connection refused"); JupyterProblem is the whole error.
const (
	JupyterUp          = "up"          // it answers and takes the token
	JupyterRefused     = "refused"     // it answers, and refuses the token (401, 403)
	JupyterUnreachable = "unreachable" // it does not answer
)

// JupyterCheckInterval is how often the engine checks the server in use
// (a header that says it is down says when it is checked again).
const JupyterCheckInterval = 5 * time.Second

// AllowedTool is a tool a person allowed for one session from now on.
type AllowedTool struct {
	Session string `json:"session"`
	Tool    string `json:"tool"`
}
