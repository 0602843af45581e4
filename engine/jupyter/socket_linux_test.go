package jupyter_test

import (
	"context"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// TestSocketTuningSurvivesReconnect checks that a kernel channel's socket
// keeps what holds round trips to a stock jupyter-server (Nagle on) off the
// delayed-ACK stall, TCP_QUICKACK re-armed after each read and
// TCP_NODELAY, after the socket dropped and the channel redialled: the
// reconnect path dials on its own. The speed is bench figure 10's business.
func TestSocketTuningSurvivesReconnect(t *testing.T) {
	t.Parallel()
	_, _, kc := newKernel(t, jupyter.Options{})
	check := func(when string) {
		t.Helper()
		quickAck, noDelay, err := kc.SocketTuningForTest()
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if !quickAck || !noDelay {
			t.Fatalf("%s: TCP_QUICKACK re-armed %v, TCP_NODELAY %v; want both", when, quickAck, noDelay)
		}
	}
	check("after connecting")

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
	check("after reconnecting")
	res := execute(t, kc, "1+1", 30*time.Second)
	if res.err != nil || res.reply.Status != "ok" {
		t.Fatalf("after reconnecting: %+v %v", res.reply, res.err)
	}
}
