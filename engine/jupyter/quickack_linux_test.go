package jupyter

import (
	"net"
	"syscall"
	"testing"
)

// TestQuickAckRearmedAfterRead checks the client half of what keeps a
// stock jupyter-server's kernel round trips off the ~40 ms delayed-ACK
// stall: the dialer sets TCP_NODELAY and TCP_QUICKACK, and every read
// re-arms TCP_QUICKACK (Linux clears it). The speed itself is measured by
// BenchmarkNagle and bench figure 1, not here; the managed server's half
// (its TCP_NODELAY patch) is checked by TestManagedStopLeavesNothing.
func TestQuickAckRearmedAfterRead(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// Answer each request: a request/reply exchange is what makes
		// Linux switch the client to delayed ACKs (pingpong mode).
		buf := make([]byte, 1)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if _, err := c.Write([]byte("r")); err != nil {
				return
			}
		}
	}()
	d := net.Dialer{Control: tuneSocket}
	raw, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	c := wrapQuickAck(raw)
	qc, ok := c.(*quickAckConn)
	if !ok {
		t.Fatalf("wrapQuickAck(%T) = %T, want *quickAckConn", raw, c)
	}
	opt := func(name string, level, o int) int {
		var v int
		var gerr error
		if err := qc.raw.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), level, o) }); err != nil || gerr != nil {
			t.Fatalf("getsockopt %s: %v %v", name, err, gerr)
		}
		return v
	}
	if opt("TCP_NODELAY", syscall.IPPROTO_TCP, syscall.TCP_NODELAY) == 0 {
		t.Error("TCP_NODELAY is off on the dialed connection")
	}
	buf := make([]byte, 1)
	for i := range 20 {
		if _, err := c.Write([]byte("q")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		if opt("TCP_QUICKACK", syscall.IPPROTO_TCP, syscall.TCP_QUICKACK) == 0 {
			t.Fatalf("TCP_QUICKACK is off after exchange %d: the next reply waits for a delayed ACK", i+1)
		}
	}
}
