package jupyter

import (
	"errors"
	"net"
	"syscall"
)

// LoopbackMSSForTest is the segment size loopback kernel channels announce.
const LoopbackMSSForTest = loopbackMSS

// SocketMSSForTest is TCP_MAXSEG of the channel's socket now: the largest
// segment it sends, which a small announced MSS caps too.
func (k *KernelConn) SocketMSSForTest() (int, error) {
	k.mu.Lock()
	conn := k.conn
	k.mu.Unlock()
	if conn == nil {
		return 0, ErrDisconnected
	}
	var c net.Conn = conn.UnderlyingConn()
	if q, ok := c.(*quickAckConn); ok {
		c = q.Conn
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return 0, errors.New("not a TCP connection")
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var mss int
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		mss, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG)
	}); err != nil {
		return 0, err
	}
	return mss, gerr
}
