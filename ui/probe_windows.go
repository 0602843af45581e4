package ui

import (
	"os"
	"time"
)

// probeTerminal does not ask the Windows console: the environment
// (WT_SESSION) is what tells Windows Terminal, and --image-protocol the
// rest.
func probeTerminal(*os.File, time.Duration) termProbe { return termProbe{} }

// cellSizeOf is not known on the Windows console.
func cellSizeOf(*os.File) (w, h int) { return 0, 0 }
