//go:build unix

package sandbox

// evalUnsupported says why the eval variant cannot run here; nil on Unix.
var evalUnsupported error
