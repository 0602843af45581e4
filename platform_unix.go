//go:build unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
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

// unixFeeds: the live feed is a unix socket in the feed directory.
const unixFeeds = true

// oNoFollow makes an open fail on a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

// checkPrivateDir accepts dir only as a directory of ours that nobody else
// may enter: not a link (which could send our records and socket where
// someone else chose), owned by this user, mode 0700. One made by someone
// else in the shared temporary directory before we ran is refused, not
// repaired: we cannot know what they left in it.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("the feed directory %s is a symbolic link; remove it", dir)
	case !fi.IsDir():
		return fmt.Errorf("the feed directory %s is not a directory; remove it", dir)
	case st == nil || int(st.Uid) != os.Getuid():
		return fmt.Errorf("the feed directory %s belongs to another user; remove it (or set XDG_RUNTIME_DIR)", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("the feed directory %s can be entered by other users (mode %v); remove it, or chmod 700 it if you made it", dir, fi.Mode().Perm())
	}
	return nil
}
