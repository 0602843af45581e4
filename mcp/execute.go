package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// Execution tools: execute_cell, insert_execute_code_cell, execute_code.

type executeCellIn struct {
	CellIndex        *int    `json:"cell_index,omitempty" jsonschema:"Index of the cell to execute (0-based). Omit when passing cell_id."`
	Timeout          int     `json:"timeout,omitempty" jsonschema:"Maximum seconds to wait for execution (0 = use config default)"`
	Stream           bool    `json:"stream,omitempty" jsonschema:"Enable streaming progress (including time indicator) updates for long-running cells"`
	ProgressInterval int     `json:"progress_interval,omitempty" jsonschema:"Seconds between progress updates (MCP keepalive + optional stream log)"`
	CellID           *string `json:"cell_id,omitempty"`
	// Not in the reference: a client without a session (MCP 2026-07-28)
	// has no current notebook of its own, and must be able to name one.
	NotebookName *string `json:"notebook_name,omitempty"`
}

func patchExecuteCell(p patcher) {
	minimum(nullable(p.get("cell_index")), 0)
	nullable(p.get("cell_id"))
	nullable(p.get("notebook_name"))
	seconds(def(p.get("timeout"), 0))
	def(p.get("stream"), true)
	seconds(def(p.get("progress_interval"), 5))
}

// MaxTimeoutSeconds is the longest timeout (and progress interval) a tool
// accepts: one day. The reference declares these integers without bounds;
// ours refuse a negative or absurd value (1e15 seconds overflows a
// time.Duration) instead of silently reading it as something else. The
// server's --max-timeout, which main keeps at or below this, still caps
// what an execution really waits.
const MaxTimeoutSeconds = 86400

// seconds bounds a timeout-like argument to 0..MaxTimeoutSeconds; 0 keeps
// its meaning (the server's default).
func seconds(p *jsonschema.Schema) *jsonschema.Schema {
	return maximum(minimum(p, 0), MaxTimeoutSeconds)
}

// execute_cell takes no notebook_name in the reference: it runs on the
// session's current notebook. Ours takes one too (executeCellIn).
func (s *Server) executeCell(ctx context.Context, c *call, in executeCellIn) (*answer, error) {
	res, err := s.e.ExecuteCell(ctx, c.session, deref(in.NotebookName), ref(in.CellIndex, in.CellID), s.execOptions(ctx, c, in.Timeout, in.ProgressInterval, in.Stream, ""))
	if err != nil {
		return nil, err
	}
	return s.execAnswer(res), nil
}

type insertExecuteIn struct {
	CellIndex        int    `json:"cell_index" jsonschema:"Index of the cell to insert and execute (0-based)"`
	CellSource       string `json:"cell_source" jsonschema:"Code source for the cell"`
	Timeout          int    `json:"timeout,omitempty" jsonschema:"Maximum seconds to wait for execution (0 = use config default)"`
	Stream           bool   `json:"stream,omitempty" jsonschema:"Enable streaming progress (including time indicator) updates for long-running cells"`
	ProgressInterval int    `json:"progress_interval,omitempty" jsonschema:"Seconds between progress updates (MCP keepalive + optional stream log)"`
	// Not in the reference, as executeCellIn's.
	NotebookName *string `json:"notebook_name,omitempty"`
}

func patchInsertExecute(p patcher) {
	minimum(p.get("cell_index"), -1)
	nullable(p.get("notebook_name"))
	seconds(def(p.get("timeout"), 0))
	def(p.get("stream"), true)
	seconds(def(p.get("progress_interval"), 5))
}

func (s *Server) insertExecuteCodeCell(ctx context.Context, c *call, in insertExecuteIn) (*answer, error) {
	res, err := s.e.InsertExecuteCell(ctx, c.session, deref(in.NotebookName), in.CellIndex, in.CellSource, s.execOptions(ctx, c, in.Timeout, in.ProgressInterval, in.Stream, ""))
	if err != nil {
		return nil, err
	}
	return s.execAnswer(res), nil
}

type executeCodeIn struct {
	Code             string  `json:"code" jsonschema:"Code to execute (supports magic commands with %, shell commands with !)"`
	Timeout          int     `json:"timeout,omitempty" jsonschema:"Maximum seconds to wait for execution (0 = use config default)"`
	KernelID         *string `json:"kernel_id,omitempty" jsonschema:"Target an existing kernel by ID (e.g. a raw kernel with no notebook). If omitted, uses the current notebook's kernel."`
	ProgressInterval int     `json:"progress_interval,omitempty" jsonschema:"Seconds between MCP progress keepalive updates during long-running execution"`
}

func patchExecuteCode(p patcher) {
	seconds(def(p.get("timeout"), 30))
	nullable(p.get("kernel_id"))
	seconds(def(p.get("progress_interval"), 5))
}

func (s *Server) executeCode(ctx context.Context, c *call, in executeCodeIn) (*answer, error) {
	res, err := s.e.ExecuteCode(ctx, c.session, in.Code, s.execOptions(ctx, c, in.Timeout, in.ProgressInterval, true, deref(in.KernelID)))
	if err != nil {
		return nil, err
	}
	return s.execAnswer(res), nil
}

// execOptions turns the tool arguments into engine options, with progress
// reported three ways while the execution runs: notifications/progress when
// the client sent a progress token, a log message as keepalive when
// streaming, and a progress note on the engine's call record for the
// workbench.
//
// A notification's progress is the seconds elapsed, and its total is left
// unset: how long a run takes is unknown, and the timeout is only how long
// the call waits (a cell keeps running after it), so a total would make a
// client draw a percentage that means nothing. Its message says how long
// it has run, how many outputs it has made, and their newest lines.
func (s *Server) execOptions(ctx context.Context, c *call, timeout, interval int, stream bool, kernelID string) engine.ExecOptions {
	if timeout < 0 {
		timeout = 0
	}
	if interval <= 0 {
		interval = 5
	}
	opts := engine.ExecOptions{
		Timeout:          time.Duration(timeout) * time.Second,
		KernelID:         kernelID,
		CallID:           c.id,
		ProgressInterval: time.Duration(interval) * time.Second,
	}
	// Where progress goes: this call's request, or for a call that runs
	// apart from its request (runs.go) whichever request waits for it now.
	sinkFor := func() progressSink { return progressSink{} }
	switch {
	case c.run != nil:
		sinkFor = c.run.progressTo
	case c.req != nil:
		sk := sinkOf(ctx, c.req)
		sinkFor = func() progressSink { return sk }
	}
	opts.Progress = func(p engine.ExecProgress) {
		if c.id != "" {
			// The workbench shows the outputs themselves in its
			// executions pane: its call record gets the summary line.
			s.e.Calls().Progress(c.id, progressSummary(p))
		}
		sk := sinkFor()
		if sk.ss == nil && c.run == nil {
			return
		}
		msg := progressMessage(p)
		if c.run != nil {
			// A task's poll reads it (tasks.go).
			c.run.noteProgress(msg)
		}
		if sk.ss == nil {
			return
		}
		if sk.token != nil {
			_ = sk.ss.NotifyProgress(sk.ctx, &sdk.ProgressNotificationParams{
				ProgressToken: sk.token, Progress: p.Elapsed.Seconds(), Message: msg,
			})
		}
		if stream {
			// On 2026-07-28 the SDK sends it only to a request that
			// asked for logging (its _meta logLevel); progress carries
			// the output there.
			//lint:ignore SA1019 deprecated only from protocol 2026-07-28; the reference streams outputs this way and 2025-11-25 hosts read it
			_ = sk.ss.Log(sk.ctx, &sdk.LoggingMessageParams{Level: "info", Logger: "jupyter-mcp-server", Data: msg})
		}
	}
	return opts
}

// progressSummary is the first line of a progress message: time so far,
// the timeout, and the count of outputs as the result will count them.
func progressSummary(p engine.ExecProgress) string {
	outs := "no output yet"
	switch {
	case p.Outputs == 1:
		outs = "1 output so far"
	case p.Outputs > 1:
		outs = fmt.Sprintf("%d outputs so far", p.Outputs)
	}
	return fmt.Sprintf("Execution in progress: %.0fs elapsed (timeout %.0fs), %s", p.Elapsed.Seconds(), p.Timeout.Seconds(), outs)
}

// progressMessage is the summary line, then the newest output lines (at
// most engine.ProgressLines, each cut to engine.ProgressLineWidth).
func progressMessage(p engine.ExecProgress) string {
	msg := progressSummary(p)
	if len(p.Latest) > 0 {
		msg += ". Latest output:\n" + strings.Join(p.Latest, "\n")
	}
	return msg
}

// timeoutNote says that the call stopped waiting and the run goes on, or
// that it was interrupted (execution.interrupt-on-timeout). It starts as the
// reference's markers do ("[TIMEOUT ERROR: Execution exceeded N seconds"),
// which its clients look for; an interrupted run gets the reference's
// marker itself.
func timeoutNote(res engine.ExecResult) string {
	wait := res.Timeout
	if wait == 0 {
		wait = res.Elapsed
	}
	secs := int(wait.Round(time.Second) / time.Second)
	what := "Execution"
	if res.Notebook == "" {
		what = "IPython execution"
	}
	switch {
	case res.Interrupted && !res.StillRunning:
		return fmt.Sprintf("[TIMEOUT ERROR: %s exceeded %d seconds and was interrupted]", what, secs)
	case res.Interrupted:
		return fmt.Sprintf("[TIMEOUT ERROR: %s exceeded %d seconds; the kernel was interrupted but the run has not stopped yet. Interrupt it again from the workbench, or restart_notebook to stop it.]", what, secs)
	}
	where := "on the kernel"
	if res.SandboxName != "" {
		where = fmt.Sprintf("on sandbox '%s'", res.SandboxName)
	}
	if res.Notebook != "" {
		return fmt.Sprintf("[TIMEOUT ERROR: Execution exceeded %d seconds and is still running %s. Its outputs keep being saved into the notebook; call read_cell with cell_id '%s' later to see the rest.]",
			secs, where, res.Cell.ID)
	}
	return fmt.Sprintf("[TIMEOUT ERROR: IPython execution exceeded %d seconds and is still running %s. execute_code does not save outputs anywhere, so what it prints from now on will not be shown; interrupt it from the workbench, or wait before running more code there.]",
		secs, where)
}

// execAnswer shapes an execution's result: its outputs in order, then the
// notes an agent must not miss (still running, kernel restarted, aborted).
func (s *Server) execAnswer(res engine.ExecResult) *answer {
	loc := outputLoc{notebook: res.Notebook, cellID: res.Cell.ID}
	var notes []string
	if res.KernelRestarted {
		notes = append(notes, "[KERNEL RESTARTED: the kernel died and was replaced by a new one; all state (variables, imports, loaded data) was lost. Re-run the cells this code depends on.]")
	}
	if res.StillRunning || res.Interrupted {
		notes = append(notes, timeoutNote(res))
	} else if res.Status == "aborted" {
		notes = append(notes, "[ABORTED: the kernel did not run this code (an earlier execution failed or it was interrupted).]")
	}
	if res.InterruptedByPerson {
		notes = append(notes, interruptedByPersonNote)
	}
	a := outputs(res.Outputs, loc, s.render(), nil, notes...)
	a.cellError = cellError(res)
	if res.Cell.ID != "" {
		a.withCell(res.Cell.ID)
	}
	return a.withNotebook(res.Notebook)
}
