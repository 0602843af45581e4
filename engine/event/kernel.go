package event

// KernelLoss is what happened to a kernel that went away.
type KernelLoss int

// The ways a kernel goes away.
const (
	KernelShutDown            KernelLoss = iota + 1 // shut down from outside this server
	KernelGone                                      // no longer exists on the Jupyter server
	KernelDied                                      // its process died and was not restarted
	KernelRestartedAfterCrash                       // it died and Jupyter restarted it
	KernelRestartedOutside                          // restarted from outside this server
)

// String is the short phrase the workbench shows.
func (l KernelLoss) String() string {
	switch l {
	case KernelShutDown:
		return "shut down from outside"
	case KernelGone:
		return "gone from the Jupyter server"
	case KernelDied:
		return "died"
	case KernelRestartedAfterCrash:
		return "died, restarted by Jupyter"
	case KernelRestartedOutside:
		return "restarted from outside"
	}
	return "lost"
}

// Exists reports whether a kernel process still runs under the id after
// the loss (a blank one).
func (l KernelLoss) Exists() bool {
	return l == KernelRestartedAfterCrash || l == KernelRestartedOutside
}
