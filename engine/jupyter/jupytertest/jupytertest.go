// Package jupytertest starts real Jupyter servers for integration tests,
// through jupyter.StartManaged so that the tests exercise it too.
//
// One server per test:
//
//	srv := jupytertest.Start(t)
//	c := srv.Client()
//
// One server per package (startup costs about a second):
//
//	func TestMain(m *testing.M) { os.Exit(jupytertest.StartMain(m)) }
//	func TestX(t *testing.T) { srv := jupytertest.Shared(t); dir := srv.Subdir(t); ... }
//
// and, beside it, one per set of arguments the package's tests ask for
// (started on first use, stopped with the shared one):
//
//	srv := jupytertest.SharedWith(t, jupytertest.WithArgs(...))
//
// When Jupyter is not installed the tests fail with the install hint; set
// JUPYTER_TESTS=skip to skip them instead.
package jupytertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
)

// Server is a running managed Jupyter server.
type Server struct {
	URL     string // base URL ending in "/" (with the base path, if any)
	Token   string
	RootDir string // absolute notebook root on disk
	Managed *jupyter.Managed
}

// Option tunes a test server.
type Option func(*config)

type config struct {
	args []string
	log  io.Writer
}

// WithArgs passes extra jupyter-server arguments, e.g.
// "--ServerApp.base_url=/user/alice/".
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// WithLog sends the server's output to w (default: discarded, but its last
// lines appear in start errors). JUPYTER_TESTS_LOG=1 sends it to stderr.
func WithLog(w io.Writer) Option {
	return func(c *config) { c.log = w }
}

func skipRequested() bool { return os.Getenv("JUPYTER_TESTS") == "skip" }

func start(rootDir string, opts []Option) (*Server, error) {
	cfg := config{}
	if os.Getenv("JUPYTER_TESTS_LOG") != "" {
		cfg.log = os.Stderr
	}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	m, err := jupyter.StartManaged(ctx, jupyter.ManagedOptions{RootDir: rootDir, Log: cfg.log, ExtraArgs: cfg.args})
	if err != nil {
		return nil, err
	}
	return &Server{URL: m.URL, Token: m.Token, RootDir: m.RootDir, Managed: m}, nil
}

// Start starts a server rooted in a fresh t.TempDir and stops it (with its
// kernels) when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := start(t.TempDir(), opts)
	if err != nil {
		if errors.Is(err, jupyter.ErrJupyterNotInstalled) && skipRequested() {
			t.Skipf("JUPYTER_TESTS=skip: %v", err)
		}
		t.Fatalf("starting a Jupyter server for the test: %v", err)
	}
	// Cleanup runs after t.TempDir's removal is registered, so it runs
	// first (LIFO): the server is gone before its root is deleted.
	t.Cleanup(func() {
		if err := s.Managed.Stop(); err != nil {
			t.Errorf("stopping the Jupyter server: %v", err)
		}
	})
	return s
}

var (
	shared    *Server
	sharedErr error
	// others are the servers SharedWith started, by their arguments.
	othersMu sync.Mutex
	others   map[string]*Server
	inMain   bool // StartMain is running the tests
)

// StartMain starts one server shared by the package's tests, runs them,
// stops the server and returns the exit code for os.Exit. Tests get the
// server from Shared.
func StartMain(m *testing.M, opts ...Option) int {
	root, err := os.MkdirTemp("", "jupytertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "jupytertest:", err)
		return 1
	}
	defer os.RemoveAll(root)
	shared, sharedErr = start(root, opts)
	if sharedErr != nil {
		if !(errors.Is(sharedErr, jupyter.ErrJupyterNotInstalled) && skipRequested()) {
			fmt.Fprintf(os.Stderr, "jupytertest: starting the shared Jupyter server: %v\n", sharedErr)
			return 1
		}
	} else {
		defer shared.Managed.Stop()
	}
	inMain = true
	defer stopOthers()
	return m.Run()
}

// SharedWith returns a server started with opts, shared by the package's
// tests that ask for the same opts (see StartMain, which stops it): for
// tests that need a server configured otherwise than the shared one, but
// not one of their own.
func SharedWith(t testing.TB, opts ...Option) *Server {
	t.Helper()
	if !inMain {
		t.Fatal("jupytertest.SharedWith needs func TestMain(m *testing.M) { os.Exit(jupytertest.StartMain(m)) }")
	}
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	key := strings.Join(cfg.args, "\x00")
	othersMu.Lock()
	defer othersMu.Unlock()
	if s := others[key]; s != nil {
		return s
	}
	root, err := os.MkdirTemp("", "jupytertest-")
	if err != nil {
		t.Fatal(err)
	}
	s, err := start(root, opts)
	if err != nil {
		os.RemoveAll(root)
		if errors.Is(err, jupyter.ErrJupyterNotInstalled) && skipRequested() {
			t.Skipf("JUPYTER_TESTS=skip: %v", err)
		}
		t.Fatalf("starting a shared Jupyter server for the test: %v", err)
	}
	if others == nil {
		others = map[string]*Server{}
	}
	others[key] = s
	return s
}

// stopOthers stops the servers SharedWith started and removes their roots.
func stopOthers() {
	othersMu.Lock()
	defer othersMu.Unlock()
	for _, s := range others {
		if err := s.Managed.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "jupytertest: stopping a shared Jupyter server:", err)
		}
		os.RemoveAll(s.RootDir)
	}
	others = nil
}

// Shared returns the package's shared server (see StartMain). Tests that
// use it should keep to their own Subdir and shut their kernels down.
func Shared(t testing.TB) *Server {
	t.Helper()
	switch {
	case shared != nil:
		return shared
	case sharedErr != nil:
		t.Skipf("JUPYTER_TESTS=skip: %v", sharedErr)
	default:
		t.Fatal("jupytertest.Shared needs func TestMain(m *testing.M) { os.Exit(jupytertest.StartMain(m)) }")
	}
	return nil
}

// Client returns a REST client for the server.
func (s *Server) Client() *jupyter.Client {
	return s.ClientWith(jupyter.Options{})
}

// ClientWith returns a REST client for the server with options.
func (s *Server) ClientWith(opts jupyter.Options) *jupyter.Client {
	c, err := jupyter.NewClient(s.URL, s.Token, opts)
	if err != nil {
		// NewClient only fails on a malformed URL, and ours is built by
		// StartManaged.
		panic(err)
	}
	return c
}

var subdirSeq atomic.Int64

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Subdir creates a fresh directory under the server root for this test and
// returns its path relative to the root (the form the contents API wants).
// It is removed when the test ends.
func (s *Server) Subdir(t testing.TB) string {
	t.Helper()
	name := unsafeChars.ReplaceAllString(t.Name(), "_")
	name = fmt.Sprintf("%s-%d", strings.Trim(name, "_"), subdirSeq.Add(1))
	abs := filepath.Join(s.RootDir, name)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(abs) })
	return name
}

// Path is the absolute on-disk path of a contents path.
func (s *Server) Path(rel string) string {
	return filepath.Join(s.RootDir, filepath.FromSlash(rel))
}

// StartKernel starts a kernel of the default spec and shuts it down when
// the test ends.
func (s *Server) StartKernel(t testing.TB) *jupyter.Kernel {
	t.Helper()
	c := s.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	k, err := c.StartKernel(ctx, "")
	if err != nil {
		t.Fatalf("starting a kernel: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.ShutdownKernel(ctx, k.ID); err != nil && !jupyter.IsNotFound(err) {
			t.Errorf("shutting down kernel %s: %v", k.ID, err)
		}
	})
	return k
}

// Connect opens a kernel channel with c and closes it when the test ends.
func Connect(t testing.TB, c *jupyter.Client, kernelID string) *jupyter.KernelConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	kc, err := c.ConnectKernel(ctx, kernelID)
	if err != nil {
		t.Fatalf("connecting to kernel %s: %v", kernelID, err)
	}
	t.Cleanup(func() { kc.Close() })
	return kc
}
