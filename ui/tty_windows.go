package ui

import (
	"fmt"
	"os"
)

// openTerminal opens the terminal to read keys from and draw on: path for
// both, or the console, whose input (CONIN$) and screen (CONOUT$) Windows
// opens separately.
func openTerminal(path string) (in, out *os.File, err error) {
	if path != "" {
		tty, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("open terminal %s: %w", path, err)
		}
		return tty, tty, nil
	}
	in, err = os.OpenFile("CONIN$", os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open the console's input (CONIN$): %w", err)
	}
	out, err = os.OpenFile("CONOUT$", os.O_RDWR, 0)
	if err != nil {
		in.Close()
		return nil, nil, fmt.Errorf("open the console's screen (CONOUT$): %w", err)
	}
	return in, out, nil
}
