package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"
)

// processAlive says whether pid runs: a process we can open whose exit
// code is still STILL_ACTIVE.
func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	const stillActive = 259
	return code == stillActive
}

// isAddrInUse says whether a listen failed because the port is taken
// (Winsock's own code, which syscall.EADDRINUSE does not match).
func isAddrInUse(err error) bool {
	return errors.Is(err, windows.WSAEADDRINUSE) || errors.Is(err, syscall.EADDRINUSE)
}

// tempFeedDir is the feed directory when there is no XDG_RUNTIME_DIR: the
// user's own temporary directory (%TEMP%, under the profile). Unix modes
// mean little on Windows; the records stay private because the files
// inherit that directory's ACL, which grants only the user (and the
// system and administrators).
func tempFeedDir() string {
	return filepath.Join(os.TempDir(), "jupyter-mcp-server")
}
