package e2e

// Only a person decides, over HTTP: code the agent runs in a kernel reads
// the bearer token where a kernel can (the server's environment and command
// line in /proc), opens an MCP session of its own that declares
// elicitation, and answers the approval question of its own held
// delete_cell with "allow".

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// startGatedHTTP runs a headless HTTP server holding destructive calls,
// its bearer token in MCP_TOKEN as a user sets it, with env added.
func startGatedHTTP(t *testing.T, token string, args []string, env ...string) *harness.Process {
	t.Helper()
	p, err := harness.Launch(harness.Binary(t), append(append(harness.HTTPArgs(), "--approve", "destructive"), args...),
		append([]string{"MCP_TOKEN=" + token}, env...), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := p.WaitEndpoint(ctx); err != nil {
		t.Fatal(err)
	}
	p.Token = token
	return p
}

// The operator trusts HTTP hosts' answers (MCP_TRUST_CLIENT_APPROVAL): the
// agent's host approves its calls. The kernel must then not find the token
// that would make it such a host.
func TestKernelCannotReadTheBearerToken(t *testing.T) {
	root := t.TempDir()
	report := filepath.Join(t.TempDir(), "attack.jsonl")
	const token = "gate-token-0123456789abcdef"
	p := startGatedHTTP(t, token, []string{"--root-dir", root}, "MCP_TRUST_CLIENT_APPROVAL=true")

	h := &hostUser{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := harness.NewClient("gate-agent", &sdk.ClientOptions{ElicitationHandler: h.answer}).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: p.Endpoint, HTTPClient: harness.AuthClient(token, nil), MaxRetries: -1}, harness.SessionOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call(t, cs, "use_notebook", map[string]any{"notebook_name": "gate", "notebook_path": "gate.ipynb", "mode": "create"})
	call(t, cs, "insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "keep = 1"})

	// The attack aims at "keep = 1", cell 1 after the markdown cell a
	// created notebook starts with.
	code := attackCode(mcpAttack, map[string]any{"SERVER_PID": p.Pid(), "REPORT": report, "ENDPOINT": p.Endpoint, "TOKEN": "",
		"CALLS": []any{[]any{"delete_cell", map[string]any{"notebook_name": "gate", "cell_indices": []int{1}}}}})
	call(t, cs, "execute_code", map[string]any{"code": code, "timeout": 120})
	steps := readReport(t, report, 30*time.Second)
	t.Logf("the attack reported:\n%s", stepsText(steps))
	for _, s := range steps {
		if s.str("step") == "token" && s["found"] == true {
			t.Errorf("the kernel found the bearer token in %s", s.str("where"))
		}
		if s.str("step") == "call" && s["isError"] != true {
			t.Errorf("the kernel's own %s ran: %s", s.str("tool"), s.str("text"))
		}
	}
	if cells := readCells(t, cs, "gate"); !strings.Contains(cells, "keep = 1") {
		t.Fatalf("the cell is gone: %s", cells)
	}
}

// The operator did not say HTTP hosts are the person's: a session's answer
// to its own approval question does not count, so kernel code that has the
// token anyway (from a client's config file, say) still cannot run a held
// call. The kernel runs on a Jupyter server of the test's own, where it
// needs no approval to be started.
func TestOwnSessionCannotApproveItsOwnCall(t *testing.T) {
	jup := jupytertest.Start(t)
	dir := jup.Subdir(t)
	c := jup.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	nb := `{"cells":[{"cell_type":"code","execution_count":null,"id":"aaaa1111","metadata":{},"outputs":[],"source":"keep = 1"}],"metadata":{},"nbformat":4,"nbformat_minor":5}`
	if _, err := c.SaveNotebook(ctx, dir+"/gate.ipynb", []byte(nb)); err != nil {
		t.Fatal(err)
	}
	const token = "gate-token-fedcba9876543210"
	p := startGatedHTTP(t, token, nil, "JUPYTER_URL="+jup.URL, "JUPYTER_TOKEN="+jup.Token)

	report := filepath.Join(t.TempDir(), "attack.jsonl")
	code := attackCode(mcpAttack, map[string]any{"SERVER_PID": p.Pid(), "REPORT": report, "ENDPOINT": p.Endpoint, "TOKEN": token,
		"CALLS": []any{
			[]any{"use_notebook", map[string]any{"notebook_name": "gate", "notebook_path": dir + "/gate.ipynb"}},
			[]any{"delete_cell", map[string]any{"notebook_name": "gate", "cell_indices": []int{0}}},
		}})
	k := jup.StartKernel(t)
	kc := jupytertest.Connect(t, c, k.ID)
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: code})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	steps := readReport(t, report, 30*time.Second)
	t.Logf("the attack reported:\n%s", stepsText(steps))
	for _, s := range steps {
		if s.str("step") == "call" && s["isError"] != true {
			t.Errorf("the kernel's own %s ran: %s", s.str("tool"), s.str("text"))
		}
	}
	data, err := os.ReadFile(jup.Path(dir + "/gate.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "keep = 1") {
		t.Fatalf("the cell is gone: %s", data)
	}
}

// A token given on the command line or in the environment is gone from
// both once the server runs (what /proc shows is what it was started
// with, so it starts over without them), and still works; so does one read
// from a descriptor the user names.
func TestTokensLeaveCommandLineAndEnvironment(t *testing.T) {
	bin := harness.Binary(t)
	proc := func(pid int, what string) string {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), what))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := []struct {
		name  string
		args  []string
		env   []string
		token string
		pipe  bool
	}{
		{"flag", []string{"--mcp-token", "flag-token-0123456789", "--jupyter-token=jupyter-secret-42"}, nil, "flag-token-0123456789", false},
		{"environment", nil, []string{"MCP_TOKEN=env-token-0123456789", "JUPYTER_TOKEN=jupyter-secret-42"}, "env-token-0123456789", false},
		{"descriptor", []string{"--mcp-token-file", "/dev/fd/3"}, nil, "pipe-token-0123456789", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, append(append(harness.HTTPArgs(), "--root-dir", t.TempDir()), c.args...)...)
			cmd.Env = harness.CleanEnv(c.env...)
			var stderr harness.LockedBuffer
			cmd.Stderr = &stderr
			if c.pipe {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				w.WriteString(c.token + "\n")
				w.Close()
				cmd.ExtraFiles = []*os.File{r}
				defer r.Close()
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			defer func() {
				cmd.Process.Signal(syscall.SIGTERM)
				<-exited
			}()
			var endpoint string
			for deadline := time.Now().Add(60 * time.Second); endpoint == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if _, after, ok := strings.Cut(stderr.String(), "MCP endpoint: "); ok {
					endpoint = strings.TrimSpace(strings.SplitN(after, "\n", 2)[0])
				}
				select {
				case <-exited:
					t.Fatalf("the server exited; stderr:\n%s", stderr.String())
				default:
				}
			}
			if endpoint == "" {
				t.Fatalf("no endpoint; stderr:\n%s", stderr.String())
			}
			for _, what := range []string{"environ", "cmdline"} {
				got := proc(cmd.Process.Pid, what)
				for _, secret := range []string{c.token, "jupyter-secret-42"} {
					if strings.Contains(got, secret) {
						t.Errorf("/proc/%d/%s holds %q", cmd.Process.Pid, what, secret)
					}
				}
			}
			cs := harness.ConnectHTTPT(t, endpoint, c.token)
			call(t, cs, "list_files", map[string]any{})
		})
	}
}
