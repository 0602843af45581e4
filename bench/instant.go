package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/internal/harness"
)

// figInstant (figure 11) is the instant start: launch to the workbench's first frame with
// the managed Jupyter server still starting (paired with the same launch on
// a Jupyter server already up), and launch to Jupyter ready through us (the
// first tool call that needs Jupyter, sent right after initialize) against
// jupyter-server's own start to ready, in alternating rounds.
func (b *bench) figInstant() []*figure {
	const frames, starts = 10, 7
	var managed, external, bare samples
	for i := 0; i < frames+1; i++ {
		for _, ext := range []bool{false, true} {
			fr, hd, err := b.firstFrame(ext)
			if err != nil {
				return []*figure{errFigure("11", "instant start", err)}
			}
			// The first launch pays for cold page caches; it is not timed.
			if i == 0 {
				continue
			}
			if ext {
				external = append(external, fr)
			} else {
				managed, bare = append(managed, fr), append(bare, hd)
			}
		}
	}
	var ours, direct, inits samples
	for i := 0; i < starts; i++ {
		d, err := b.jupyterDirect()
		if err != nil {
			return []*figure{errFigure("11", "Jupyter ready", fmt.Errorf("jupyter-server direct: %w", err))}
		}
		direct = append(direct, d)
		init, ready, err := b.jupyterThroughUs()
		if err != nil {
			return []*figure{errFigure("11", "Jupyter ready", err)}
		}
		ours, inits = append(ours, ready), append(inits, init)
		progress("  start %d/%d: jupyter-server direct %.0f ms, through us %.0f ms (initialize answered at %.0f ms)",
			i+1, starts, ms(d), ms(ready), ms(init))
	}
	ext := ms(external.p50())
	return []*figure{
		{ID: "11a", Name: "launch to first frame, Jupyter starting", Unit: "ms", Ours: ms(managed.p50()), Baseline: &ext,
			BaselineName: "Jupyter up (--jupyter-url)", Samples: len(managed), goal: atMost, limit: 150,
			Notes: fmt.Sprintf("p50 of %d launches in a 160x50 pty to the first frame whose header says 'jupyter starting'; max %.1f ms; the bare header first drawn at p50 %.1f ms",
				len(managed), ms(managed.pct(1)), ms(bare.p50()))},
		pairedFigure("11b", "launch to Jupyter ready, through us", ours, direct, "jupyter-server's own", 1.10,
			fmt.Sprintf("; ours: list_files sent right after initialize (answered at p50 %.1f ms), answered once Jupyter is up; theirs: spawn, poll api/status every 5 ms",
				ms(inits.p50()))),
	}
}

// firstFrame launches the workbench in a pseudo-terminal (managed Jupyter,
// or with ext the bench's Jupyter) and times it to its first full frame:
// the header with its second line, which with a managed Jupyter must say it
// is starting. header is when the header was first drawn at all.
func (b *bench) firstFrame(ext bool) (frame, header time.Duration, err error) {
	master, slave, err := openPTY(160, 50)
	if err != nil {
		return 0, 0, err
	}
	defer master.Close()
	root, err := os.MkdirTemp(b.work, "frame-")
	if err != nil {
		slave.Close()
		return 0, 0, err
	}
	args := []string{"--port", "0", "--root-dir", root, "--log-file", filepath.Join(root, "server.log")}
	if ext {
		args = append(args, b.t.jupyterArgs()...)
	}
	cmd := exec.Command(b.t.bin, args...)
	cmd.Env = harness.CleanEnv("MCP_TOKEN=bench-frame-token", "TERM=xterm-256color", "COLORTERM=")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = ttyAttr()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		slave.Close()
		return 0, 0, err
	}
	slave.Close()
	exited := waited(cmd)
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		waitOrKill(cmd, exited, 15*time.Second)
	}()

	type mark struct {
		frame, starting time.Duration
		err             error
	}
	done := make(chan mark, 1)
	go func() {
		var screen []byte
		var m mark
		buf := make([]byte, 64<<10)
		for {
			n, err := master.Read(buf)
			at := time.Since(t0)
			if n > 0 {
				screen = append(screen, buf[:n]...)
				// Answer what a terminal answers: the primary device
				// attributes (every terminal does; the workbench's probe of
				// image protocols waits for it), the cursor position (the
				// end of termenv's background query) and the background.
				if bytes.Contains(buf[:n], []byte("\x1b[c")) {
					_, _ = master.WriteString("\x1b[?62;22c")
				}
				if bytes.Contains(buf[:n], []byte("\x1b]11;?")) {
					_, _ = master.WriteString("\x1b]11;rgb:0000/0000/0000\x1b\\")
				}
				if bytes.Contains(buf[:n], []byte("\x1b[6n")) {
					_, _ = master.WriteString("\x1b[1;1R")
				}
				if m.frame == 0 && bytes.Contains(screen, []byte("jupyter-mcp")) && bytes.Contains(screen, []byte("sessions")) {
					m.frame = at
				}
				if m.starting == 0 && bytes.Contains(screen, []byte("jupyter starting")) {
					m.starting = at
				}
				if m.frame > 0 && (ext || m.starting > 0) {
					done <- m
					return
				}
			}
			if err != nil {
				m.err = fmt.Errorf("the workbench drew no header before its terminal closed (%v); it wrote %q", err, lastBytes(screen, 300))
				done <- m
				return
			}
		}
	}()
	select {
	case m := <-done:
		// With a managed Jupyter the frame that counts is the first one
		// saying it is starting.
		return max(m.frame, m.starting), m.frame, m.err
	case <-time.After(30 * time.Second):
		master.Close()
		return 0, 0, errors.New("no first frame within 30 s")
	}
}

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// jupyterThroughUs launches the binary over stdio with a managed Jupyter
// server, sends initialize and at once a list_files (one contents request
// on an empty root: as cheap for Jupyter as the api/status the baseline
// polls), and times both answers from the launch.
func (b *bench) jupyterThroughUs() (initialize, ready time.Duration, err error) {
	root, err := os.MkdirTemp(b.work, "start-")
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(b.t.bin, "--transport", "stdio", "--feed", "", "--root-dir", root)
	cmd.Env = harness.CleanEnv()
	if log := b.t.logFile("instant-start"); log != nil {
		defer log.Close()
		cmd.Stderr = log
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		in.Close()
		waitOrKill(cmd, waited(cmd), 20*time.Second)
	}()
	const msgs = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + harness.ProtocolVersion +
		`","capabilities":{},"clientInfo":{"name":"jupyter-mcp-bench","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_files","arguments":{}}}` + "\n"
	if _, err := io.WriteString(in, msgs); err != nil {
		return 0, 0, err
	}
	r := bufio.NewReader(out)
	for initialize == 0 || ready == 0 {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, 0, fmt.Errorf("the binary ended its output: %w", err)
		}
		at := time.Since(t0)
		switch {
		case strings.HasPrefix(line, `{"jsonrpc":"2.0","id":1,`):
			initialize = at
		case strings.HasPrefix(line, `{"jsonrpc":"2.0","id":2,`):
			if strings.Contains(line, `"isError":true`) || !strings.Contains(line, `"result"`) {
				return 0, 0, fmt.Errorf("list_files during start-up: %.300s", line)
			}
			ready = at
		}
	}
	return initialize, ready, nil
}

// jupyterDirect starts jupyter-server as a person would (the same
// interpreter, a free port, a token, a fresh runtime directory like ours)
// and times it to its first 200 on api/status, polled every 5 ms.
func (b *bench) jupyterDirect() (time.Duration, error) {
	root, err := os.MkdirTemp(b.work, "direct-")
	if err != nil {
		return 0, err
	}
	port, err := harness.FreePort()
	if err != nil {
		return 0, err
	}
	token := "bench-direct-token"
	cmd := exec.Command(b.jup.Python, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
		"--ServerApp.port="+strconv.Itoa(port), "--ServerApp.port_retries=0", "--ServerApp.token="+token,
		"--ServerApp.root_dir="+root)
	cmd.Env = harness.CleanEnv("JUPYTER_RUNTIME_DIR=" + filepath.Join(root, ".runtime"))
	if os.Geteuid() == 0 {
		cmd.Args = append(cmd.Args, "--allow-root")
	}
	if log := b.t.logFile("jupyter-direct"); log != nil {
		defer log.Close()
		cmd.Stdout, cmd.Stderr = log, log
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := waited(cmd)
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		waitOrKill(cmd, exited, 15*time.Second)
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/api/status", port)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Authorization", "token "+token)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(t0), nil
			}
		}
		select {
		case <-exited:
			return 0, errors.New("jupyter-server exited before it answered")
		case <-ctx.Done():
			return 0, errors.New("jupyter-server did not answer within 60 s")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
