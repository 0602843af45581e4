//go:build !windows

package ui

import (
	"fmt"
	"os"
)

// openTerminal opens the terminal to read keys from and draw on: path, or
// the controlling terminal. Both ends are the same file.
func openTerminal(path string) (in, out *os.File, err error) {
	if path == "" {
		path = "/dev/tty"
	}
	tty, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open terminal %s: %w", path, err)
	}
	return tty, tty, nil
}
