//go:build unix

// Most of these tests launch the eval sandbox, which runs on Unix only
// (see engine/sandbox/eval_windows.go).

package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/proctest"
)

// eventLog records what the sandbox registry publishes.
type eventLog struct {
	mu  sync.Mutex
	evs []event.Event
}

func (l *eventLog) add(ev event.Event) {
	l.mu.Lock()
	l.evs = append(l.evs, ev)
	l.mu.Unlock()
}

func (l *eventLog) all() []event.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event.Event(nil), l.evs...)
}

// sandboxStates lists the states published for the named sandbox.
func (l *eventLog) sandboxStates(name string) []string {
	var out []string
	for _, ev := range l.all() {
		if ev.Type == event.EvSandboxStatus && ev.Sandbox.Name == name {
			out = append(out, ev.Sandbox.State)
		}
	}
	return out
}

// execEvents lists the execution events of one execution.
func (l *eventLog) execEvents(id string) []event.Event {
	var out []event.Event
	for _, ev := range l.all() {
		if ev.Exec != nil && ev.Exec.ID == id {
			out = append(out, ev)
		}
	}
	return out
}

func newSandboxEngine(t *testing.T, defaultVariant string, client func() *jupyter.Client) (*Engine, *eventLog) {
	t.Helper()
	log := &eventLog{}
	r := newSandboxRegistry(nil, client, defaultVariant, time.Hour, nil)
	r.publish = log.add
	e := &Engine{sandboxes: r}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r.closeAll(ctx)
	})
	return e, log
}

// pidAlive reports whether pid runs (a zombie counts as gone).
func pidAlive(pid int) bool { return proctest.Alive(pid) }

func outputsText(outs []notebook.Output) string {
	var b strings.Builder
	for _, o := range outs {
		switch o.OutputType {
		case notebook.Stream:
			b.WriteString(o.Text)
		case notebook.Error:
			b.WriteString(o.EName + ": " + o.EValue + "\n")
		default:
			if v, ok := o.Data["text/plain"]; ok {
				b.WriteString(notebook.DataText(v) + "\n")
			}
		}
	}
	return b.String()
}

func TestLaunchSandboxRefusals(t *testing.T) {
	t.Parallel()
	const launchable = "it can launch the eval and jupyter-server variants"
	cases := []struct {
		name     string
		dflt     string // SANDBOX_VARIANT
		noClient bool
		spec     SandboxSpec
		want     []string
	}{
		{name: "no name", spec: SandboxSpec{Variant: "eval"}, want: []string{"a sandbox name is required"}},
		{name: "blank name", spec: SandboxSpec{Name: "  "}, want: []string{"a sandbox name is required"}},
		{name: "unknown variant", spec: SandboxSpec{Name: "s", Variant: "podman"},
			want: []string{`unknown sandbox variant "podman"`, "cloudflare", "google-colab", "monty", "this build can launch eval and jupyter-server"}},
		{name: "gpu on eval", spec: SandboxSpec{Name: "s", Variant: "eval", GPU: "T4"},
			want: []string{"eval variant has no GPU", `the GPU "T4" is refused`, "coreweave, datalayer, daytona, kaggle, modal"}},
		{name: "gpu on jupyter-server", spec: SandboxSpec{Name: "s", Variant: "jupyter-server", GPU: "A100"}, want: []string{"jupyter-server variant has no GPU"}},
		{name: "gpu on docker", spec: SandboxSpec{Name: "s", Variant: "docker", GPU: "T4"}, want: []string{"docker variant has no GPU"}},
		{name: "gpu on e2b", spec: SandboxSpec{Name: "s", Variant: "e2b", GPU: "T4"}, want: []string{"e2b variant has no GPU"}},
		{name: "gpu on cloudflare", spec: SandboxSpec{Name: "s", Variant: "cloudflare", GPU: "T4"}, want: []string{"cloudflare variant has no GPU"}},
		{name: "gpu on google-colab", spec: SandboxSpec{Name: "s", Variant: "google-colab", GPU: "T4"}, want: []string{"google-colab variant has no GPU"}},
		{name: "gpu on monty", spec: SandboxSpec{Name: "s", Variant: "monty", GPU: "T4"}, want: []string{"monty variant has no GPU"}},
		{name: "gpu on default eval", spec: SandboxSpec{Name: "s", GPU: "T4"}, want: []string{"eval variant has no GPU"}},
		// A GPU variant takes the gpu, and is then refused for what it needs.
		{name: "gpu on modal", spec: SandboxSpec{Name: "s", Variant: "modal", GPU: "T4"}, want: []string{"modal variant needs a Modal account", launchable}},
		{name: "gpu on coreweave", spec: SandboxSpec{Name: "s", Variant: "coreweave", GPU: "H100"}, want: []string{"coreweave variant needs", launchable}},
		{name: "gpu on kaggle", spec: SandboxSpec{Name: "s", Variant: "kaggle", GPU: "T4"}, want: []string{"kaggle variant needs", launchable}},
		{name: "environment_version on eval", spec: SandboxSpec{Name: "s", Variant: "eval", EnvironmentVersion: "3"},
			want: []string{"only the datalayer variant has environment versions", `the environment version "3" is refused for eval`}},
		{name: "environment_version on modal", spec: SandboxSpec{Name: "s", Variant: "modal", EnvironmentVersion: "v-uid"}, want: []string{"refused for modal"}},
		{name: "snapshot_name on jupyter-server", spec: SandboxSpec{Name: "s", Variant: "jupyter-server", SnapshotName: "snap"},
			want: []string{"only the datalayer variant has snapshots", "refused for jupyter-server"}},
		{name: "snapshot_name on daytona", spec: SandboxSpec{Name: "s", Variant: "daytona", SnapshotName: "snap"}, want: []string{"refused for daytona"}},
		{name: "datalayer with version and snapshot", spec: SandboxSpec{Name: "s", Variant: "datalayer", EnvironmentVersion: "3", SnapshotName: "snap", GPU: "A100"},
			want: []string{"datalayer variant needs a Datalayer account", launchable}},
		{name: "docker", spec: SandboxSpec{Name: "s", Variant: "docker"}, want: []string{"docker variant needs a Docker daemon", launchable}},
		{name: "e2b", spec: SandboxSpec{Name: "s", Variant: "e2b"}, want: []string{"E2B_API_KEY", launchable}},
		{name: "modal", spec: SandboxSpec{Name: "s", Variant: "modal"}, want: []string{"MODAL_TOKEN_ID", launchable}},
		{name: "daytona", spec: SandboxSpec{Name: "s", Variant: "daytona"}, want: []string{"DAYTONA_API_KEY", launchable}},
		{name: "datalayer", spec: SandboxSpec{Name: "s", Variant: "datalayer"}, want: []string{"DATALAYER_API_KEY", launchable}},
		{name: "coreweave", spec: SandboxSpec{Name: "s", Variant: "coreweave"}, want: []string{"CoreWeave", launchable}},
		{name: "cloudflare", spec: SandboxSpec{Name: "s", Variant: "cloudflare"}, want: []string{"Cloudflare", launchable}},
		{name: "google-colab", spec: SandboxSpec{Name: "s", Variant: "google-colab"}, want: []string{"Colab runtime", launchable}},
		{name: "kaggle", spec: SandboxSpec{Name: "s", Variant: "kaggle"}, want: []string{"Kaggle", launchable}},
		{name: "monty", spec: SandboxSpec{Name: "s", Variant: "monty"}, want: []string{"Monty", launchable}},
		{name: "variant case and spaces", spec: SandboxSpec{Name: "s", Variant: " Docker "}, want: []string{"docker variant needs"}},
		{name: "default from SANDBOX_VARIANT", dflt: "e2b", spec: SandboxSpec{Name: "s"}, want: []string{"e2b variant needs", launchable}},
		{name: "negative timeout", spec: SandboxSpec{Name: "s", Variant: "eval", Timeout: -time.Second}, want: []string{"timeout must be at least 1 second", "got -1s"}},
		{name: "sub-second timeout", spec: SandboxSpec{Name: "s", Variant: "eval", Timeout: 500 * time.Millisecond}, want: []string{"timeout must be at least 1 second", "got 500ms"}},
		{name: "timeout above the maximum", spec: SandboxSpec{Name: "s", Variant: "eval", Timeout: 2 * time.Hour}, want: []string{"2h0m0s is above this server's longest, 1h0m0s"}},
		{name: "jupyter-server without a server", noClient: true, spec: SandboxSpec{Name: "s", Variant: "jupyter-server"},
			want: []string{"needs a Jupyter server", "none is connected"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var client func() *jupyter.Client
			if tc.noClient {
				client = func() *jupyter.Client { return nil }
			}
			e, log := newSandboxEngine(t, tc.dflt, client)
			_, err := e.LaunchSandbox(context.Background(), "s1", tc.spec)
			if !IsUserError(err) {
				t.Fatalf("err = %v, want a *UserError", err)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			// One sentence: no sentence break inside, and no pretending.
			if strings.Contains(strings.TrimSuffix(msg, "."), ". ") {
				t.Errorf("message is more than one sentence: %q", msg)
			}
			if got := e.ListSandboxes("s1"); len(got) != 0 {
				t.Errorf("a refused launch registered %+v", got)
			}
			if evs := log.all(); len(evs) != 0 {
				t.Errorf("a refused launch published %+v", evs)
			}
		})
	}
}

func TestEvalSandboxLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// SANDBOX_VARIANT=jupyter-server does not make jupyter-server the
	// default: the reference falls back to eval.
	e, log := newSandboxEngine(t, "jupyter-server", nil)

	info, err := e.LaunchSandbox(ctx, "s1", SandboxSpec{Name: "py", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("LaunchSandbox: %v", err)
	}
	if info.Variant != "eval" || info.Name != "py" || !strings.HasPrefix(info.ID, "sbx-") || info.State != "idle" ||
		info.PID == 0 || info.TimeoutSeconds != 2 || info.Active || info.Created.IsZero() {
		t.Fatalf("info = %+v", info)
	}
	if !pidAlive(info.PID) {
		t.Fatalf("interpreter pid %d not running", info.PID)
	}
	if st := log.sandboxStates("py"); len(st) != 1 || st[0] != "idle" {
		t.Errorf("launch published states %q, want [idle]", st)
	}
	if _, err := e.LaunchSandbox(ctx, "s2", SandboxSpec{Name: "py", Variant: "eval"}); !IsUserError(err) || !strings.Contains(err.Error(), `a sandbox named "py" is already launched`) {
		t.Errorf("duplicate name: %v", err)
	}

	// Without use_sandbox, execute_code goes to kernels.
	if _, ok, err := runOnActive(e, ctx, "s1", "1", ExecOptions{}); ok || err != nil {
		t.Fatalf("executeOnSandbox before use: ok=%v err=%v", ok, err)
	}
	if _, err := e.UseSandbox("s1", "nope"); !IsUserError(err) || !strings.Contains(err.Error(), `"py"`) {
		t.Errorf("UseSandbox(unknown) = %v, want an error listing py", err)
	}
	if got, err := e.UseSandbox("s1", "py"); err != nil || got != "py" {
		t.Fatalf("UseSandbox = %q, %v", got, err)
	}

	res, ok, err := runOnActive(e, ctx, "s1", "x = 20", ExecOptions{CallID: "c1"})
	if !ok || err != nil || res.Status != "ok" || res.SandboxName != "py" {
		t.Fatalf("first run: ok=%v err=%v res=%+v", ok, err, res)
	}
	var progress []ExecProgress
	res, ok, err = runOnActive(e, ctx, "s1", "import time\nprint('start')\ntime.sleep(0.35)\nx + 1", ExecOptions{
		CallID:           "c2",
		Progress:         func(p ExecProgress) { progress = append(progress, p) },
		ProgressInterval: 100 * time.Millisecond,
	})
	if !ok || err != nil || outputsText(res.Outputs) != "start\n21\n" || res.ExecutionCount == nil || res.KernelID != "" {
		t.Fatalf("second run: ok=%v err=%v res=%+v", ok, err, res)
	}
	if len(progress) < 2 || progress[0].Timeout != 2*time.Second || progress[len(progress)-1].Outputs != 1 {
		t.Errorf("progress = %+v, want ≥2 reports with the sandbox's 2s timeout and the printed output", progress)
	}
	evs := log.execEvents(res.ExecID)
	if len(evs) != 4 || evs[0].Type != event.EvExecStarted || evs[1].Type != event.EvExecOutput || evs[2].Type != event.EvExecOutput || evs[3].Type != event.EvExecFinished {
		t.Fatalf("exec events = %+v", evs)
	}
	for _, ev := range evs {
		if ev.Exec.SandboxID != info.ID || ev.Exec.CallID != "c2" {
			t.Errorf("event %+v lacks sandbox %s / call c2", ev.Exec, info.ID)
		}
	}
	if evs[0].Exec.Code == "" || evs[1].Exec.Output.Text != "start\n" || evs[2].Exec.Output.Text != "21" || evs[3].Exec.Status != "ok" {
		t.Errorf("exec event payloads: %+v %+v %+v %+v", evs[0].Exec, evs[1].Exec.Output, evs[2].Exec.Output, evs[3].Exec)
	}
	if st := log.sandboxStates("py"); !containsStr(st, "busy") || st[len(st)-1] != "idle" {
		t.Errorf("states %q, want busy then idle", st)
	}

	// The sandbox's own timeout applies when the call passes none, and an
	// eval run past it is interrupted, saying so.
	t0 := time.Now()
	res, _, err = runOnActive(e, ctx, "s1", "import time\ntime.sleep(30)", ExecOptions{})
	if err != nil || res.StillRunning || time.Since(t0) > 5*time.Second || !strings.Contains(outputsText(res.Outputs), "ran past its 2s timeout") {
		t.Errorf("timed-out run: err=%v after %s: %+v", err, time.Since(t0), res)
	}
	if evs := log.execEvents(res.ExecID); evs[len(evs)-1].Exec.Status != "interrupted" {
		t.Errorf("finish event status %q, want interrupted", evs[len(evs)-1].Exec.Status)
	}
	res, _, _ = runOnActive(e, ctx, "s1", "import time\ntime.sleep(30)", ExecOptions{Timeout: 300 * time.Millisecond})
	if !strings.Contains(outputsText(res.Outputs), "ran past its 300ms timeout") {
		t.Errorf("call timeout not used: %+v", res)
	}

	// A cancelled call interrupts the code and says so.
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	res, ok, err = runOnActive(e, cctx, "s1", "import time\ntime.sleep(30)", ExecOptions{})
	cancel()
	if !ok || err == nil || !errors.Is(err, context.DeadlineExceeded) || res.Status != "aborted" {
		t.Errorf("cancelled run: ok=%v err=%v res=%+v", ok, err, res)
	}

	// Routing is per session, and listing marks the asking session's one.
	if _, ok, _ := runOnActive(e, ctx, "s2", "1", ExecOptions{}); ok {
		t.Error("session s2 was routed to s1's sandbox")
	}
	if l := e.ListSandboxes("s1"); len(l) != 1 || !l[0].Active || l[0].Name != "py" {
		t.Errorf("ListSandboxes(s1) = %+v", l)
	}
	if l := e.ListSandboxes("s2"); len(l) != 1 || l[0].Active {
		t.Errorf("ListSandboxes(s2) = %+v", l)
	}
	if got, err := e.UseSandbox("s1", ""); err != nil || got != "" {
		t.Errorf("UseSandbox(\"\") = %q, %v", got, err)
	}
	if _, ok, _ := runOnActive(e, ctx, "s1", "1", ExecOptions{}); ok {
		t.Error("UseSandbox(\"\") did not return execute_code to kernels")
	}

	// Terminate stops the interpreter, unregisters the sandbox and clears
	// it as active everywhere.
	if _, err := e.UseSandbox("s2", "py"); err != nil {
		t.Fatal(err)
	}
	if err := e.TerminateSandbox(ctx, "py"); err != nil {
		t.Fatalf("TerminateSandbox: %v", err)
	}
	if pidAlive(info.PID) {
		t.Errorf("interpreter pid %d alive after terminate", info.PID)
	}
	if l := e.ListSandboxes("s2"); len(l) != 0 {
		t.Errorf("still listed: %+v", l)
	}
	if _, ok, _ := runOnActive(e, ctx, "s2", "1", ExecOptions{}); ok {
		t.Error("a terminated sandbox is still routed to")
	}
	if st := log.sandboxStates("py"); st[len(st)-1] != "terminated" {
		t.Errorf("states %q, want terminated last", st)
	}
	if err := e.TerminateSandbox(ctx, "py"); !IsUserError(err) {
		t.Errorf("terminating it again: %v, want a *UserError", err)
	}
	// The name is free again.
	if _, err := e.LaunchSandbox(ctx, "s1", SandboxSpec{Name: "py", Variant: "eval"}); err != nil {
		t.Errorf("relaunch under the same name: %v", err)
	}
}

func TestSandboxCloseAllAndSessionClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := newSandboxEngine(t, "", nil)
	a, err := e.LaunchSandbox(ctx, "s1", SandboxSpec{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.LaunchSandbox(ctx, "s1", SandboxSpec{Name: "b", Variant: "eval"})
	if err != nil {
		t.Fatal(err)
	}
	if l := e.ListSandboxes("s1"); len(l) != 2 || l[0].Name != "a" || l[1].Name != "b" {
		t.Errorf("list not in launch order: %+v", l)
	}
	if _, err := e.UseSandbox("s1", "a"); err != nil {
		t.Fatal(err)
	}
	e.sandboxes.sessionClosed("s1")
	if _, ok, _ := runOnActive(e, ctx, "s1", "1", ExecOptions{}); ok {
		t.Error("a closed session kept its sandbox")
	}
	e.sandboxes.closeAll(ctx)
	if pidAlive(a.PID) || pidAlive(b.PID) {
		t.Errorf("pids %d/%d alive after closeAll", a.PID, b.PID)
	}
	if _, err := e.LaunchSandbox(ctx, "s1", SandboxSpec{Name: "c"}); err == nil {
		t.Error("launched after closeAll")
	}
}

func TestJupyterServerSandbox(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	client := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, log := newSandboxEngine(t, "", func() *jupyter.Client { return client })

	info, err := e.LaunchSandbox(ctx, "s1", SandboxSpec{Name: "k", Variant: "jupyter-server", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("LaunchSandbox: %v", err)
	}
	if info.KernelID == "" || info.URL != srv.URL || info.Variant != "jupyter-server" {
		t.Fatalf("info = %+v", info)
	}
	// Not attached to any notebook: no session holds its kernel.
	sessions, err := client.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		if s.Kernel.ID == info.KernelID {
			t.Errorf("the sandbox kernel is attached to %s", s.Path)
		}
	}

	if _, err := e.UseSandbox("s1", "k"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runOnActive(e, ctx, "s1", "y = 6", ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	res, ok, err := runOnActive(e, ctx, "s1", "y * 7", ExecOptions{})
	if !ok || err != nil || outputsText(res.Outputs) != "42\n" || res.KernelID != info.KernelID || res.SandboxName != "k" {
		t.Fatalf("run: ok=%v err=%v res=%+v", ok, err, res)
	}

	// Progress reports count the outputs as the result holds them (the
	// pieces of one stream are one output; clear_output starts over) and
	// carry their newest lines.
	var mu sync.Mutex
	var reports []ExecProgress
	res, _, err = runOnActive(e, ctx, "s1", "import time\nfrom IPython.display import clear_output\nprint('old', flush=True)\nclear_output()\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(1)",
		ExecOptions{ProgressInterval: 200 * time.Millisecond, Progress: func(p ExecProgress) {
			mu.Lock()
			reports = append(reports, p)
			mu.Unlock()
		}})
	if err != nil || len(res.Outputs) != 1 || outputsText(res.Outputs) != "0\n1\n2\n" {
		t.Fatalf("run with progress: err=%v res=%+v", err, res)
	}
	mu.Lock()
	sawDigits := false
	for _, p := range reports {
		if p.Outputs > 1 || len(p.Latest) > 3 {
			t.Errorf("progress report %+v: the run never has more than one output", p)
		}
		if slices.Contains(p.Latest, "old") && len(p.Latest) > 1 {
			t.Errorf("progress report lines %q: 'old' was cleared before the loop printed", p.Latest)
		}
		if n := len(p.Latest); n > 0 && p.Latest[0] != "old" {
			sawDigits = true
			if !strings.HasPrefix("0 1 2", strings.Join(p.Latest, " ")) {
				t.Errorf("progress report lines %q", p.Latest)
			}
		}
	}
	if !sawDigits {
		t.Errorf("no progress report showed the loop's lines: %+v", reports)
	}
	mu.Unlock()

	// Past its timeout the code keeps running on the kernel; its later
	// output and its end arrive as events.
	res, _, err = runOnActive(e, ctx, "s1", "import time\nprint('a', flush=True)\ntime.sleep(1)\nprint('b')", ExecOptions{Timeout: 300 * time.Millisecond})
	if err != nil || !res.StillRunning || outputsText(res.Outputs) != "a\n" {
		t.Fatalf("timed-out run: err=%v res=%+v", err, res)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs := log.execEvents(res.ExecID)
		if last := evs[len(evs)-1]; last.Type == event.EvExecFinished {
			if last.Exec.Status != "ok" || len(evs) != 4 || evs[2].Exec.Output.Text != "b\n" {
				t.Errorf("events after the timeout: %+v", evs)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no finish event: %+v", evs)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A second sandbox on "another" server given by server_url and token,
	// with no connected server at all.
	e2, _ := newSandboxEngine(t, "", func() *jupyter.Client { return nil })
	other, err := e2.LaunchSandbox(ctx, "s1", SandboxSpec{Name: "remote", Variant: "jupyter-server", ServerURL: srv.URL, Token: srv.Token})
	if err != nil {
		t.Fatalf("launch with server_url: %v", err)
	}
	if _, err := e2.LaunchSandbox(ctx, "s1", SandboxSpec{Name: "bad", Variant: "jupyter-server", ServerURL: srv.URL, Token: "wrong"}); !IsUserError(err) || !strings.Contains(err.Error(), "refused the token") {
		t.Errorf("wrong token: %v", err)
	}
	if err := e2.TerminateSandbox(ctx, "remote"); err != nil {
		t.Fatal(err)
	}

	if err := e.TerminateSandbox(ctx, "k"); err != nil {
		t.Fatalf("TerminateSandbox: %v", err)
	}
	for _, id := range []string{info.KernelID, other.KernelID} {
		if _, err := client.GetKernel(ctx, id); !jupyter.IsNotFound(err) {
			t.Errorf("kernel %s after terminate: %v, want gone", id, err)
		}
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestUseNotebookOnASandbox(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	ctx := context.Background()
	e, err := New(ctx, Config{JupyterURL: srv.URL, JupyterToken: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dir := srv.Subdir(t)

	js, err := e.LaunchSandbox(ctx, "s", SandboxSpec{Name: "js", Variant: "jupyter-server", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := e.LaunchSandbox(ctx, "s", SandboxSpec{Name: "ev", Variant: "eval", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// By the sandbox's id: the notebook runs on the sandbox's kernel.
	info, err := e.UseNotebook(ctx, UseRequest{Session: "s", Name: "nb", Path: dir + "/on-sandbox.ipynb", Mode: "create", KernelID: js.ID})
	if err != nil {
		t.Fatal(err)
	}
	if info.KernelID != js.KernelID {
		t.Fatalf("notebook kernel %s, sandbox kernel %s", info.KernelID, js.KernelID)
	}
	// An eval sandbox is no Jupyter kernel: refused, saying why.
	_, err = e.UseNotebook(ctx, UseRequest{Session: "s", Name: "nb2", Path: dir + "/on-eval.ipynb", Mode: "create", KernelID: ev.Name})
	if !IsUserError(err) || !strings.Contains(err.Error(), "cannot host a notebook") {
		t.Fatalf("eval sandbox as kernel: %v", err)
	}
}

// runOnActive runs code on session's active sandbox as ExecuteCode does;
// ok is false when the session has none.
func runOnActive(e *Engine, ctx context.Context, session, code string, opts ExecOptions) (ExecResult, bool, error) {
	en := e.sandboxes.activeFor(session)
	if en == nil {
		return ExecResult{}, false, nil
	}
	res, err := e.executeOnSandbox(ctx, en, code, opts)
	return res, true, err
}
