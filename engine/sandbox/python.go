package sandbox

import (
	"errors"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// findPython picks the eval sandbox's interpreter the way the managed
// Jupyter server's is picked (jupyter.FindPython), so that the sandbox sees
// the packages of the same environment as the notebooks' kernels. A
// machine without one is a refusal that says what was tried and how to
// install Jupyter.
func findPython(asked string) (string, error) {
	p, err := jupyter.FindPython(asked)
	if errors.Is(err, jupyter.ErrJupyterNotInstalled) {
		return "", refusef("the eval variant cannot start: %v", err)
	}
	if err != nil {
		return "", err
	}
	return p.Path, nil
}
