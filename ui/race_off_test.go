//go:build !race

package ui

// raceEnabled is true under -race, which slows drawing about tenfold:
// timing assertions are then skipped.
const raceEnabled = false
