package main

import "strings"

// failedToStart is the managed Jupyter server's failure to start as a
// person reads it on stderr: a headline, then the problem's own lines
// (every place looked in, every way to install Jupyter) indented under it.
func failedToStart(problem string) string {
	var b strings.Builder
	b.WriteString("\nERROR: the managed Jupyter server failed to start:\n")
	for _, l := range strings.Split(strings.TrimRight(problem, "\n"), "\n") {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("MCP keeps answering; every call that needs Jupyter fails saying this until you fix it and start again.\n\n")
	return b.String()
}
