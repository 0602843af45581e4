//go:build !linux

package jupyter

import (
	"net"
	"syscall"
)

// tuneSocket is a no-op where TCP_QUICKACK does not exist; Go already sets
// TCP_NODELAY on every TCP connection.
func tuneSocket(network, address string, c syscall.RawConn) error { return nil }

func wrapQuickAck(c net.Conn) net.Conn { return c }
