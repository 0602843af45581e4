package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/procgroup"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// stockJupyter is the Debian jupyter-server started the way a user starts
// one for --jupyter-url: a port, a token, --allow-root when root, nothing
// else. In particular no TCP_NODELAY patch: it writes with Nagle on.
type stockJupyter struct {
	url, token string
	runtime    string // JUPYTER_RUNTIME_DIR: where its kernels' connection files are
	pid        int
	cmd        *exec.Cmd
	group      *procgroup.Group
	done       chan struct{}
}

// stockServer is the stock server's program.
const stockServer = "/usr/bin/jupyter-server"

func startStock(ctx context.Context, work, root string) (*stockJupyter, error) {
	if _, err := os.Stat(stockServer); err != nil {
		return nil, fmt.Errorf("no stock server to measure against: %w", err)
	}
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	s := &stockJupyter{
		url:     fmt.Sprintf("http://127.0.0.1:%d/", port),
		token:   fmt.Sprintf("stock-%d-%d", os.Getpid(), port),
		runtime: filepath.Join(work, "stock-runtime"),
		done:    make(chan struct{}),
	}
	args := []string{"--no-browser", "--ip=127.0.0.1", "--port=" + strconv.Itoa(port),
		"--ServerApp.token=" + s.token, "--ServerApp.root_dir=" + root}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-root")
	}
	log, err := os.Create(filepath.Join(work, "stock-jupyter.log"))
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(stockServer, args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	// Its own runtime directory, so that the connection files are found
	// and nothing lands in the user's; its own process group, so that
	// stopping it stops its kernels too.
	s.cmd.Env = append(os.Environ(), "JUPYTER_RUNTIME_DIR="+s.runtime, "PYDEVD_DISABLE_FILE_VALIDATION=1")
	s.cmd.SysProcAttr = procgroup.Attr(syscall.SIGTERM)
	if err := s.cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	s.pid = s.cmd.Process.Pid
	if s.group, err = procgroup.Adopt(s.cmd.Process); err != nil {
		_ = s.cmd.Process.Kill()
		log.Close()
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); log.Close(); close(s.done) }()

	c, err := jupyter.NewClient(s.url, s.token, jupyter.Options{Timeout: 5 * time.Second})
	if err != nil {
		s.stop()
		return nil, err
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, err := c.Status(ctx); err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, errors.New("the stock jupyter-server exited; see stock-jupyter.log (-keep)")
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("the stock jupyter-server did not answer within 90 s")
		}
	}
}

// stop ends the server and its kernels (its process group): asked first,
// so that it shuts its kernels down, then whatever is left is killed.
func (s *stockJupyter) stop() {
	if s.group.Terminate() {
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
		}
	}
	s.group.Kill()
	<-s.done
}
