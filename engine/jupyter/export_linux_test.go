package jupyter

import (
	"errors"
	"syscall"
)

// SocketTuningForTest says whether the channel's socket now re-arms
// TCP_QUICKACK after every read and has TCP_NODELAY set.
func (k *KernelConn) SocketTuningForTest() (quickAck, noDelay bool, err error) {
	k.mu.Lock()
	conn := k.conn
	k.mu.Unlock()
	if conn == nil {
		return false, false, ErrDisconnected
	}
	q, ok := conn.UnderlyingConn().(*quickAckConn)
	if !ok {
		return false, false, nil
	}
	var v int
	var gerr error
	if err := q.raw.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY)
	}); err != nil {
		return true, false, err
	}
	if gerr != nil {
		return true, false, errors.Join(errors.New("getsockopt TCP_NODELAY"), gerr)
	}
	return true, v != 0, nil
}
