//go:build unix

package main

import (
	"encoding/json"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// hideSecrets starts this program over without the secrets in its
// environment and command line, passing them on a pipe (see secrets.go).
// It returns only when that could not be done.
func hideSecrets(c *config, args []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	// A few hundred bytes: the pipe holds them until the next image reads.
	err = json.NewEncoder(w).Encode(secretsToPass(c))
	w.Close()
	if err != nil {
		r.Close()
		return err
	}
	fd := int(r.Fd())
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
		r.Close()
		return err
	}
	env := cleanEnviron(c, secretsFDEnv+"="+strconv.Itoa(fd))
	err = syscall.Exec(exe, append([]string{os.Args[0]}, stripSecretArgs(c, args)...), env)
	r.Close()
	return err
}
