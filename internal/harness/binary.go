// Package harness starts the product the way its users do, for the tests
// and the programs that measure it (mcp, reliability, the workbench
// end-to-end tests, bench and soak): it builds the binary once per process,
// runs it over stdio or streamable HTTP, and connects go-sdk clients pinned
// to the protocol version real hosts speak. Jupyter servers for tests come
// from engine/jupyter/jupytertest, which MainWithJupyter starts.
//
// It is an ordinary package, not a _test one, so that bench and soak, which
// are programs, can use it too.
package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// BinEnv names a prebuilt binary for Binary to use instead of building one.
const BinEnv = "JMS_TEST_BIN"

var (
	buildOnce sync.Once
	buildDir  string
	builtBin  string
	buildErr  error
)

// ModuleRoot is the directory of the module's go.mod, found from the
// working directory.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the module (go env GOMOD is %q)", mod)
	}
	return filepath.Dir(mod), nil
}

// Build compiles the product from the module root into out, with extra go
// build flags (e.g. "-trimpath").
func Build(out string, flags ...string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	args := append(append([]string{"build"}, flags...), "-o", out, ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if data, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, data)
	}
	return nil
}

// Binary is the product built once per test process (or $JMS_TEST_BIN).
// Main and MainWithJupyter remove the build when the tests end.
func Binary(t testing.TB) string {
	t.Helper()
	if b := os.Getenv(BinEnv); b != "" {
		return b
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "jms-test-bin-"); buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "jupyter-mcp-server")
		buildErr = Build(builtBin)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

func removeBuild() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// Main runs a package's tests and removes the binary Binary built:
//
//	func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
func Main(m *testing.M) int {
	defer removeBuild()
	return m.Run()
}

// MainWithJupyter is Main with the package's shared Jupyter server
// (jupytertest.StartMain; tests get it from jupytertest.Shared).
func MainWithJupyter(m *testing.M, opts ...jupytertest.Option) int {
	defer removeBuild()
	return jupytertest.StartMain(m, opts...)
}
