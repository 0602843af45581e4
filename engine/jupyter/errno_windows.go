package jupyter

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// The socket errors we tell apart, as this platform reports them: Winsock
// returns its own WSAE codes, which the syscall package's Unix-style
// ECONNREFUSED and friends do not match.

func isConnRefused(err error) bool {
	return errors.Is(err, windows.WSAECONNREFUSED) || errors.Is(err, syscall.ECONNREFUSED)
}

func isConnReset(err error) bool {
	return errors.Is(err, windows.WSAECONNRESET) || errors.Is(err, windows.WSAECONNABORTED) || errors.Is(err, syscall.ECONNRESET)
}

func isAddrInUse(err error) bool {
	return errors.Is(err, windows.WSAEADDRINUSE) || errors.Is(err, syscall.EADDRINUSE)
}
