package jupyter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// waitBusy returns once the run's code is running on the kernel.
func waitBusy(t *testing.T, run *jupyter.Run) {
	t.Helper()
	select {
	case m := <-run.Messages():
		if m.Header.MsgType != "execute_input" {
			t.Fatalf("first message %s, want execute_input", m.Header.MsgType)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the code never started")
	}
}

// wantLost checks that err is a LostError of one of the losses.
func wantLost(t *testing.T, what string, err error, losses ...jupyter.Loss) *jupyter.LostError {
	t.Helper()
	var le *jupyter.LostError
	if !errors.As(err, &le) {
		t.Fatalf("%s: %v, want a LostError", what, err)
	}
	for _, l := range losses {
		if le.Loss == l {
			return le
		}
	}
	t.Fatalf("%s: loss %v (%v), want one of %v", what, le.Loss, le, losses)
	return nil
}

// A kernel shut down from outside while it runs code ends the run with the
// loss (not a KeyboardInterrupt), and the next request is refused at once
// instead of waiting for a reply that cannot come.
func TestShutdownFromOutsideEndsRun(t *testing.T) {
	t.Parallel()
	c, k, kc := newKernel(t, jupyter.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "import time; time.sleep(60)"})
	if err != nil {
		t.Fatal(err)
	}
	waitBusy(t, run)
	if err := c.ShutdownKernel(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	_, err = run.Wait(ctx)
	wantLost(t, "the run", err, jupyter.LossShutdown, jupyter.LossGone)
	_, err = kc.Execute(ctx, jupyter.ExecuteRequest{Code: "1"})
	wantLost(t, "the next request", err, jupyter.LossShutdown, jupyter.LossGone)
	if kc.State() != "dead" {
		t.Errorf("state %q, want dead", kc.State())
	}
}

// A restart from outside (someone else's restart request) between two
// requests is a loss until the user accepts it; then the channel runs code
// on the new, blank process.
func TestRestartFromOutsideIsALoss(t *testing.T) {
	t.Parallel()
	c, k, kc := newKernel(t, jupyter.Options{})
	if res := execute(t, kc, "x = 1", 60*time.Second); res.err != nil {
		t.Fatal(res.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, err := c.RestartKernel(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-kc.LostSignal():
	case <-ctx.Done():
		t.Fatal("the restart was never noticed")
	}
	le := wantLost(t, "Lost", kc.Lost(), jupyter.LossRestarted)
	if le.Crashed || errors.Is(le, jupyter.ErrKernelDied) {
		t.Errorf("a restart request is not a crash: %+v", le)
	}
	_, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "1"})
	wantLost(t, "a request after the restart", err, jupyter.LossRestarted)
	kc.Acknowledge()
	if kc.Lost() != nil {
		t.Fatalf("still lost after Acknowledge: %v", kc.Lost())
	}
	for {
		pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
		run, err := kc.Execute(pctx, jupyter.ExecuteRequest{Code: "", Silent: true})
		if err == nil {
			_, err = run.Wait(pctx)
		}
		pcancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the restarted kernel never answered: %v", err)
		}
	}
	if res := execute(t, kc, "print(x)", 60*time.Second); res.err != nil || res.reply.EName != "NameError" {
		t.Fatalf("after the restart: %+v %v, want NameError", res.reply, res.err)
	}
}

// ipykernel goes busy and idle without an execute_reply for code with a
// NUL byte; the run ends with ErrNoReply instead of waiting forever.
func TestIdleWithoutReplyEndsRun(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "x = \x00"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(ctx); !errors.Is(err, jupyter.ErrNoReply) {
		t.Fatalf("Wait: %v, want ErrNoReply", err)
	}
	if res := execute(t, kc, "print(2)", 60*time.Second); res.stdout() != "2\n" {
		t.Fatalf("the next run: %q %v", res.stdout(), res.err)
	}
}
