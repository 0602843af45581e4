package main

import (
	"errors"
	"fmt"
	"io/fs"
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

// unixFeeds: on Windows the live feed stays on loopback TCP, with a token
// in the record (which other users cannot read, see tempFeedDir).
const unixFeeds = false

// oNoFollow: Windows opens have no such flag; privateDir refuses a feed
// directory that is a link (a junction or a symbolic link).
const oNoFollow = 0

// checkPrivateDir accepts dir only as a directory that is not a link (its
// ACL is the one it inherits from the user's %TEMP%).
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 || !fi.IsDir() {
		return fmt.Errorf("the feed directory %s is not a plain directory; remove it", dir)
	}
	return nil
}
