// Package proctest tells tests whether a process still runs, on each
// platform: a zombie (dead, not yet reaped) counts as gone.
package proctest
