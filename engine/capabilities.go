package engine

import "slices"

// defaultCapabilities are the capabilities the engine knows, with their
// default values. main overrides them from flags and env through
// Config.Capabilities.
var defaultCapabilities = []Capability{
	{
		Name:        CapKernelAutoRestart,
		Enabled:     false,
		Source:      "default",
		Description: "When a kernel dies while running a cell, restart it and report the run with kernel_restarted instead of failing the call. All kernel state (variables, imports) is lost either way.",
	},
	{
		Name:        CapInterruptOnTimeout,
		Enabled:     false,
		Source:      "default",
		Description: "When an execution outlasts its call's timeout, interrupt the kernel and return what it produced (as the reference does). Off, the run goes on after the call returns and its outputs keep being saved into the notebook.",
	},
	{
		Name:        CapImages,
		Enabled:     true,
		Source:      "default",
		Description: "Return image outputs (image/png, image/jpeg) of executions and cell reads as image content.",
	},
}

// withDefaultCapabilities returns the configured capabilities followed by
// the defaults of every known capability the configuration leaves out, so
// that capabilities:// always lists all of them.
func withDefaultCapabilities(configured []Capability) []Capability {
	caps := slices.Clone(configured)
	for _, d := range defaultCapabilities {
		if !slices.ContainsFunc(caps, func(c Capability) bool { return c.Name == d.Name }) {
			caps = append(caps, d)
		}
	}
	return caps
}

// Capabilities lists the capabilities with their sources.
func (e *Engine) Capabilities() []Capability { return slices.Clone(e.caps) }

// capabilityEnabled reports whether the named capability is on.
func (e *Engine) capabilityEnabled(name string) bool {
	for _, c := range e.caps {
		if c.Name == name {
			return c.Enabled
		}
	}
	return false
}
