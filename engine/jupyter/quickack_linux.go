package jupyter

import (
	"net"
	"syscall"
)

// quickAckConn re-arms TCP_QUICKACK after every read. Linux clears the flag
// whenever the stack falls back to delayed ACKs, so a single setsockopt at
// dial time is not enough. Without it, a stock jupyter-server (Nagle on)
// waits for our delayed ACK (~40 ms) before sending the second small frame
// of a reply, which turns a 2 ms `1+1` into a 45 ms one.
type quickAckConn struct {
	net.Conn
	raw syscall.RawConn
}

func (c *quickAckConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		_ = c.raw.Control(setQuickAck)
	}
	return n, err
}

func setQuickAck(fd uintptr) {
	_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
}

// tuneSocket sets TCP_NODELAY and TCP_QUICKACK at dial time (net.Dialer
// Control hook).
func tuneSocket(network, address string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
		setQuickAck(fd)
	})
}

// wrapQuickAck wraps a TCP connection so that every read re-arms
// TCP_QUICKACK; other connections are returned as they are.
func wrapQuickAck(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &quickAckConn{Conn: tc, raw: raw}
}
