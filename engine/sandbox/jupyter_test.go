package sandbox

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

func TestJupyterSandbox(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Start(t)
	c := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var smu sync.Mutex
	var states []string
	s, err := LaunchJupyter(ctx, JupyterOptions{Client: c, OnState: func(st string) {
		smu.Lock()
		states = append(states, st)
		smu.Unlock()
	}})
	if err != nil {
		t.Fatalf("LaunchJupyter: %v", err)
	}
	info := s.Info()
	if info.Variant != JupyterServer || info.KernelID == "" || info.URL != srv.URL {
		t.Fatalf("Info = %+v", info)
	}
	if _, err := c.GetKernel(ctx, info.KernelID); err != nil {
		t.Fatalf("the sandbox kernel is not on the server: %v", err)
	}

	t.Run("state, result, traceback", func(t *testing.T) {
		res := execEval(t, s, "x = 41", 30*time.Second, nil)
		if res.Status != "ok" || len(res.Outputs) != 0 {
			t.Fatalf("assignment: %+v", res)
		}
		res = execEval(t, s, "print('x is', x)\nx + 1", 30*time.Second, nil)
		if got := outputText(res.Outputs); got != "x is 41\n42\n" || res.ExecutionCount == nil {
			t.Errorf("outputs %q count %v", got, res.ExecutionCount)
		}
		res = execEval(t, s, "1/0", 30*time.Second, nil)
		if res.Status != "error" || len(res.Outputs) != 1 || res.Outputs[0].EName != "ZeroDivisionError" {
			t.Errorf("traceback: %+v", res)
		}
	})

	t.Run("streams in order", func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		var at []time.Time
		execEval(t, s, "import time\nprint('first', flush=True)\ntime.sleep(0.6)\nprint('second')", 30*time.Second, func(o notebook.Output) {
			mu.Lock()
			got = append(got, o.Text)
			at = append(at, time.Now())
			mu.Unlock()
		})
		mu.Lock()
		defer mu.Unlock()
		// The kernel may send one print as several stream messages
		// ("first", "\n"); what counts is the text, in order, and that the
		// first line arrived well before the second.
		if strings.Join(got, "") != "first\nsecond\n" || !strings.HasPrefix(got[0], "first") {
			t.Fatalf("arrivals %q", got)
		}
		last := len(got) - 1
		if !strings.Contains(got[last], "second") || at[last].Sub(at[0]) < 400*time.Millisecond {
			t.Errorf("the first print was not streamed: arrivals %q", got)
		}
	})

	t.Run("timeout leaves it running", func(t *testing.T) {
		finished := make(chan string, 1)
		var mu sync.Mutex
		var late []string
		res, err := s.Execute(ctx, Request{
			Code:    "import time\nprint('before', flush=True)\ntime.sleep(1.5)\nprint('after')",
			Timeout: 500 * time.Millisecond,
			OnOutput: func(o notebook.Output) {
				mu.Lock()
				late = append(late, o.Text)
				mu.Unlock()
			},
			OnFinish: func(status string) { finished <- status },
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.StillRunning || outputText(res.Outputs) != "before\n" {
			t.Fatalf("timed-out result %+v", res)
		}
		select {
		case st := <-finished:
			if st != "ok" {
				t.Errorf("final status %q", st)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("OnFinish never called")
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(late, "") != "before\nafter\n" {
			t.Errorf("outputs through OnOutput %q, want the late one too", late)
		}
	})

	t.Run("interrupt", func(t *testing.T) {
		done := make(chan Result, 1)
		go func() {
			res, _ := s.Execute(ctx, Request{Code: "import time\ntime.sleep(30)", Timeout: time.Minute})
			done <- res
		}()
		deadline := time.Now().Add(10 * time.Second)
		for s.State() != StateBusy && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		t0 := time.Now()
		if err := s.Interrupt(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case res := <-done:
			if d := time.Since(t0); d > 10*time.Second {
				t.Errorf("interrupt took %s, want well under the sleep", d)
			}
			if res.Status != "error" || res.Outputs[len(res.Outputs)-1].EName != "KeyboardInterrupt" {
				t.Errorf("interrupted: %+v", res)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("not interrupted")
		}
		if got := outputText(execEval(t, s, "x", 30*time.Second, nil).Outputs); got != "41\n" {
			t.Errorf("state after interrupt %q", got)
		}
	})

	if err := s.Terminate(ctx); err != nil {
		t.Fatalf("Terminate: %v", err)
	}
	if err := s.Terminate(ctx); err != nil {
		t.Fatalf("second Terminate: %v", err)
	}
	if _, err := c.GetKernel(ctx, info.KernelID); !jupyter.IsNotFound(err) {
		t.Errorf("kernel %s after Terminate: %v, want not found", info.KernelID, err)
	}
	if _, err := s.Execute(ctx, Request{Code: "1", Timeout: time.Second}); err == nil {
		t.Error("Execute after Terminate succeeded")
	}
	smu.Lock()
	defer smu.Unlock()
	if len(states) == 0 || states[len(states)-1] != StateTerminated || !contains(states, StateBusy) {
		t.Errorf("state changes %q, want busy ... terminated", states)
	}
}

func TestJupyterSandboxAttachLeavesKernel(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Start(t)
	k := srv.StartKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := srv.Client()
	if _, err := LaunchJupyter(ctx, JupyterOptions{Client: c, KernelID: "no-such-kernel"}); !IsRefusal(err) {
		t.Errorf("unknown kernel_id: %v, want a refusal", err)
	}
	if _, err := LaunchJupyter(ctx, JupyterOptions{Client: c, KernelName: "cobol"}); !IsRefusal(err) || !strings.Contains(err.Error(), `"python3"`) {
		t.Errorf("unknown kernel spec: %v, want a refusal naming python3", err)
	}
	ks, err := LaunchJupyter(ctx, JupyterOptions{Client: c, KernelName: "python3"})
	if err != nil {
		t.Fatalf("kernel spec python3: %v", err)
	}
	if err := ks.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := LaunchJupyter(ctx, JupyterOptions{Client: c, KernelID: k.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := outputText(execEval(t, s, "6 * 7", 30*time.Second, nil).Outputs); got != "42\n" {
		t.Errorf("got %q", got)
	}
	if err := s.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetKernel(ctx, k.ID); err != nil {
		t.Errorf("an attached kernel was shut down: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
