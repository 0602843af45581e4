package jupyter

import (
	"net"
	"net/netip"
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

// loopbackMSS is the segment size a kernel channel to a server on this
// machine announces. Re-arming TCP_QUICKACK still sends the ACK only when
// our reader gets to read: Linux ACKs a small segment at once, from the
// interrupt that delivers it, only while more than one receive MSS is
// unacknowledged. A stock jupyter-server writes every kernel message as its
// own small frame with Nagle on, so the next frame waits for that ACK: on a
// loaded machine, for as long as the scheduler keeps our reader from
// running. With the MSS below the smallest kernel message (a status message
// is about 500 bytes in either protocol), every frame is more than one MSS
// and is ACKed on arrival, so the server never waits for us. Loopback only:
// there the kernel passes large segments through whole (GSO), so a small
// MSS costs no extra packets; on a real network it would.
const loopbackMSS = 400

// socketControl is the dialer's Control hook for kernel channels: it sets
// TCP_NODELAY and TCP_QUICKACK, and, to a loopback address unless
// fullSegments, the small MSS above. The MSS must be set before connect:
// it is announced in the SYN.
func socketControl(fullSegments bool) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		small := !fullSegments && isLoopback(address)
		return c.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
			setQuickAck(fd)
			if small {
				_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, loopbackMSS)
			}
		})
	}
}

// isLoopback reports whether address ("host:port", as the dialer passes
// it: the host already resolved) is a loopback address.
func isLoopback(address string) bool {
	ap, err := netip.ParseAddrPort(address)
	return err == nil && ap.Addr().Unmap().IsLoopback()
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
