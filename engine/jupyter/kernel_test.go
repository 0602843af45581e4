package jupyter_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// result is what one execution produced, collected from Run.Messages.
type result struct {
	reply *jupyter.ExecuteReply
	err   error
	msgs  []jupyter.Message
}

func (r result) types() []string {
	var ts []string
	for _, m := range r.msgs {
		ts = append(ts, m.Header.MsgType)
	}
	return ts
}

func (r result) find(msgType string) (jupyter.Message, bool) {
	for _, m := range r.msgs {
		if m.Header.MsgType == msgType {
			return m, true
		}
	}
	return jupyter.Message{}, false
}

// stdout concatenates the stream texts of the run.
func (r result) stdout() string {
	var b strings.Builder
	for _, m := range r.msgs {
		if m.Header.MsgType == "stream" {
			var c struct{ Text string }
			_ = json.Unmarshal(m.Content, &c)
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

func execute(t *testing.T, kc *jupyter.KernelConn, code string, timeout time.Duration) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// StopOnError stays false: with it, ipykernel aborts requests that
	// reach it just after an error (status "aborted"), and subtests run
	// back to back after one that raises.
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: code})
	if err != nil {
		t.Fatalf("execute %q: %v", code, err)
	}
	return collect(ctx, t, run)
}

func collect(ctx context.Context, t *testing.T, run *jupyter.Run) result {
	t.Helper()
	var res result
	msgs := run.Messages()
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				res.reply, res.err = run.Wait(ctx)
				return res
			}
			res.msgs = append(res.msgs, m)
		case <-ctx.Done():
			t.Fatalf("run %s did not finish: %v (got %v)", run.MsgID(), ctx.Err(), res.types())
		}
	}
}

// newKernel starts a kernel on the shared server and connects to it.
func newKernel(t *testing.T, opts jupyter.Options) (*jupyter.Client, *jupyter.Kernel, *jupyter.KernelConn) {
	t.Helper()
	srv := jupytertest.Shared(t)
	c := srv.ClientWith(opts)
	k := srv.StartKernel(t)
	return c, k, jupytertest.Connect(t, c, k.ID)
}

func TestExecuteOutputs(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{})
	if kc.Protocol() != jupyter.ProtocolV1 {
		t.Fatalf("protocol %q, want %q (jupyter-server 1.23 offers it)", kc.Protocol(), jupyter.ProtocolV1)
	}

	t.Run("execute_result", func(t *testing.T) {
		res := execute(t, kc, "1+1", 30*time.Second)
		if res.err != nil || res.reply.Status != "ok" {
			t.Fatalf("reply %+v, err %v", res.reply, res.err)
		}
		m, ok := res.find("execute_result")
		if !ok {
			t.Fatalf("no execute_result in %v", res.types())
		}
		var c struct {
			Data map[string]string `json:"data"`
		}
		if err := json.Unmarshal(m.Content, &c); err != nil || c.Data["text/plain"] != "2" {
			t.Fatalf("execute_result content %s", m.Content)
		}
		if slices.Contains(res.types(), "status") {
			t.Errorf("status messages leaked into Messages: %v", res.types())
		}
	})

	t.Run("stream", func(t *testing.T) {
		res := execute(t, kc, "for i in range(3):\n    print('line', i)", 30*time.Second)
		if got, want := res.stdout(), "line 0\nline 1\nline 2\n"; got != want {
			t.Fatalf("stdout %q, want %q", got, want)
		}
	})

	t.Run("error", func(t *testing.T) {
		res := execute(t, kc, "1/0", 30*time.Second)
		if res.err != nil {
			t.Fatal(res.err)
		}
		if res.reply.Status != "error" || res.reply.EName != "ZeroDivisionError" {
			t.Fatalf("reply %+v, want a ZeroDivisionError", res.reply)
		}
		m, ok := res.find("error")
		if !ok {
			t.Fatalf("no error message in %v", res.types())
		}
		var c struct {
			Traceback []string `json:"traceback"`
		}
		_ = json.Unmarshal(m.Content, &c)
		if len(c.Traceback) == 0 || !strings.Contains(strings.Join(c.Traceback, "\n"), "ZeroDivisionError") {
			t.Fatalf("traceback %q", c.Traceback)
		}
	})

	t.Run("matplotlib png", func(t *testing.T) {
		code := "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()"
		res := execute(t, kc, code, 60*time.Second)
		if res.err != nil || res.reply.Status != "ok" {
			t.Fatalf("reply %+v, err %v, stdout %q", res.reply, res.err, res.stdout())
		}
		m, ok := res.find("display_data")
		if !ok {
			t.Fatalf("no display_data in %v", res.types())
		}
		var c struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(m.Content, &c); err != nil {
			t.Fatal(err)
		}
		var b64 string
		if err := json.Unmarshal(c.Data["image/png"], &b64); err != nil {
			t.Fatalf("image/png: %v (keys %v)", err, keys(c.Data))
		}
		png, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if err != nil || len(png) < 8 || string(png[1:4]) != "PNG" {
			t.Fatalf("image/png is not a PNG (%d bytes, err %v)", len(png), err)
		}
	})

	t.Run("server token not in kernel env", func(t *testing.T) {
		res := execute(t, kc, "import os\nprint(os.environ.get('JUPYTER_MCP_SERVER_TOKEN'), os.environ.get('JUPYTER_TOKEN'), os.environ.get('PYDEVD_DISABLE_FILE_VALIDATION'))", 30*time.Second)
		if got := res.stdout(); got != "None None 1\n" {
			t.Fatalf("kernel env shows %q, want the token absent and pydevd validation off", got)
		}
	})

	t.Run("input_request", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "name = input('who? ')\nprint('hi', name)", AllowStdin: true})
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		for m := range run.Messages() {
			switch m.Header.MsgType {
			case "input_request":
				if m.Channel != "stdin" {
					t.Errorf("input_request on %q", m.Channel)
				}
				if err := kc.SendInputReply(m.Header, "ada"); err != nil {
					t.Fatal(err)
				}
			case "stream":
				var c struct{ Text string }
				_ = json.Unmarshal(m.Content, &c)
				out.WriteString(c.Text)
			}
		}
		if _, err := run.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "hi ada") {
			t.Fatalf("stdout %q, want the reply echoed", out.String())
		}
	})
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Several runs in flight at once must each get exactly their own output.
func TestConcurrentRunsAreRoutedByParent(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 8
	runs := make([]*jupyter.Run, n)
	for i := range runs {
		var err error
		runs[i], err = kc.Execute(ctx, jupyter.ExecuteRequest{Code: fmt.Sprintf("import time; time.sleep(0.01); print('run-%d')", i)})
		if err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	outs := make([]string, n)
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range r.Messages() {
				if m.Header.MsgType == "stream" {
					var c struct{ Text string }
					_ = json.Unmarshal(m.Content, &c)
					outs[i] += c.Text
				}
			}
		}()
	}
	wg.Wait()
	for i, r := range runs {
		rep, err := r.Wait(ctx)
		if err != nil || rep.Status != "ok" {
			t.Fatalf("run %d: %+v %v", i, rep, err)
		}
		if want := fmt.Sprintf("run-%d\n", i); outs[i] != want {
			t.Errorf("run %d printed %q, want %q", i, outs[i], want)
		}
	}
}

// Wait alone (nobody reading Messages) must still finish: the reader never
// blocks on an undrained run.
func TestWaitWithoutReadingMessages(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "for i in range(2000): print(i)"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := run.Wait(ctx)
	if err != nil || rep.Status != "ok" {
		t.Fatalf("%+v %v", rep, err)
	}
	// The queued messages are all still there, in order.
	var n int
	var text strings.Builder
	for m := range run.Messages() {
		n++
		if m.Header.MsgType == "stream" {
			var c struct{ Text string }
			_ = json.Unmarshal(m.Content, &c)
			text.WriteString(c.Text)
		}
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	if len(lines) != 2000 || lines[0] != "0" || lines[1999] != "1999" {
		t.Fatalf("got %d lines (%d messages)", len(lines), n)
	}
}

func TestInterruptStopsSleep(t *testing.T) {
	t.Parallel()
	c, k, kc := newKernel(t, jupyter.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "import time\nprint('sleeping', flush=True)\ntime.sleep(30)"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := run.Messages()
	// Interrupt only once the code runs, or the interrupt could land
	// before the sleep and be lost.
	for m := range msgs {
		if m.Header.MsgType == "stream" {
			break
		}
	}
	start := time.Now()
	if err := c.InterruptKernel(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	for range msgs {
	}
	rep, err := run.Wait(ctx)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != "error" || rep.EName != "KeyboardInterrupt" {
		t.Fatalf("reply %+v, want KeyboardInterrupt", rep)
	}
	if elapsed > 10*time.Second {
		t.Fatalf("interrupt took %v, want well under the sleep", elapsed)
	}
}

func TestRestartResetsState(t *testing.T) {
	t.Parallel()
	c, k, kc := newKernel(t, jupyter.Options{})
	if res := execute(t, kc, "x = 41", 30*time.Second); res.err != nil || res.reply.Status != "ok" {
		t.Fatalf("%+v %v", res.reply, res.err)
	}
	if res := execute(t, kc, "print(x + 1)", 30*time.Second); res.stdout() != "42\n" {
		t.Fatalf("before restart: stdout %q", res.stdout())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The channel's user restarts the kernel: the signs of it are
	// expected, not a loss.
	kc.BeginRestart()
	if _, err := c.RestartKernel(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	// jupyter_server answers the restart before the new kernel process can
	// take requests, and one sent in that gap can be lost without a word
	// (the engine's RestartNotebook waits the same way): probe with silent
	// empty executions until one comes back.
	for ready := false; !ready; {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		run, err := kc.Execute(pctx, jupyter.ExecuteRequest{Code: "", Silent: true})
		if err == nil {
			_, err = run.Wait(pctx)
		}
		pcancel()
		ready = err == nil
		if ctx.Err() != nil {
			t.Fatalf("the kernel did not come back after the restart: %v", err)
		}
	}
	kc.EndRestart()
	if err := kc.Lost(); err != nil {
		t.Fatalf("after a restart of our own the channel says %v", err)
	}
	res := execute(t, kc, "print(x)", 60*time.Second)
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.reply.Status != "error" || res.reply.EName != "NameError" {
		t.Fatalf("after restart: reply %+v, want NameError", res.reply)
	}
}

func TestKernelDeathFailsRun(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{})
	var mu sync.Mutex
	var states []string
	kc.OnState(func(s string) {
		mu.Lock()
		states = append(states, s)
		mu.Unlock()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "import os; os._exit(1)"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.Wait(ctx)
	if !errors.Is(err, jupyter.ErrKernelDied) {
		t.Fatalf("Wait error %v, want ErrKernelDied", err)
	}
	mu.Lock()
	seen := slices.Contains(states, "restarting") || slices.Contains(states, "dead")
	mu.Unlock()
	if !seen {
		t.Errorf("OnState saw %v, want restarting or dead", states)
	}
	// The channel refuses new code until its user accepts that the state
	// is gone: sent now, it would run on a blank kernel.
	var le *jupyter.LostError
	if _, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "1+1"}); !errors.As(err, &le) || !errors.Is(err, jupyter.ErrKernelDied) {
		t.Fatalf("Execute after the death: %v, want a LostError matching ErrKernelDied", err)
	}
	kc.Acknowledge()
	// The server restarted the kernel; the same channel keeps working. A
	// request sent while the server swaps its connections to the new
	// process can be lost without a word, so each attempt gets a short
	// wait and the next one is sent.
	deadline := time.Now().Add(60 * time.Second)
	for attempt := 1; ; attempt++ {
		run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "1+1"})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-run.Done():
			if rep, err := run.Wait(ctx); err == nil && rep.Status == "ok" {
				return
			}
		case <-time.After(3 * time.Second):
		}
		if time.Now().After(deadline) {
			t.Fatalf("kernel did not come back after %d attempts: %v", attempt, run.Err())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestLegacyProtocol(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{ForceLegacy: true})
	if kc.Protocol() != "" {
		t.Fatalf("protocol %q, want legacy (\"\")", kc.Protocol())
	}
	res := execute(t, kc, "print('legacy'); 6*7", 30*time.Second)
	if res.err != nil || res.reply.Status != "ok" {
		t.Fatalf("%+v %v", res.reply, res.err)
	}
	if res.stdout() != "legacy\n" {
		t.Errorf("stdout %q", res.stdout())
	}
	m, ok := res.find("execute_result")
	if !ok || !strings.Contains(string(m.Content), `"42"`) {
		t.Fatalf("execute_result %s (types %v)", m.Content, res.types())
	}
	res = execute(t, kc, "1/0", 30*time.Second)
	if res.reply == nil || res.reply.EName != "ZeroDivisionError" {
		t.Fatalf("legacy error reply %+v %v", res.reply, res.err)
	}
}

func TestReconnectAfterDrop(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{})
	connected := make(chan struct{}, 1)
	kc.OnState(func(s string) {
		if s == "connected" {
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "import time; time.sleep(2)"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	kc.DropConnForTest()
	if _, err := run.Wait(ctx); !errors.Is(err, jupyter.ErrDisconnected) {
		t.Fatalf("pending run: %v, want ErrDisconnected", err)
	}
	select {
	case <-connected:
	case <-ctx.Done():
		t.Fatal("never reconnected")
	}
	res := execute(t, kc, "1+1", 30*time.Second)
	if res.err != nil || res.reply.Status != "ok" {
		t.Fatalf("after reconnect: %+v %v", res.reply, res.err)
	}
}

func TestStateTracking(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{})
	// The connect-time kernel_info nudge makes a fresh kernel report idle
	// without running anything.
	deadline := time.Now().Add(20 * time.Second)
	for kc.State() != "idle" {
		if time.Now().After(deadline) {
			t.Fatalf("State %q after connecting, want idle", kc.State())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var mu sync.Mutex
	var states []string
	kc.OnState(func(s string) {
		mu.Lock()
		states = append(states, s)
		mu.Unlock()
	})
	execute(t, kc, "1+1", 30*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(states, "busy") || states[len(states)-1] != "idle" {
		t.Fatalf("states %v, want busy then idle", states)
	}
	if kc.State() != "idle" {
		t.Fatalf("State %q", kc.State())
	}
}

// handlerLog records what a RunHandler saw, failing on a message after
// the end or a second end.
type handlerLog struct {
	t     *testing.T
	mu    sync.Mutex
	msgs  []jupyter.Message
	ends  int
	reply *jupyter.ExecuteReply
	err   error
	ended chan struct{}
}

func newHandlerLog(t *testing.T) *handlerLog {
	return &handlerLog{t: t, ended: make(chan struct{})}
}

func (l *handlerLog) handler() jupyter.RunHandler {
	return jupyter.RunHandler{
		Message: func(m jupyter.Message) {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.ends > 0 {
				l.t.Errorf("message %s after the end", m.Header.MsgType)
			}
			l.msgs = append(l.msgs, m)
		},
		End: func(rep *jupyter.ExecuteReply, err error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.ends++
			if l.ends > 1 {
				l.t.Errorf("End called %d times", l.ends)
				return
			}
			l.reply, l.err = rep, err
			close(l.ended)
		},
	}
}

func TestExecuteFuncDeliversToTheHandler(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := newHandlerLog(t)
	run, err := kc.ExecuteFunc(ctx, jupyter.ExecuteRequest{Code: "for i in range(200): print(i)\n1+1"}, l.handler())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.Done():
	case <-ctx.Done():
		t.Fatal("the run did not finish")
	}
	// End has returned before Done closes.
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ends != 1 || l.err != nil || l.reply == nil || l.reply.Status != "ok" {
		t.Fatalf("end: %d calls, reply %+v, err %v", l.ends, l.reply, l.err)
	}
	var text strings.Builder
	var types []string
	for _, m := range l.msgs {
		types = append(types, m.Header.MsgType)
		if m.ParentHeader.MsgID != run.MsgID() {
			t.Errorf("message %s of another run", m.Header.MsgType)
		}
		if m.Header.MsgType == "stream" {
			var c struct{ Text string }
			_ = json.Unmarshal(m.Content, &c)
			text.WriteString(c.Text)
		}
	}
	if types[0] != "execute_input" || types[len(types)-1] != "execute_result" || slices.Contains(types, "status") {
		t.Errorf("messages %v", types)
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	if len(lines) != 200 || lines[0] != "0" || lines[199] != "199" {
		t.Errorf("stream text out of order or incomplete: %d lines", len(lines))
	}
	// The handler took the messages: Messages has none and is closed.
	for m := range run.Messages() {
		t.Errorf("Messages delivered %s", m.Header.MsgType)
	}
}

func TestExecuteFuncEndsOnClose(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	c := srv.Client()
	k := srv.StartKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kc, err := c.ConnectKernel(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	l := newHandlerLog(t)
	run, err := kc.ExecuteFunc(ctx, jupyter.ExecuteRequest{Code: "import time; print('start', flush=True); time.sleep(30)"}, l.handler())
	if err != nil {
		t.Fatal(err)
	}
	// Close once the run is under way.
	for {
		l.mu.Lock()
		started := slices.ContainsFunc(l.msgs, func(m jupyter.Message) bool { return m.Header.MsgType == "stream" })
		l.mu.Unlock()
		if started {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the run never printed")
		case <-time.After(20 * time.Millisecond):
		}
	}
	kc.Close()
	select {
	case <-l.ended:
	case <-ctx.Done():
		t.Fatal("End was not called when the channel closed")
	}
	<-run.Done()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !errors.Is(l.err, jupyter.ErrDisconnected) {
		t.Errorf("End got %v, want ErrDisconnected", l.err)
	}
	// Interrupt the sleeping kernel so it is not left busy for other tests.
	_ = c.InterruptKernel(context.Background(), k.ID)
}
