// Command goclient is the interop suite's Go SDK client: it drives
// jupyter-mcp-server the way a host built on github.com/modelcontextprotocol/go-sdk
// does, at the SDK's default protocol (2026-07-28) or pinned to 2025-11-25,
// over stdio (it spawns the binary) or streamable HTTP (a running server),
// and checks what a person steering an agent needs: tools, approval allowed
// and denied by the person at the client, a subscription update, progress
// carrying output, and a cancel that interrupts the kernel.
//
//	go run ./interop/goclient --bin bin/jupyter-mcp-server [--pin 2025-11-25]
//	go run ./interop/goclient --http URL --token T [--pin 2025-11-25]
//
// The server must hold destructive calls for approval (--approve
// destructive; over HTTP also --trust-client-approval). It prints one line
// per check and a MATRIX line (interop/run.sh collects them), and exits 1
// if a check failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("bin", "bin/jupyter-mcp-server", "the binary to spawn over stdio")
	endpoint := flag.String("http", "", "streamable HTTP endpoint of a running server (instead of spawning one)")
	token := flag.String("token", "", "bearer token for --http")
	pin := flag.String("pin", "", "protocol version to pin (default: the SDK's, 2026-07-28)")
	flag.Parse()
	if err := run(*bin, *endpoint, *token, *pin); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

// person is the person at the client: what they answer the next approval.
type person struct {
	mu     sync.Mutex
	answer string // allow or deny
	asked  int
}

func (p *person) set(answer string) {
	p.mu.Lock()
	p.answer = answer
	p.mu.Unlock()
}

func (p *person) elicit(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked++
	return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": p.answer, "reason": "interop decline"}}, nil
}

func run(bin, endpoint, token, pin string) error {
	ctx := context.Background()
	who := &person{answer: "allow"}
	var mu sync.Mutex
	var progress []string
	updates := make(chan string, 64)
	client := sdk.NewClient(&sdk.Implementation{Name: "interop-goclient", Version: sdkVersion()}, &sdk.ClientOptions{
		ElicitationHandler: who.elicit,
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			select {
			case updates <- req.Params.URI:
			default:
			}
		},
	})
	transport := "http"
	var t sdk.Transport
	if endpoint == "" {
		transport = "stdio"
		root, err := os.MkdirTemp("", "jms-goclient-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(root)
		if bin, err = filepath.Abs(bin); err != nil {
			return err
		}
		cmd := exec.Command(bin, "--transport", "stdio", "--start-new-code-sandbox", "false", "--approve", "destructive", "--feed", "off")
		cmd.Dir, cmd.Stderr = root, os.Stderr
		cmd.Env = append(cleanEnv(), "PYDEVD_DISABLE_FILE_VALIDATION=1")
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}
	} else {
		t = &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer(token)}, MaxRetries: -1}
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cs, err := client.Connect(cctx, t, &sdk.ClientSessionOptions{ProtocolVersion: pin})
	if err != nil {
		return err
	}
	defer cs.Close()
	era := cs.InitializeResult().ProtocolVersion
	name := "go-sdk " + sdkVersion() + " default"
	if pin != "" {
		name = "go-sdk " + sdkVersion() + " pinned " + pin
	}
	m := &matrix{client: name, transport: transport, era: era}
	fmt.Printf("--- %s over %s speaks %s\n", name, transport, era)

	nb := fmt.Sprintf("goclient-%d", time.Now().UnixNano()%1e6)
	call := func(tool string, args map[string]any) (*sdk.CallToolResult, error) {
		c, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		return cs.CallTool(c, &sdk.CallToolParams{Name: tool, Arguments: args})
	}
	okRes := func(tool string, args map[string]any) (*sdk.CallToolResult, error) {
		res, err := call(tool, args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		if res.IsError {
			return nil, fmt.Errorf("%s: %s", tool, text(res))
		}
		return res, nil
	}
	okCall := func(tool string, args map[string]any) (string, error) {
		res, err := okRes(tool, args)
		return text(res), err
	}
	var ran string // the id of the cell the tools check ran

	m.check("tools", func() (string, error) {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return "", err
		}
		if _, err := okCall("use_notebook", map[string]any{"notebook_name": nb, "notebook_path": nb + ".ipynb", "mode": "create"}); err != nil {
			return "", err
		}
		res, err := okRes("insert_execute_code_cell", map[string]any{"cell_index": -1, "cell_source": "print(6 * 7)", "notebook_name": nb})
		if err != nil || !strings.Contains(text(res), "42") {
			return "", fmt.Errorf("insert_execute_code_cell: %q %v", text(res), err)
		}
		ran = cellID(res)
		return fmt.Sprintf("%d tools, a cell ran", len(tools.Tools)), nil
	})
	m.check("approve", func() (string, error) {
		res, err := okRes("insert_cell", map[string]any{"cell_index": -1, "cell_type": "code", "cell_source": "# to delete", "notebook_name": nb})
		if err != nil {
			return "", err
		}
		before := who.asked
		if _, err := okCall("delete_cell", map[string]any{"cell_ids_to_delete": []string{cellID(res)}, "notebook_name": nb}); err != nil {
			return "", err
		}
		if who.asked == before {
			return "", errors.New("the person was not asked")
		}
		return "asked, allowed, ran", nil
	})
	m.check("decline", func() (string, error) {
		who.set("deny")
		defer who.set("allow")
		res, err := call("delete_cell", map[string]any{"cell_ids_to_delete": []string{ran}, "notebook_name": nb})
		if err != nil {
			return "", err
		}
		if !res.IsError || !strings.Contains(text(res), "declined") {
			return "", fmt.Errorf("a denied call answered %q", text(res))
		}
		return "denied, not run", nil
	})
	m.check("subscription", func() (string, error) {
		id := ran
		uri := "notebook://" + nb + "/cells/" + id
		if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			return "", err
		}
		defer cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri})
		// A listen (2026-07-28) is acknowledged after Subscribe returns:
		// change the cell until the update comes.
		deadline := time.After(30 * time.Second)
		for i := 0; ; i++ {
			if _, err := okCall("overwrite_cell_source", map[string]any{"cell_id": id, "cell_source": fmt.Sprintf("print(%d)", i), "notebook_name": nb}); err != nil {
				return "", err
			}
			select {
			case got := <-updates:
				how := "resources/subscribe"
				if era >= "2026-07-28" {
					how = "subscriptions/listen"
				}
				return "resources/updated for " + got + " (" + how + ")", nil
			case <-time.After(time.Second):
			case <-deadline:
				return "", errors.New("no resources/updated")
			}
		}
	})
	m.check("progress", func() (string, error) {
		p := &sdk.CallToolParams{Name: "insert_execute_code_cell", Arguments: map[string]any{
			"cell_index": -1, "notebook_name": nb, "timeout": 60, "progress_interval": 1,
			"cell_source": "import time\nfor i in range(3):\n    print('line', i, flush=True)\n    time.sleep(1)",
		}}
		p.SetProgressToken("interop")
		res, err := cs.CallTool(ctx, p)
		if err != nil || res.IsError {
			return "", fmt.Errorf("%v %s", err, text(res))
		}
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			mu.Lock()
			got := strings.Join(progress, "\n")
			n := len(progress)
			mu.Unlock()
			if strings.Contains(got, "Latest output:\nline 0") {
				return fmt.Sprintf("%d notifications, output lines in them", n), nil
			}
		}
		return "", errors.New("no progress notification carried the output")
	})
	m.check("cancel", func() (string, error) {
		c, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(c, &sdk.CallToolParams{Name: "insert_execute_code_cell", Arguments: map[string]any{
				"cell_index": -1, "notebook_name": nb, "timeout": 120, "cell_source": "import time\ntime.sleep(120)"}})
			done <- err
		}()
		time.Sleep(3 * time.Second) // allowed, and in the sleep
		stop()
		cancelled := time.Now()
		<-done
		// Interrupted, the kernel takes the next code at once (a sleeping
		// one would hold it for two minutes), and the cell that was
		// cancelled keeps the KeyboardInterrupt.
		out, err := okCall("execute_code", map[string]any{"code": "print('after the cancel')", "timeout": 20})
		if err != nil || !strings.Contains(out, "after the cancel") {
			return "", fmt.Errorf("the kernel did not take the next code: %q %v", out, err)
		}
		took := time.Since(cancelled)
		// Its outputs are saved as they come, shortly after.
		listing, err := okRes("read_notebook", map[string]any{"notebook_name": nb, "limit": 0})
		if err != nil {
			return "", err
		}
		last := strings.Count(text(listing), "\n")
		seen := ""
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			for i := last; i >= 0; i-- {
				if out, err := okCall("read_cell", map[string]any{"cell_index": i, "notebook_name": nb}); err == nil && strings.Contains(out, "time.sleep(120)") {
					if strings.Contains(out, "KeyboardInterrupt") {
						return fmt.Sprintf("kernel interrupted: the next code ran %s after the cancel", took.Round(100*time.Millisecond)), nil
					}
					seen = out
					break
				}
			}
		}
		return "", fmt.Errorf("the cancelled cell has no KeyboardInterrupt: %q", seen)
	})
	_, _ = okCall("unuse_notebook", map[string]any{"notebook_name": nb})
	m.print()
	if m.failed {
		return errors.New("a check failed")
	}
	return nil
}

// matrix is one client's row.
type matrix struct {
	client, transport, era string
	cells                  []string
	failed                 bool
}

func (m *matrix) check(name string, f func() (string, error)) {
	t0 := time.Now()
	detail, err := f()
	if err != nil {
		m.failed = true
		m.cells = append(m.cells, "FAIL")
		fmt.Printf("FAIL  %s %s: %v\n", m.client, name, err)
		return
	}
	m.cells = append(m.cells, "ok")
	fmt.Printf("PASS  %s %s (%s): %s\n", m.client, name, time.Since(t0).Round(time.Millisecond), detail)
}

func (m *matrix) print() {
	fmt.Printf("MATRIX\t%s\t%s\t%s\t%s\n", m.client, m.transport, m.era, strings.Join(m.cells, "\t"))
}

func text(res *sdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// cellID is the id of the cell a result acted on.
func cellID(res *sdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	id, _ := res.Meta["io.jupyter-mcp/cell_id"].(string)
	return id
}

func sdkVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				return strings.TrimPrefix(d.Version, "v")
			}
		}
	}
	return "unknown"
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// cleanEnv is the environment without the server's option variables, so
// that the spawned binary runs as configured here.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "JUPYTER_URL", "JUPYTER_TOKEN", "APPROVE", "APPROVE_TIMEOUT", "MCP_FEED", "TRANSPORT":
			continue
		}
		out = append(out, kv)
	}
	return out
}
