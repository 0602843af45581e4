package engine

// A person's interrupt from the workbench (InterruptKernel) stops whatever
// runs on the kernel. The runs it stops say so in their results
// (ExecResult.InterruptedByPerson), as a cancel, an undo, an edit or a
// denial already do: the agent otherwise reads a bare KeyboardInterrupt and
// may well run the same code again.

// markPersonInterrupt marks the runs in flight on the kernel as interrupted
// by the person, before the interrupt is sent (the kernel's reply may
// overtake the REST answer), and returns them.
func (e *Engine) markPersonInterrupt(kernelID string) []*execution {
	e.mu.RLock()
	var runs []*execution
	if k := e.kernels[kernelID]; k != nil {
		for x := range k.execs {
			runs = append(runs, x)
		}
	}
	e.mu.RUnlock()
	for _, x := range runs {
		x.mu.Lock()
		if !x.ended {
			x.byPerson = true
		}
		x.mu.Unlock()
	}
	return runs
}

// unmarkPersonInterrupt takes the mark back from runs an interrupt that
// failed did not stop.
func unmarkPersonInterrupt(runs []*execution) {
	for _, x := range runs {
		x.mu.Lock()
		if !x.ended {
			x.byPerson = false
		}
		x.mu.Unlock()
	}
}
