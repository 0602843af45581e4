package jupyter

// DropConnForTest closes the kernel channel's socket under the reader, as
// a network failure would, so tests can exercise reconnecting.
func (k *KernelConn) DropConnForTest() {
	k.mu.Lock()
	conn := k.conn
	k.mu.Unlock()
	if conn != nil {
		conn.UnderlyingConn().Close()
	}
}

// SetNaiveForTest makes new kernel channels skip TCP_QUICKACK (sockets)
// and new managed servers skip (server) the TCP_NODELAY patch, as a stock server with a
// naive client would; it returns a func that restores the tuned defaults.
// Only benchmarks use it, and never in parallel with other tests.
func SetNaiveForTest(sockets, server bool) (restore func()) {
	oldSock, oldServer := naiveSockets, plainServer
	naiveSockets, plainServer = sockets, server
	return func() { naiveSockets, plainServer = oldSock, oldServer }
}
