package jupyter_test

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// zmqDriver is testdata/zmq_roundtrip.py: jupyter_client talking to the
// kernel directly over ZeroMQ, one round trip per line we send.
type zmqDriver struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	// stderr is written by exec's copying goroutine until the process
	// exits; read it only after Wait or when the driver is known dead.
	stderr *strings.Builder
}

func startZMQDriver(tb testing.TB, python, connFile, mode string) *zmqDriver {
	tb.Helper()
	cmd := exec.Command(python, "testdata/zmq_roundtrip.py", connFile, mode)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	d := &zmqDriver{cmd: cmd, in: in, out: bufio.NewScanner(out), stderr: &stderr}
	tb.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	if !d.out.Scan() || d.out.Text() != "ready" {
		in.Close()
		_ = cmd.Wait()
		tb.Fatalf("zmq driver did not start: %q %s", d.out.Text(), stderr.String())
	}
	return d
}

func (d *zmqDriver) round(tb testing.TB) time.Duration {
	if _, err := io.WriteString(d.in, "go\n"); err != nil {
		tb.Fatal(err)
	}
	if !d.out.Scan() {
		_ = d.cmd.Wait()
		tb.Fatalf("zmq driver died: %v\n%s", d.out.Err(), d.stderr.String())
	}
	us, err := strconv.Atoi(d.out.Text())
	if err != nil {
		tb.Fatalf("zmq driver said %q", d.out.Text())
	}
	return time.Duration(us) * time.Microsecond
}

func goRound(tb testing.TB, kc *jupyter.KernelConn) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	run, err := kc.Execute(ctx, jupyter.ExecuteRequest{Code: "1+1"})
	if err != nil {
		tb.Fatal(err)
	}
	rep, err := run.Wait(ctx)
	if err != nil || rep.Status != "ok" {
		tb.Fatalf("%+v %v", rep, err)
	}
	return time.Since(start)
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkKernelRoundTrip times `1+1` over our websocket channel (through
// the managed server) against jupyter_client on the same kernel straight
// over ZeroMQ, alternating one round each so both see the same machine
// load. Run: go test -run XXX -bench KernelRoundTrip -benchtime 200x ./engine/jupyter/
func BenchmarkKernelRoundTrip(b *testing.B) {
	srv := jupytertest.Shared(b)
	c := srv.Client()
	k := srv.StartKernel(b)
	kc := jupytertest.Connect(b, c, k.ID)
	connFile := filepath.Join(srv.Managed.RuntimeDir, "kernel-"+k.ID+".json")
	client := startZMQDriver(b, srv.Managed.Python, connFile, "client")
	raw := startZMQDriver(b, srv.Managed.Python, connFile, "raw")
	for i := 0; i < 5; i++ { // warm every path up
		goRound(b, kc)
		client.round(b)
		raw.round(b)
	}
	var ours, viaClient, viaRaw []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ours = append(ours, goRound(b, kc))
		viaClient = append(viaClient, client.round(b))
		viaRaw = append(viaRaw, raw.round(b))
	}
	b.StopTimer()
	report(b, "websocket", ours, "jupyter_client", viaClient)
	report(b, "websocket", ours, "rawzmq", viaRaw)
}

func report(b *testing.B, nameA string, a []time.Duration, nameB string, bb []time.Duration) {
	a50, a95 := percentile(a, 0.5), percentile(a, 0.95)
	b50, b95 := percentile(bb, 0.5), percentile(bb, 0.95)
	b.ReportMetric(ms(a50), nameA+"-p50-ms")
	b.ReportMetric(ms(a95), nameA+"-p95-ms")
	b.ReportMetric(ms(b50), nameB+"-p50-ms")
	b.ReportMetric(ms(b95), nameB+"-p95-ms")
	b.ReportMetric(float64(a50)/float64(b50), nameA+"/"+nameB+"-p50-ratio")
	b.ReportMetric(0, "ns/op") // the per-op time mixes both paths: meaningless
	b.Logf("%d rounds: %s p50 %.2f ms p95 %.2f ms | %s p50 %.2f ms p95 %.2f ms | p50 ratio %.2f",
		len(a), nameA, ms(a50), ms(a95), nameB, ms(b50), ms(b95), float64(a50)/float64(b50))
}

// BenchmarkNagle shows what TCP_QUICKACK and TCP_NODELAY buy, alternating
// three paths: the tuned one (QUICKACK client, patched server), a stock
// server (no nodelay patch) with our QUICKACK client, as with --jupyter-url,
// and the stock server with a naive client (neither).
func BenchmarkNagle(b *testing.B) {
	srv := jupytertest.Shared(b)
	tuned := jupytertest.Connect(b, srv.Client(), srv.StartKernel(b).ID)

	restore := jupyter.SetNaiveForTest(false, true)
	stock := jupytertest.Start(b)
	restore()
	if strings.Contains(stock.Managed.LastOutput(), "TCP_NODELAY") {
		b.Fatal("the stock server was patched")
	}
	k := stock.StartKernel(b)
	quickack := jupytertest.Connect(b, stock.Client(), k.ID)
	restore = jupyter.SetNaiveForTest(true, true)
	naive := jupytertest.Connect(b, stock.Client(), k.ID)
	restore()

	for i := 0; i < 3; i++ {
		goRound(b, tuned)
		goRound(b, quickack)
		goRound(b, naive)
	}
	var t, q, n []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t = append(t, goRound(b, tuned))
		q = append(q, goRound(b, quickack))
		n = append(n, goRound(b, naive))
	}
	b.StopTimer()
	report(b, "tuned", t, "naive", n)
	report(b, "stockserver-quickack", q, "naive", n)
}
