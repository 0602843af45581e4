//go:build unix

package jupyter

import (
	"errors"
	"syscall"
)

// The socket errors we tell apart, as this platform reports them.

func isConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
func isConnReset(err error) bool   { return errors.Is(err, syscall.ECONNRESET) }
func isAddrInUse(err error) bool   { return errors.Is(err, syscall.EADDRINUSE) }
