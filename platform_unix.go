//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// processAlive says whether pid runs (signal 0 checks without sending).
func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// isAddrInUse says whether a listen failed because the port is taken.
func isAddrInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }

// tempFeedDir is the feed directory when there is no XDG_RUNTIME_DIR: the
// shared temporary directory, so one per user. The directory is created
// 0700 and the records 0600.
func tempFeedDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("jupyter-mcp-server-%d", os.Getuid()))
}
