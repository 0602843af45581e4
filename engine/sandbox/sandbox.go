// Package sandbox runs code outside the notebooks' kernels: in a local
// persistent Python interpreter (the eval variant) or in a kernel of its own
// on a Jupyter server (the jupyter-server variant). It also knows every
// variant the reference names and which arguments each one takes, so that a
// launch this build cannot honour is refused in one clear sentence instead of
// pretending to start.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Variant names.
const (
	Eval          = "eval"
	JupyterServer = "jupyter-server"
)

// States a sandbox reports.
const (
	StateIdle       = "idle"
	StateBusy       = "busy"
	StateTerminated = "terminated"
	StateFailed     = "failed" // its process or kernel died; it cannot run code
)

// Sandbox is one launched sandbox.
type Sandbox interface {
	Info() Info
	// Execute runs code. It returns when the code finished, when
	// req.Timeout passed, or when ctx is done (see Result).
	Execute(ctx context.Context, req Request) (Result, error)
	// Interrupt stops the running code (KeyboardInterrupt); the sandbox
	// and its state survive.
	Interrupt(ctx context.Context) error
	// Terminate stops the sandbox for good. It is safe to call twice.
	Terminate(ctx context.Context) error
	// State is idle, busy, terminated or failed.
	State() string
}

// Info describes a launched sandbox.
type Info struct {
	Variant  string
	URL      string // jupyter-server: the server's base URL (no token)
	KernelID string // jupyter-server: the kernel it runs on
	PID      int    // eval: the interpreter's process id
	Python   string // eval: the interpreter's version
}

// Request is one execution.
type Request struct {
	Code    string
	Timeout time.Duration // must be > 0
	// OnOutput, when set, is called with every output as it arrives, in
	// order. It must not block. For a jupyter-server run that outlives its
	// timeout it keeps being called after Execute returned.
	OnOutput func(notebook.Output)
	// OnClear, when set, is called when the code clears its outputs
	// (clear_output): the outputs before it are gone from the result.
	OnClear func()
	// OnFinish, when set, is called once when a run that Execute left
	// running (Result.StillRunning) really ends, with its final status.
	OnFinish func(status string)
}

// Result is what an execution produced by the time Execute returned.
type Result struct {
	// Outputs in order, consecutive stream text of the same stream merged.
	Outputs        []notebook.Output
	ExecutionCount *int
	// Status is ok, error (the code raised, or was interrupted), or aborted
	// (the sandbox could not finish the run: it died or was stopped).
	Status string
	// StillRunning: the timeout passed and the code keeps running (the
	// jupyter-server variant); outputs keep arriving through OnOutput.
	StillRunning bool
	// Interrupted: the code was interrupted because the timeout passed or
	// the call was cancelled (the eval variant).
	Interrupted bool
	Elapsed     time.Duration
}

// Refusal is a launch that cannot happen as asked. Its message is one
// sentence the caller can act on.
type Refusal struct{ Msg string }

func (r *Refusal) Error() string { return r.Msg }

// CallerCanFix marks a refusal as a problem the caller can fix.
func (*Refusal) CallerCanFix() bool { return true }

// IsRefusal reports whether err is a refusal: a *Refusal or one of the
// typed refusals (*ArgRefusedError, *NoKernelError, *NoKernelSpecError).
func IsRefusal(err error) bool {
	var r interface{ CallerCanFix() bool }
	return errors.As(err, &r) && r.CallerCanFix()
}

// Arg is a launch argument some variants refuse.
type Arg int

// The launch arguments only some variants take.
const (
	ArgGPU Arg = iota
	ArgEnvironmentVersion
	ArgSnapshot
)

// ArgRefusedError: the variant does not take Arg (given as Value). Takers
// lists the variants that do.
type ArgRefusedError struct {
	Variant string
	Arg     Arg
	Value   string
	Takers  []string
}

func (e *ArgRefusedError) Error() string {
	switch e.Arg {
	case ArgGPU:
		return fmt.Sprintf("the %s variant has no GPU, so the GPU %q is refused rather than run on a CPU: only %s have one",
			e.Variant, e.Value, strings.Join(e.Takers, ", "))
	case ArgEnvironmentVersion:
		return fmt.Sprintf("only the datalayer variant has environment versions, so the environment version %q is refused for %s",
			e.Value, e.Variant)
	}
	return fmt.Sprintf("only the datalayer variant has snapshots, so the snapshot %q is refused for %s rather than started empty",
		e.Value, e.Variant)
}

// CallerCanFix marks the refusal as a problem the caller can fix.
func (*ArgRefusedError) CallerCanFix() bool { return true }

// NoKernelError: a sandbox was to use an existing kernel the Jupyter server
// at Server does not have.
type NoKernelError struct{ KernelID, Server string }

func (e *NoKernelError) Error() string {
	return fmt.Sprintf("there is no kernel %s on the Jupyter server at %s", e.KernelID, e.Server)
}

// CallerCanFix marks the refusal as a problem the caller can fix.
func (*NoKernelError) CallerCanFix() bool { return true }

// NoKernelSpecError: the Jupyter server at Server has no kernel spec Spec
// (the environment of a jupyter-server sandbox); Specs lists the ones it has.
type NoKernelSpecError struct {
	Server, Spec string
	Specs        []string
}

func (e *NoKernelSpecError) Error() string {
	return fmt.Sprintf("the Jupyter server at %s has no kernel spec %q; its kernel specs are %s", e.Server, e.Spec, e.Quoted())
}

// Quoted lists the server's kernel specs, quoted.
func (e *NoKernelSpecError) Quoted() string {
	q := make([]string, len(e.Specs))
	for i, s := range e.Specs {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// CallerCanFix marks the refusal as a problem the caller can fix.
func (*NoKernelSpecError) CallerCanFix() bool { return true }

func refusef(format string, args ...any) error {
	return &Refusal{Msg: fmt.Sprintf(format, args...)}
}

// variant is what this build knows of one sandbox variant.
type variant struct {
	gpu bool // takes the gpu argument
	// needs says, for variants this build cannot launch, what launching one
	// would take. Empty for the variants it can launch.
	needs string
}

// variants are the variants the reference names.
var variants = map[string]variant{
	Eval:          {},
	JupyterServer: {},
	"docker":      {needs: "a Docker daemon on this machine and the Datalayer code-sandbox image"},
	"e2b":         {needs: "an E2B account (E2B_API_KEY) and network access to the E2B cloud"},
	"modal":       {gpu: true, needs: "a Modal account (MODAL_TOKEN_ID and MODAL_TOKEN_SECRET) and network access to Modal"},
	"daytona":     {gpu: true, needs: "a Daytona account (DAYTONA_API_KEY) and network access to the Daytona API"},
	"datalayer":   {gpu: true, needs: "a Datalayer account (DATALAYER_API_KEY) and network access to the Datalayer platform"},
	"coreweave":   {gpu: true, needs: "CoreWeave cloud credentials and network access to CoreWeave"},
	"cloudflare":  {needs: "a Cloudflare account (API token) with a deployed Cloudflare Sandbox worker reachable over the network"},
	"google-colab": {
		needs: "a running Google Colab runtime with the code-sandbox proxy (its server URL, kernel id and proxy token) reachable over the network"},
	"kaggle": {gpu: true,
		needs: "a Kaggle notebook session with the code-sandbox proxy (its server or channels URL) and a Kaggle API token (given, or KAGGLE_API_TOKEN)"},
	"monty": {needs: "the Monty sandboxed Python interpreter (pydantic-monty), which this build does not include"},
}

// Launchable lists the variants this build can launch.
func Launchable() []string { return []string{Eval, JupyterServer} }

// Known lists every variant the reference names, sorted.
func Known() []string {
	out := make([]string, 0, len(variants))
	for name := range variants {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// GPUVariants lists the variants that take the gpu argument, sorted.
func GPUVariants() []string {
	var out []string
	for name, v := range variants {
		if v.gpu {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Args are the launch arguments whose use the reference restricts to some
// variants.
type Args struct {
	GPU                string
	EnvironmentVersion string
	SnapshotName       string
}

// DefaultVariant is the variant a launch without one gets: the configured
// one (SANDBOX_VARIANT) unless it is empty or jupyter-server, else eval.
func DefaultVariant(configured string) string {
	v := Normalize(configured)
	if v == "" || v == JupyterServer {
		return Eval
	}
	return v
}

// Normalize trims and lower-cases a variant name.
func Normalize(v string) string { return strings.ToLower(strings.TrimSpace(v)) }

// Check applies the reference's rules to a launch of variant with args:
// the variant must be one it names; gpu only for the variants that have
// one; environment_version and snapshot_name only for datalayer; and the
// variant must be one this build can launch. The first rule broken is
// returned as a *Refusal or an *ArgRefusedError.
func Check(name string, a Args) error {
	v, ok := variants[name]
	if !ok {
		return refusef("unknown sandbox variant %q: the variants are %s; this build can launch %s",
			name, strings.Join(Known(), ", "), strings.Join(Launchable(), " and "))
	}
	if a.GPU != "" && !v.gpu {
		return &ArgRefusedError{Variant: name, Arg: ArgGPU, Value: a.GPU, Takers: GPUVariants()}
	}
	if a.EnvironmentVersion != "" && name != "datalayer" {
		return &ArgRefusedError{Variant: name, Arg: ArgEnvironmentVersion, Value: a.EnvironmentVersion, Takers: []string{"datalayer"}}
	}
	if a.SnapshotName != "" && name != "datalayer" {
		return &ArgRefusedError{Variant: name, Arg: ArgSnapshot, Value: a.SnapshotName, Takers: []string{"datalayer"}}
	}
	if v.needs != "" {
		return refusef("the %s variant needs %s, which this build does not provide; it can launch the %s variants",
			name, v.needs, strings.Join(Launchable(), " and "))
	}
	return nil
}
