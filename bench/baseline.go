package main

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

//go:embed baseline.py
var baselineScript []byte

// pyBaseline is the persistent jupyter_client helper (baseline.py): it
// times its own calls, so that rounds can alternate with ours in one run.
type pyBaseline struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startBaseline writes the embedded script next to the run's other files and
// starts it under python (the interpreter that has jupyter_client).
func startBaseline(python, dir string, stderr io.Writer) (*pyBaseline, error) {
	script := filepath.Join(dir, "baseline.py")
	if err := os.WriteFile(script, baselineScript, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(python, script)
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "PYDEVD_DISABLE_FILE_VALIDATION=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &pyBaseline{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

func (p *pyBaseline) ask(req map[string]any, resp any) error {
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("jupyter_client helper: %w", err)
	}
	answer, err := p.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("jupyter_client helper died: %w", err)
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(answer, &e) == nil && e.Error != "" {
		return errors.New("jupyter_client helper: " + e.Error)
	}
	return json.Unmarshal(answer, resp)
}

// connect attaches the helper to a kernel through its connection file.
func (p *pyBaseline) connect(connFile string) error {
	var ok struct{ OK bool }
	return p.ask(map[string]any{"cmd": "connect", "connection_file": connFile}, &ok)
}

// run times n executions of code; want is "text" or "png", the output that
// must arrive for the call to count.
func (p *pyBaseline) run(n int, code, want string) (samples, error) {
	var r struct {
		US []int64 `json:"us"`
	}
	if err := p.ask(map[string]any{"cmd": "run", "n": n, "code": code, "want": want}, &r); err != nil {
		return nil, err
	}
	s := make(samples, len(r.US))
	for i, us := range r.US {
		s[i] = time.Duration(us) * time.Microsecond
	}
	return s, nil
}

func (p *pyBaseline) close() {
	p.in.Close()
	waitOrKill(p.cmd, waited(p.cmd), 5*time.Second)
}
