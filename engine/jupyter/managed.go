package jupyter

import (
	"context"
	"errors"
	"io"
)

// ErrJupyterNotInstalled says that no jupyter-server could be found to start.
var ErrJupyterNotInstalled = errors.New("jupyter-server is not installed")

// ManagedOptions configure a managed jupyter-server.
type ManagedOptions struct {
	RootDir string    // notebook root; default the working directory
	Log     io.Writer // the server's own output (stderr); nil discards it
	// Extra command-line arguments for jupyter-server (tests use
	// --ServerApp.base_url=/user/alice/).
	ExtraArgs []string
}

// Managed is a jupyter-server process this program started: on a free
// loopback port, with a random token, TCP_NODELAY on kernel websockets and the
// IOPub rate limits raised. It dies with this process.
type Managed struct {
	URL   string // base URL, ending in "/"
	Token string
}

// StartManaged starts jupyter-server and waits until api/ answers.
func StartManaged(ctx context.Context, opts ManagedOptions) (*Managed, error) {
	panic("unimplemented")
}

// Stop shuts the server and all its kernels down.
func (m *Managed) Stop() error { panic("unimplemented") }
