package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
)

// Sandbox tools: launch, use, list, terminate.

type launchSandboxIn struct {
	SandboxName        string          `json:"sandbox_name" jsonschema:"Unique sandbox identifier used by list/use/terminate tools"`
	Variant            *string         `json:"variant,omitempty" jsonschema:"Sandbox variant to launch. If omitted, defaults to configured SANDBOX_VARIANT when it is not jupyter-server; otherwise falls back to eval."`
	Timeout            int             `json:"timeout,omitempty" jsonschema:"Default execution timeout in seconds for this sandbox"`
	Environment        *string         `json:"environment,omitempty" jsonschema:"Optional sandbox environment name (common for datalayer/modal variants). On the datalayer variant this is a platform environment by name, such as ai-agents-env, or an environment somebody built, written 'account/name' — the account being a person's handle or an organization's."`
	EnvironmentVersion json.RawMessage `json:"environment_version,omitempty" jsonschema:"Which version of an 'account/name' environment to launch: its number, such as 3, or a version uid. Leave it unset to get the version its owner promoted, which is what you want unless you were asked for a particular one. Only the datalayer variant has versions; naming one for any other variant is refused rather than quietly ignored."`
	GPU                *string         `json:"gpu,omitempty" jsonschema:"Optional GPU flavor / accelerator. Only coreweave, datalayer, daytona, kaggle and modal have a GPU; asking one of the others (e2b, cloudflare, docker, eval, google-colab, jupyter-server, monty) for a GPU is refused rather than quietly run on a CPU, so leave this unset for them. Examples: modal/datalayer T4, A10G, A100, H100; daytona H100, H200, RTX-4090; coreweave H100; kaggle NvidiaTeslaT4, NvidiaTeslaP100, or the aliases T4/P100."`
	ServerURL          *string         `json:"server_url,omitempty" jsonschema:"Code Sandbox proxy URL when using the google-colab or kaggle variant"`
	KernelID           *string         `json:"kernel_id,omitempty" jsonschema:"Kernel ID when using the google-colab or kaggle variant"`
	ProxyToken         *string         `json:"proxy_token,omitempty" jsonschema:"Google Colab code sandbox proxy token when using google-colab variant"`
	ChannelsURL        *string         `json:"channels_url,omitempty" jsonschema:"Notebook session WebSocket channels URL to derive server_url/kernel_id (google-colab or kaggle variant)"`
	Token              *string         `json:"token,omitempty" jsonschema:"Kaggle API token for the kaggle variant (falls back to KAGGLE_API_TOKEN)"`
	PythonVersion      *string         `json:"python_version,omitempty" jsonschema:"Modal Python version override (e.g. 3.12). Only used for modal variant."`
	SnapshotName       *string         `json:"snapshot_name,omitempty" jsonschema:"Start from a saved snapshot instead of an empty sandbox, restoring the state it was taken in. Only the datalayer variant has snapshots; naming one for any other variant is refused rather than quietly started empty."`
}

func patchLaunchSandbox(p patcher) {
	def(maximum(minimum(p.get("timeout"), 1), MaxTimeoutSeconds), 60)
	for _, n := range []string{"variant", "environment", "gpu", "server_url", "kernel_id", "proxy_token", "channels_url", "token", "python_version", "snapshot_name"} {
		nullable(p.get(n))
	}
	ev := p.get("environment_version")
	ev.Type, ev.Types, ev.Items = "", []string{"string", "integer", "null"}, nil
	ev.Default = json.RawMessage("null")
}

// versionText is environment_version as the engine takes it: a number or a
// uid, "" when unset.
func versionText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		return n.String()
	}
	return ""
}

// sandboxSpec is the launch in the engine's terms (also its preview's).
func sandboxSpec(in launchSandboxIn) engine.SandboxSpec {
	return engine.SandboxSpec{
		Name:               in.SandboxName,
		Variant:            deref(in.Variant),
		Timeout:            time.Duration(in.Timeout) * time.Second,
		Environment:        deref(in.Environment),
		EnvironmentVersion: versionText(in.EnvironmentVersion),
		GPU:                deref(in.GPU),
		ServerURL:          deref(in.ServerURL),
		KernelID:           deref(in.KernelID),
		ProxyToken:         deref(in.ProxyToken),
		ChannelsURL:        deref(in.ChannelsURL),
		Token:              deref(in.Token),
		PythonVersion:      deref(in.PythonVersion),
		SnapshotName:       deref(in.SnapshotName),
	}
}

// launchSandbox answers with an object (the reference's mapping): a message
// and the sandbox record, at the top level beside kind, with no result.
func (s *Server) launchSandbox(ctx context.Context, c *call, in launchSandboxIn) (*answer, error) {
	info, err := s.e.LaunchSandbox(ctx, c.session, sandboxSpec(in))
	if err != nil {
		return nil, err
	}
	return object(map[string]any{
		"message": "Sandbox launched successfully. Use 'use_sandbox' to route 'execute_code' to this sandbox instead of a Jupyter kernel.",
		"sandbox": info,
	}), nil
}

type useSandboxIn struct {
	SandboxName *string `json:"sandbox_name,omitempty" jsonschema:"Sandbox name to activate for execute_code. Pass null/empty to disable sandbox routing and return to Jupyter kernels."`
}

func patchUseSandbox(p patcher) { nullable(p.get("sandbox_name")) }

func (s *Server) useSandbox(_ context.Context, c *call, in useSandboxIn) (*answer, error) {
	active, err := s.e.UseSandbox(c.session, deref(in.SandboxName))
	if err != nil {
		return nil, err
	}
	if active == "" {
		return message("Sandbox routing disabled. 'execute_code' now uses Jupyter kernels again based on the active notebook/kernel context."), nil
	}
	return message(fmt.Sprintf("Sandbox '%s' is now active. 'execute_code' will run on this sandbox instead of a Jupyter kernel until you switch or clear it.", active)), nil
}

func (s *Server) listSandboxes(_ context.Context, c *call, _ noArgs) (*answer, error) {
	return records(s.e.ListSandboxes(c.session)), nil
}

type terminateSandboxIn struct {
	SandboxName string `json:"sandbox_name" jsonschema:"Sandbox name to terminate and unregister"`
}

func (s *Server) terminateSandbox(ctx context.Context, _ *call, in terminateSandboxIn) (*answer, error) {
	if err := s.e.TerminateSandbox(ctx, in.SandboxName); err != nil {
		return nil, err
	}
	return message(fmt.Sprintf("Sandbox '%s' terminated.", in.SandboxName)), nil
}
