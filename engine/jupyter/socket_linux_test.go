package jupyter_test

import (
	"context"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// TestLoopbackChannelSmallMSS checks that a kernel channel to a server on
// this machine announces the small MSS that gets each of the server's
// frames ACKed on arrival, that it still does after the socket dropped and
// the channel redialled, and that FullSegments leaves the MSS alone. The
// speed is bench figure 10's business, not this test's.
func TestLoopbackChannelSmallMSS(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{})
	mss := func(kc *jupyter.KernelConn) int {
		t.Helper()
		v, err := kc.SocketMSSForTest()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := mss(kc); got <= 0 || got > jupyter.LoopbackMSSForTest {
		t.Fatalf("TCP_MAXSEG %d on a loopback kernel channel, want at most %d", got, jupyter.LoopbackMSSForTest)
	}

	connected := make(chan struct{}, 1)
	kc.OnState(func(s string) {
		if s == "connected" {
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	})
	kc.DropConnForTest()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case <-connected:
	case <-ctx.Done():
		t.Fatal("never reconnected")
	}
	if got := mss(kc); got <= 0 || got > jupyter.LoopbackMSSForTest {
		t.Fatalf("TCP_MAXSEG %d after reconnecting, want at most %d", got, jupyter.LoopbackMSSForTest)
	}
	// Big outputs cross the small-MSS socket whole.
	res := execute(t, kc, "print('x' * 300000)", 60*time.Second)
	if res.err != nil || res.reply.Status != "ok" {
		t.Fatalf("after reconnecting: %+v %v", res.reply, res.err)
	}
	n := 0
	for _, m := range res.msgs {
		if m.Header.MsgType == "stream" {
			n += len(m.Content)
		}
	}
	if n < 300000 {
		t.Fatalf("stream output of %d bytes, want the 300000 printed", n)
	}

	_, _, full := newKernel(t, jupyter.Options{FullSegments: true})
	if got := mss(full); got <= jupyter.LoopbackMSSForTest {
		t.Fatalf("TCP_MAXSEG %d with FullSegments, want the full size", got)
	}
}
