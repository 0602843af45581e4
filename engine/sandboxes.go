package engine

import (
	"context"
	"time"
)

// SandboxSpec is what launch_sandbox asks for.
type SandboxSpec struct {
	Name               string
	Variant            string // "" = the configured default
	Timeout            time.Duration
	Environment        string
	EnvironmentVersion string // number or uid, "" = unset
	GPU                string
	ServerURL          string
	KernelID           string
	ProxyToken         string
	ChannelsURL        string
	Token              string
	PythonVersion      string
	SnapshotName       string
}

// SandboxInfo describes a launched sandbox (the object launch_sandbox
// answers with and list_sandboxes lists).
type SandboxInfo struct {
	Name     string        `json:"name"`
	ID       string        `json:"id"`
	Variant  string        `json:"variant"`
	State    string        `json:"state"`
	URL      string        `json:"url,omitempty"`
	KernelID string        `json:"kernel_id,omitempty"`
	Timeout  time.Duration `json:"-"`
	Created  time.Time     `json:"created"`
	Active   bool          `json:"active"` // the asking session's execute_code target
}

// sandboxRegistry holds the launched sandboxes (sandboxes.go).
type sandboxRegistry struct{}

// LaunchSandbox launches a sandbox. Refusals (unknown or unavailable variant,
// arguments a variant does not take, a duplicate name) are *UserError.
func (e *Engine) LaunchSandbox(ctx context.Context, session string, spec SandboxSpec) (SandboxInfo, error) {
	panic("unimplemented")
}

// UseSandbox makes execute_code of the session run on the named sandbox; ""
// returns it to kernels. It answers the sandbox in use ("" for kernels).
func (e *Engine) UseSandbox(session, name string) (string, error) { panic("unimplemented") }

// ListSandboxes lists the launched sandboxes.
func (e *Engine) ListSandboxes(session string) []SandboxInfo { panic("unimplemented") }

// TerminateSandbox stops a sandbox and unregisters it.
func (e *Engine) TerminateSandbox(ctx context.Context, name string) error { panic("unimplemented") }

// executeOnSandbox runs code on the session's active sandbox. ok is false
// when the session has none (execute_code then uses kernels).
func (e *Engine) executeOnSandbox(ctx context.Context, session, code string, opts ExecOptions) (res ExecResult, ok bool, err error) {
	panic("unimplemented")
}
