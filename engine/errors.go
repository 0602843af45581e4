package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// The engine's errors carry facts (which notebook, which index, the valid
// range, which kernel) and say them in neutral sentences: they name no MCP
// tool and no tool argument, since the engine serves the workbench too and
// does not know how a caller reaches it. mcp/ turns each type into the
// sentence an agent reads, naming the tool and arguments that fix it
// (mcp/errors.go). A test (vocabulary_test.go) keeps tool and argument names
// out of the engine's string literals.
//
// Every type here is a problem the caller can fix: IsUserError is true for
// it.

// userFault is implemented by every error the caller can fix, in this
// package and in its subpackages (sandbox refusals).
type userFault interface{ CallerCanFix() bool }

// CellRole says which cell of a call a cell error is about: most calls name
// one cell; a move names a source and a target.
type CellRole int

// The roles a cell reference plays.
const (
	RoleCell CellRole = iota
	RoleSource
	RoleTarget
)

// NoNotebookError reports that the call names no notebook in use. Name is
// empty when the session has no current notebook. InUse lists the names in
// use. Closed, when set, is how another session closed the notebook this
// session was using (its notice, not yet taken).
type NoNotebookError struct {
	Name   string
	InUse  []string
	Closed *ClosedNotice
}

func (e *NoNotebookError) Error() string {
	if e.Name == "" {
		return "this session has no current notebook" + e.InUseClause()
	}
	return fmt.Sprintf("no notebook named %q is in use%s", e.Name, e.InUseClause())
}

// InUseClause is " (in use: a, b)" or " (no notebooks are in use)".
func (e *NoNotebookError) InUseClause() string {
	if len(e.InUse) == 0 {
		return " (no notebooks are in use)"
	}
	return " (in use: " + strings.Join(e.InUse, ", ") + ")"
}

func (*NoNotebookError) CallerCanFix() bool { return true }

// CellIndexError reports a cell index outside the notebook. Count is the
// number of cells; for an insert (Insert) the valid positions are 0..Count,
// or -1 to append.
type CellIndexError struct {
	Notebook string
	Index    int
	Count    int
	Insert   bool
	Role     CellRole
}

func (e *CellIndexError) Error() string {
	switch {
	case e.Insert:
		return fmt.Sprintf("cell index %d is out of range for an insert: notebook %q has %d cells (valid 0-%d, or -1 to append)", e.Index, e.Notebook, e.Count, e.Count)
	case e.Count == 0:
		return fmt.Sprintf("cell index %d is out of range: notebook %q has no cells", e.Index, e.Notebook)
	}
	return fmt.Sprintf("cell index %d is out of range: notebook %q has %d cells (valid indices 0-%d)", e.Index, e.Notebook, e.Count, e.Count-1)
}

func (*CellIndexError) CallerCanFix() bool { return true }

// CellIDError reports that no cell of the notebook has this id.
type CellIDError struct {
	Notebook string
	ID       string
	Role     CellRole
}

func (e *CellIDError) Error() string {
	return fmt.Sprintf("no cell with id %q in notebook %q", e.ID, e.Notebook)
}

func (*CellIDError) CallerCanFix() bool { return true }

// NoCellError reports that the call named no cell (neither an index nor an
// id). Several is set when it takes a list of cells.
type NoCellError struct {
	Role    CellRole
	Several bool
}

func (e *NoCellError) Error() string {
	if e.Several {
		return "no cells were named: give indices or cell ids"
	}
	return "no cell was named: give an index or a cell id"
}

func (*NoCellError) CallerCanFix() bool { return true }

// CellTypeError reports a cell type other than code, markdown and raw.
type CellTypeError struct{ Type string }

func (e *CellTypeError) Error() string {
	return fmt.Sprintf("cell type %q is not valid: use \"code\", \"markdown\" or \"raw\"", e.Type)
}

func (*CellTypeError) CallerCanFix() bool { return true }

// StartIndexError reports a read that starts before the first cell or past the
// last one. Count is the number of cells.
type StartIndexError struct {
	Notebook string
	Start    int
	Count    int
}

func (e *StartIndexError) Error() string {
	if e.Start < 0 {
		return fmt.Sprintf("start %d is negative: cells are numbered from 0", e.Start)
	}
	return fmt.Sprintf("start %d is past the end: notebook %q has %d cells (valid start 0-%d)", e.Start, e.Notebook, e.Count, max(e.Count-1, 0))
}

func (*StartIndexError) CallerCanFix() bool { return true }

// EditProblem is why a find-and-replace edit of a cell was refused.
type EditProblem int

// The ways a find-and-replace edit is refused.
const (
	EditEmptyOld  EditProblem = iota // nothing to find
	EditNotFound                     // the text is not in the cell
	EditAmbiguous                    // the text occurs more than once
)

// EditError reports that a find-and-replace edit was refused. Index, CellID,
// Source (the start of the cell's source) and Count (occurrences) describe
// the cell for EditNotFound and EditAmbiguous.
type EditError struct {
	Problem EditProblem
	Index   int
	CellID  string
	Source  string
	Count   int
}

func (e *EditError) Error() string {
	switch e.Problem {
	case EditEmptyOld:
		return "the text to replace is empty"
	case EditNotFound:
		if e.Source == "" {
			return fmt.Sprintf("the text to replace was not found: cell %d (id %q) is empty", e.Index, e.CellID)
		}
		return fmt.Sprintf("the text to replace was not found in cell %d (id %q); matching is literal, including whitespace and line breaks; the source begins: %q", e.Index, e.CellID, e.Source)
	}
	return fmt.Sprintf("the text to replace occurs %d times in cell %d (id %q)", e.Count, e.Index, e.CellID)
}

func (*EditError) CallerCanFix() bool { return true }

// Field names a value a call must have.
type Field int

// The values the engine requires.
const (
	FieldNotebookName Field = iota
	FieldNotebookPath
	FieldKernelID
	FieldJupyterURL
	FieldSandboxName
)

var fieldWords = [...]string{
	FieldNotebookName: "a notebook name",
	FieldNotebookPath: "a notebook path",
	FieldKernelID:     "a kernel id",
	FieldJupyterURL:   "a Jupyter server URL",
	FieldSandboxName:  "a sandbox name",
}

// RequiredError reports that a required value is empty.
type RequiredError struct{ Field Field }

func (e *RequiredError) Error() string { return fieldWords[e.Field] + " is required" }

func (*RequiredError) CallerCanFix() bool { return true }

// NotebookPathError reports a path that cannot be a notebook. Root: it names
// the root directory; otherwise a notebook to create lacks the .ipynb
// suffix.
type NotebookPathError struct {
	Path string
	Root bool
}

func (e *NotebookPathError) Error() string {
	if e.Root {
		return fmt.Sprintf("the path %q names the root directory, not a notebook", e.Path)
	}
	return fmt.Sprintf("the path %q must end in .ipynb to create a notebook", e.Path)
}

func (*NotebookPathError) CallerCanFix() bool { return true }

// ModeError reports an open mode other than connect and create.
type ModeError struct{ Mode string }

func (e *ModeError) Error() string {
	return fmt.Sprintf("open mode %q is not valid: \"connect\" opens an existing notebook, \"create\" makes a new one", e.Mode)
}

func (*ModeError) CallerCanFix() bool { return true }

// NotebookExistsError reports an attempt to create a notebook where a file
// already is.
type NotebookExistsError struct{ Path string }

func (e *NotebookExistsError) Error() string {
	return fmt.Sprintf("%q already exists", e.Path)
}

func (*NotebookExistsError) CallerCanFix() bool { return true }

// NoFileError reports that there is no file (or directory) at the path on
// the Jupyter server.
type NoFileError struct{ Path string }

func (e *NoFileError) Error() string {
	return fmt.Sprintf("there is no file or directory %q on the Jupyter server", e.Path)
}

func (*NoFileError) CallerCanFix() bool { return true }

// NameInUseError reports that the notebook name is bound to another path
// (Path) than the one asked for (Want).
type NameInUseError struct{ Name, Path, Want string }

func (e *NameInUseError) Error() string {
	return fmt.Sprintf("the name %q is already in use for %q, so it cannot name %q", e.Name, e.Path, e.Want)
}

func (*NameInUseError) CallerCanFix() bool { return true }

// KernelMismatchError reports that the notebook is in use on Kernel; the
// call asked for Want.
type KernelMismatchError struct{ Notebook, Kernel, Want string }

func (e *KernelMismatchError) Error() string {
	return fmt.Sprintf("notebook %q is already in use on kernel %s, not on kernel %s", e.Notebook, e.Kernel, e.Want)
}

func (*KernelMismatchError) CallerCanFix() bool { return true }

// ServerSwitchedError reports that the Jupyter server changed while Path was
// being opened; nothing was opened.
type ServerSwitchedError struct{ Path string }

func (e *ServerSwitchedError) Error() string {
	return fmt.Sprintf("the Jupyter server was switched while %q was being opened; nothing was opened", e.Path)
}

func (*ServerSwitchedError) CallerCanFix() bool { return true }

// NotebookReloadedError reports that someone else wrote the notebook's file;
// it was reloaded, and a change by cell index was refused since indices may
// have moved.
type NotebookReloadedError struct{ Notebook string }

func (e *NotebookReloadedError) Error() string {
	return fmt.Sprintf("notebook %q was changed on disk by someone else and has been reloaded; cell indices may have moved, so nothing was changed", e.Notebook)
}

func (*NotebookReloadedError) CallerCanFix() bool { return true }

// NotebookFileGoneError reports that the file of a notebook in use was
// deleted or moved.
type NotebookFileGoneError struct{ Notebook, Path string }

func (e *NotebookFileGoneError) Error() string {
	return fmt.Sprintf("the file %q of notebook %q no longer exists on the Jupyter server", e.Path, e.Notebook)
}

func (*NotebookFileGoneError) CallerCanFix() bool { return true }

// UnknownKernelError reports that the Jupyter server has no kernel with this
// id. The ids it has are not listed: on a shared server they are other
// users' kernels too, and an id is all it takes to run code on one.
type UnknownKernelError struct {
	KernelID string
}

func (e *UnknownKernelError) Error() string {
	return fmt.Sprintf("kernel %q not found on the Jupyter server", e.KernelID)
}

func (*UnknownKernelError) CallerCanFix() bool { return true }

// DepthError reports a listing depth outside 0..Max.
type DepthError struct{ Depth, Max int }

func (e *DepthError) Error() string {
	return fmt.Sprintf("depth %d is out of range: use 0 (only the entries of the directory) to %d", e.Depth, e.Max)
}

func (*DepthError) CallerCanFix() bool { return true }

// SandboxExistsError reports that a sandbox has this name already
// (Launching: one is being launched under it right now).
type SandboxExistsError struct {
	Name, Variant, ID string
	Launching         bool
}

func (e *SandboxExistsError) Error() string {
	if e.Launching {
		return fmt.Sprintf("a sandbox named %q is being launched right now", e.Name)
	}
	return fmt.Sprintf("a sandbox named %q is already launched (%s, %s)", e.Name, e.Variant, e.ID)
}

func (*SandboxExistsError) CallerCanFix() bool { return true }

// UnknownSandboxError reports that no sandbox has this name. Names lists the
// launched ones.
type UnknownSandboxError struct {
	Name  string
	Names []string
}

func (e *UnknownSandboxError) Error() string {
	return fmt.Sprintf("no sandbox is named %q: %s", e.Name, e.Launched())
}

// Launched says which sandboxes are launched, quoted.
func (e *UnknownSandboxError) Launched() string {
	if len(e.Names) == 0 {
		return "no sandbox is launched"
	}
	q := make([]string, len(e.Names))
	for i, n := range e.Names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "the launched sandboxes are " + strings.Join(q, ", ")
}

func (*UnknownSandboxError) CallerCanFix() bool { return true }

// SandboxDownError reports that the sandbox cannot run code: it failed (its
// process or kernel died) or it is in State.
type SandboxDownError struct {
	Name, Variant, State string
	Failed               bool
}

func (e *SandboxDownError) Error() string {
	if e.Failed {
		return fmt.Sprintf("sandbox %q has failed (its %s died) and cannot run code", e.Name, deadPart(e.Variant))
	}
	return fmt.Sprintf("sandbox %q is %s and cannot run code", e.Name, e.State)
}

func (*SandboxDownError) CallerCanFix() bool { return true }

// SandboxNotKernelError reports that a notebook was to attach to a sandbox
// that is not a Jupyter kernel.
type SandboxNotKernelError struct{ Name, Variant string }

func (e *SandboxNotKernelError) Error() string {
	return fmt.Sprintf("sandbox %q (variant %s) cannot host a notebook: only a jupyter-server sandbox is a Jupyter kernel a notebook can attach to", e.Name, e.Variant)
}

func (*SandboxNotKernelError) CallerCanFix() bool { return true }

// LimitError reports a negative count of items to return.
type LimitError struct{ Limit int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("a limit of %d is negative: 0 means all, or give a positive count", e.Limit)
}

func (*LimitError) CallerCanFix() bool { return true }

// PatternError reports a file name pattern that is not a valid glob.
type PatternError struct{ Pattern string }

func (e *PatternError) Error() string {
	return fmt.Sprintf("the pattern %q is not a valid glob (use *, **, ?, [abc] and {a,b})", e.Pattern)
}

func (*PatternError) CallerCanFix() bool { return true }

// SandboxTimeoutError reports a sandbox's default execution timeout below one
// second, or above Max (this server's longest).
type SandboxTimeoutError struct{ Timeout, Max time.Duration }

func (e *SandboxTimeoutError) Error() string {
	if e.Timeout < time.Second {
		return fmt.Sprintf("a sandbox's default execution timeout must be at least 1 second; got %s", e.Timeout)
	}
	return fmt.Sprintf("the execution timeout %s is above this server's longest, %s", e.Timeout, e.Max)
}

func (*SandboxTimeoutError) CallerCanFix() bool { return true }

// SandboxServerError reports that the Jupyter server named for a
// jupyter-server sandbox is unusable (Err says why), or none was named and
// none is connected (Err nil).
type SandboxServerError struct{ Err error }

func (e *SandboxServerError) Error() string {
	if e.Err == nil {
		return "the jupyter-server variant needs a Jupyter server: none is connected"
	}
	return fmt.Sprintf("cannot use the Jupyter server named for the sandbox: %v", e.Err)
}

func (e *SandboxServerError) Unwrap() error { return e.Err }

func (*SandboxServerError) CallerCanFix() bool { return true }

// KernelLostError reports that the kernel went away, and its state (variables,
// imports, loaded data) with it. Notebook is set when it was a notebook's
// kernel; During when code was running on it then (Index and CellID name
// the cell, when it was one), otherwise the code was not sent.
type KernelLostError struct {
	KernelID string
	Notebook string
	What     event.KernelLoss
	During   bool
	Index    int
	CellID   string
}

func (e *KernelLostError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel %s", e.KernelID)
	if e.Notebook != "" {
		fmt.Fprintf(&b, " of notebook %q", e.Notebook)
	}
	switch e.What {
	case event.KernelShutDown:
		b.WriteString(" was shut down from outside this server")
	case event.KernelGone:
		b.WriteString(" no longer exists on the Jupyter server (it was shut down, or the server restarted)")
	case event.KernelDied:
		b.WriteString(" died and Jupyter did not restart it")
	case event.KernelRestartedAfterCrash:
		b.WriteString(" died and Jupyter restarted it")
	case event.KernelRestartedOutside:
		b.WriteString(" was restarted from outside this server")
	default:
		b.WriteString(" was lost")
	}
	switch {
	case e.During && e.CellID != "":
		fmt.Fprintf(&b, " while it ran cell %d (id %q)", e.Index, e.CellID)
	case e.During:
		b.WriteString(" while it ran the code")
	default:
		b.WriteString("; the code was not run")
	}
	b.WriteString("; its state (variables, imports, loaded data) is gone")
	return b.String()
}

// CallerCanFix: restarting the kernel is the caller's move.
func (*KernelLostError) CallerCanFix() bool { return true }

// CodeNULError reports that the code holds a NUL byte, which ipykernel
// cannot handle and answers with silence; it is refused before it is sent.
type CodeNULError struct{ Offset int }

func (e *CodeNULError) Error() string {
	return fmt.Sprintf("the code contains a NUL byte (at byte %d), which the kernel cannot run; it was not sent", e.Offset)
}

func (*CodeNULError) CallerCanFix() bool { return true }

// NoReplyError reports that the kernel took the code, went idle, and never
// answered.
type NoReplyError struct{ KernelID, Notebook string }

func (e *NoReplyError) Error() string {
	return fmt.Sprintf("kernel %s went idle without answering the code (it could not handle the request)", e.KernelID)
}

func (*NoReplyError) CallerCanFix() bool { return true }
