package jupyter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// systemPython is the last place looked in: Debian's and Ubuntu's Python,
// where their jupyter-server packages install. A variable so that tests
// can point it elsewhere.
var systemPython = "/usr/bin/python3"

// pythonCheck is the program a candidate must run without error: the
// managed server needs jupyter_server, and its kernels ipykernel.
const pythonCheck = "import jupyter_server, ipykernel"

// pythonCheckTimeout bounds one candidate's check. The first import of
// jupyter_server reads many files; a loaded machine takes seconds.
const pythonCheckTimeout = 20 * time.Second

// Python is the interpreter that runs Jupyter, and where it was found.
type Python struct {
	Path string
	// From says where: "--python", "VIRTUAL_ENV", "CONDA_PREFIX",
	// "jupyter-server on PATH", "python3 on PATH", "/usr/bin/python3", ...
	From string
}

// FindPython picks the interpreter that runs the managed Jupyter server and
// the eval sandbox. explicit (--python / JUPYTER_PYTHON), when set, is the
// only candidate. Otherwise, in order: the active virtualenv (VIRTUAL_ENV)
// or conda env (CONDA_PREFIX); the interpreter of the jupyter-server or
// jupyter script on PATH; python3, then python, on PATH; /usr/bin/python3.
// The first that can import jupyter_server and ipykernel wins. When none
// can, the error (which wraps ErrJupyterNotInstalled) lists every
// candidate with why it failed, and how to install Jupyter here.
func FindPython(explicit string) (Python, error) {
	return pythonSearch{getenv: os.Getenv, goos: runtime.GOOS, system: systemPython}.find(explicit)
}

// quickPython is the candidate FindPython would try first, without trying
// it: the first that exists. found is false when there is none at all.
func quickPython(explicit string) (py Python, found bool) {
	exists := func(path string) error {
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		if st.IsDir() {
			return errors.New("a directory")
		}
		return nil
	}
	s := pythonSearch{getenv: os.Getenv, goos: runtime.GOOS, system: systemPython, check: exists}
	py, err := s.find(explicit)
	return py, err == nil
}

// markPythonOK records that path runs Jupyter (a server started with it
// answered), so that a later FindPython does not check it again.
func markPythonOK(path string) {
	a, _ := checks.LoadOrStore(path, &pythonAnswer{})
	a.(*pythonAnswer).once.Do(func() {})
}

// pythonSearch is one search, with its environment: tests give it their
// own PATH, VIRTUAL_ENV and CONDA_PREFIX.
type pythonSearch struct {
	getenv func(string) string
	goos   string
	system string // the last candidate ("" = none)
	// check says whether a candidate can run Jupyter; nil runs
	// pythonCheck in it (cached).
	check func(path string) error
}

// tried is one candidate that did not work, or a place with none.
type tried struct{ from, what string }

func (s pythonSearch) find(explicit string) (Python, error) {
	var log []tried
	// try checks one candidate; ok when it can run Jupyter.
	seen := map[string]bool{}
	try := func(from, path string) (Python, bool) {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if seen[path] {
			log = append(log, tried{from, path + ": tried above"})
			return Python{}, false
		}
		seen[path] = true
		check := s.check
		if check == nil {
			check = checkPythonCached
		}
		if err := check(path); err != nil {
			log = append(log, tried{from, path + ": " + err.Error()})
			return Python{}, false
		}
		return Python{Path: path, From: from}, true
	}
	if explicit != "" {
		path := explicit
		if !strings.ContainsAny(explicit, `/\`) {
			if path = s.lookPath(explicit); path == "" {
				log = append(log, tried{"--python", explicit + ": not found on PATH"})
			}
		}
		if path != "" {
			if p, ok := try("--python", path); ok {
				return p, nil
			}
		}
		return Python{}, s.notFound(log)
	}
	for _, env := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		prefix := s.getenv(env)
		if prefix == "" {
			log = append(log, tried{env, "not set"})
			continue
		}
		found := false
		for _, p := range s.envPythons(prefix) {
			if st, err := os.Stat(p); err != nil || st.IsDir() {
				continue
			}
			found = true
			if py, ok := try(env, p); ok {
				return py, nil
			}
		}
		if !found {
			log = append(log, tried{env, prefix + ": has no " + strings.Join(s.envPythonNames(), " or ")})
		}
	}
	for _, script := range []string{"jupyter-server", "jupyter"} {
		from := script + " on PATH"
		path := s.lookPath(script)
		if path == "" {
			log = append(log, tried{from, "not found"})
			continue
		}
		py, why := s.scriptPython(path)
		if py == "" {
			log = append(log, tried{from, path + ": " + why})
			continue
		}
		if p, ok := try(from+" ("+path+")", py); ok {
			p.From = from
			return p, nil
		}
	}
	for _, name := range []string{"python3", "python"} {
		from := name + " on PATH"
		path := s.lookPath(name)
		if path == "" {
			log = append(log, tried{from, "not found"})
			continue
		}
		if p, ok := try(from, path); ok {
			return p, nil
		}
	}
	if s.system != "" && s.goos != "windows" {
		if _, err := os.Stat(s.system); err != nil {
			log = append(log, tried{s.system, "not found"})
		} else if p, ok := try(s.system, s.system); ok {
			return p, nil
		}
	}
	return Python{}, s.notFound(log)
}

// envPythonNames are the interpreters an environment's folder may hold.
func (s pythonSearch) envPythonNames() []string {
	if s.goos == "windows" {
		// A venv keeps it in Scripts, a conda env at its top.
		return []string{`Scripts\python.exe`, "python.exe"}
	}
	return []string{"bin/python", "bin/python3"}
}

func (s pythonSearch) envPythons(prefix string) []string {
	var out []string
	for _, n := range s.envPythonNames() {
		out = append(out, filepath.Join(prefix, filepath.FromSlash(n)))
	}
	return out
}

// lookPath finds an executable on the search's PATH ("" when none).
func (s pythonSearch) lookPath(name string) string {
	exts := []string{""}
	if s.goos == "windows" {
		exts = []string{".exe", ".bat", ".cmd", ""}
	}
	for _, dir := range filepath.SplitList(s.getenv("PATH")) {
		if dir == "" {
			continue
		}
		for _, ext := range exts {
			p := filepath.Join(dir, name+ext)
			st, err := os.Stat(p)
			if err != nil || st.IsDir() {
				continue
			}
			if s.goos != "windows" && st.Mode().Perm()&0o111 == 0 {
				continue
			}
			return p
		}
	}
	return ""
}

// scriptPython is the interpreter a jupyter script runs with: the one its
// #! line names (directly, through env, or in pip's /bin/sh trampoline for
// long paths), or on Windows the python.exe beside the launcher. why says
// what was wrong when there is none.
func (s pythonSearch) scriptPython(script string) (py, why string) {
	if s.goos == "windows" {
		dir := filepath.Dir(script)
		for _, p := range []string{filepath.Join(dir, "python.exe"), filepath.Join(filepath.Dir(dir), "python.exe")} {
			if _, err := os.Stat(p); err == nil {
				return p, ""
			}
		}
		return "", "no python.exe beside it or in the folder above"
	}
	f, err := os.Open(script)
	if err != nil {
		return "", err.Error()
	}
	defer f.Close()
	r := bufio.NewReader(f)
	first, _ := r.ReadString('\n')
	line, ok := strings.CutPrefix(strings.TrimSpace(first), "#!")
	if !ok {
		return "", "it has no #! line"
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return "", "its #! line is empty"
	}
	py = fields[0]
	switch filepath.Base(py) {
	case "env":
		// #!/usr/bin/env [-S] python3
		name := fields[len(fields)-1]
		if py = s.lookPath(name); len(fields) < 2 || py == "" {
			return "", "its #! line names " + strings.TrimSpace(line) + ", and " + name + " is not on PATH"
		}
	case "sh":
		// pip writes  #!/bin/sh  '''exec' "/long path/python" "$0" "$@"
		// when the interpreter's path is too long or has spaces.
		second, _ := r.ReadString('\n')
		rest, ok := strings.CutPrefix(strings.TrimSpace(second), `'''exec' `)
		if !ok {
			return "", "it is a shell script, not a Python one"
		}
		q := strings.Fields(rest)
		if len(q) == 0 {
			return "", "its exec line names no interpreter"
		}
		py = strings.Trim(q[0], `"'`)
		if strings.HasPrefix(rest, `"`) {
			if end := strings.Index(rest[1:], `"`); end >= 0 {
				py = rest[1 : end+1]
			}
		}
	}
	if !strings.Contains(filepath.Base(py), "python") {
		return "", "its #! line names " + py + ", not a Python"
	}
	if _, err := os.Stat(py); err != nil {
		return "", "its #! line names " + py + ", which does not exist"
	}
	return py, ""
}

// checks caches each interpreter's answer for the life of the process:
// the eval sandbox looks for its Python at every launch.
var checks sync.Map // path -> *pythonAnswer

type pythonAnswer struct {
	once sync.Once
	err  error
}

func checkPythonCached(path string) error {
	a, _ := checks.LoadOrStore(path, &pythonAnswer{})
	ans := a.(*pythonAnswer)
	ans.once.Do(func() { ans.err = checkPython(path) })
	return ans.err
}

// checkPython runs pythonCheck in the interpreter; the error says why it
// failed in a few words (the last line of a traceback says the most).
func checkPython(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), pythonCheckTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-c", pythonCheck).CombinedOutput()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("did not answer %q within %s", pythonCheck, pythonCheckTimeout)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		// It could not be started at all.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot run it: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return fmt.Errorf("cannot %s (%s)", pythonCheck, last)
	}
	return fmt.Errorf("cannot %s (%v)", pythonCheck, err)
}

// canImportJupyterServer checks an interpreter afresh (a restart asks
// whether Jupyter is still there).
func canImportJupyterServer(python string) error { return checkPython(python) }

// notFound is the error for a search that found nothing.
func (s pythonSearch) notFound(log []tried) error {
	var b strings.Builder
	b.WriteString("no Python that can import jupyter_server and ipykernel was found. Tried, in order:")
	for _, t := range log {
		fmt.Fprintf(&b, "\n  %s: %s", t.from, t.what)
	}
	b.WriteString("\nInstall Jupyter with one of:")
	for _, h := range installHints(s.goos, s.getenv, func(name string) bool { return s.lookPath(name) != "" }) {
		b.WriteString("\n  " + h)
	}
	b.WriteString("\nthen run this again (a virtualenv or conda env must be active, or named with --python);" +
		" or use a running Jupyter server: --jupyter-url URL --jupyter-token TOKEN")
	return fmt.Errorf("%w: %s", ErrJupyterNotInstalled, b.String())
}

// debianPackages are the packages scripts/ensure-jupyter.sh installs.
const debianPackages = "jupyter-server python3-ipykernel python3-matplotlib python3-nbformat python3-jupyter-client"

// installHints are the install commands that fit this machine, the most
// fitting first: into the active environment, then the system's package
// manager, then uv, then pip in a fresh virtualenv.
func installHints(goos string, getenv func(string) string, onPath func(string) bool) []string {
	var h []string
	pip := "python3 -m pip"
	venvPip := "python3 -m venv .venv && .venv/bin/pip install jupyter-server ipykernel   (then: source .venv/bin/activate)"
	if goos == "windows" {
		pip = "py -m pip"
		venvPip = `py -m venv .venv && .venv\Scripts\pip install jupyter-server ipykernel   (then: .venv\Scripts\activate)`
	}
	if getenv("VIRTUAL_ENV") != "" {
		h = append(h, "pip (into the active virtualenv): "+pip+" install jupyter-server ipykernel")
	}
	if getenv("CONDA_PREFIX") != "" || onPath("conda") {
		h = append(h, "conda: conda install -c conda-forge jupyter_server ipykernel")
	}
	switch {
	case goos == "linux" && onPath("apt-get"):
		h = append(h, "apt (Debian/Ubuntu): sudo apt-get install "+debianPackages)
	case goos == "darwin":
		h = append(h, "brew: brew install jupyterlab")
	}
	if onPath("uv") {
		h = append(h, "uv: uv venv && uv pip install jupyter-server ipykernel   (then activate .venv)")
	}
	h = append(h, "pip (in a virtualenv): "+venvPip)
	return h
}
