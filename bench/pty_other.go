//go:build !linux

package main

import (
	"errors"
	"os"
	"syscall"
)

// openPTY: the first-frame figures open a pseudo-terminal the Linux way
// (/dev/ptmx); elsewhere they report that they cannot run.
func openPTY(cols, rows int) (master, slave *os.File, err error) {
	return nil, nil, errors.New("the first-frame figures need a Linux pseudo-terminal")
}

// ttyAttr is not reached where openPTY fails.
func ttyAttr() *syscall.SysProcAttr { return nil }
