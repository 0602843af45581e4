package jupyter_test

import (
	"os"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

func TestMain(m *testing.M) { os.Exit(jupytertest.StartMain(m)) }
