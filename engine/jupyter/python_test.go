package jupyter

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// These tests build fake environments in temporary folders: shell scripts
// stand in for interpreters and answer the import check as each test
// decides, and the search sees only the PATH, VIRTUAL_ENV and CONDA_PREFIX
// the test gives it, so what is installed on the machine does not matter.

// writeExec writes an executable file.
func writeExec(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakePython writes a stand-in interpreter at path. With jupyter it passes
// the import check; without, it fails it as a Python without the modules
// would. Every check it answers is counted in path+".checks".
func fakePython(t *testing.T, path string, jupyter bool) string {
	t.Helper()
	answer := `echo "Traceback (most recent call last):" >&2
  echo "ModuleNotFoundError: No module named 'jupyter_server'" >&2
  exit 1`
	if jupyter {
		answer = `echo "fake python ` + path + `"
  exit 0`
	}
	return writeExec(t, path, `#!/bin/sh
if [ "$1" = "-c" ] && [ "$2" = "`+pythonCheck+`" ]; then
  echo x >> "`+path+`.checks"
  `+answer+`
fi
echo "fake python: unexpected arguments $*" >&2
exit 2
`)
}

func checksRun(t *testing.T, python string) int {
	data, err := os.ReadFile(python + ".checks")
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "x\n")
}

// search is a pythonSearch over env alone, with system as the last resort.
func search(env map[string]string, system string) pythonSearch {
	return pythonSearch{getenv: func(k string) string { return env[k] }, goos: runtime.GOOS, system: system}
}

func skipOnWindows(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake interpreters are shell scripts")
	}
}

func TestFindPythonOrder(t *testing.T) {
	skipOnWindows(t)
	t.Parallel()
	type layout struct {
		explicit bool // a --python that works
		venv     *bool
		conda    *bool
		script   *bool // jupyter-server on PATH, its #! interpreter working or not
		jupyter  *bool // jupyter (not jupyter-server) on PATH
		python3  *bool
		python   *bool
		system   *bool
	}
	yes, no := new(bool), new(bool)
	*yes = true
	cases := []struct {
		name string
		l    layout
		want string // From of the pick
		path string // its path, relative to the test's folder
	}{
		{"--python beats everything", layout{explicit: true, venv: yes, conda: yes, script: yes, python3: yes, system: yes}, "--python", "chosen/python"},
		{"the virtualenv comes first", layout{venv: yes, conda: yes, script: yes, python3: yes, system: yes}, "VIRTUAL_ENV", "venv/bin/python"},
		{"a virtualenv without Jupyter is passed over for conda", layout{venv: no, conda: yes, script: yes, python3: yes, system: yes}, "CONDA_PREFIX", "conda/bin/python"},
		{"then the interpreter of jupyter-server on PATH", layout{venv: no, conda: no, script: yes, python3: yes, system: yes}, "jupyter-server on PATH", "server-env/bin/python3.12"},
		{"then that of jupyter", layout{script: no, jupyter: yes, python3: yes, system: yes}, "jupyter on PATH", "jupyter-env/bin/python"},
		{"then python3 on PATH", layout{script: no, jupyter: no, python3: yes, system: yes}, "python3 on PATH", "bin/python3"},
		{"then python on PATH", layout{python3: no, python: yes, system: yes}, "python on PATH", "bin/python"},
		{"then the system's Python", layout{venv: no, python3: no, python: no, system: yes}, "SYSTEM", "usr/bin/python3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			at := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
			env := map[string]string{"PATH": at("bin")}
			if err := os.MkdirAll(at("bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			explicit := ""
			if c.l.explicit {
				explicit = fakePython(t, at("chosen/python"), true)
			}
			if c.l.venv != nil {
				env["VIRTUAL_ENV"] = at("venv")
				fakePython(t, at("venv/bin/python"), *c.l.venv)
			}
			if c.l.conda != nil {
				env["CONDA_PREFIX"] = at("conda")
				fakePython(t, at("conda/bin/python"), *c.l.conda)
			}
			if c.l.script != nil {
				py := fakePython(t, at("server-env/bin/python3.12"), *c.l.script)
				writeExec(t, at("bin/jupyter-server"), "#!"+py+"\nimport sys\n")
			}
			if c.l.jupyter != nil {
				py := fakePython(t, at("jupyter-env/bin/python"), *c.l.jupyter)
				writeExec(t, at("bin/jupyter"), "#!"+py+" -E\n")
			}
			if c.l.python3 != nil {
				fakePython(t, at("bin/python3"), *c.l.python3)
			}
			if c.l.python != nil {
				fakePython(t, at("bin/python"), *c.l.python)
			}
			system := at("usr/bin/python3")
			if c.l.system != nil {
				fakePython(t, system, *c.l.system)
			}
			got, err := search(env, system).find(explicit)
			if err != nil {
				t.Fatalf("find: %v", err)
			}
			want := Python{Path: at(c.path), From: c.want}
			if c.want == "SYSTEM" {
				want.From = system
			}
			if got != want {
				t.Errorf("picked %+v, want %+v", got, want)
			}
		})
	}
}

// The #! lines pip, env and conda write all lead to the interpreter.
func TestFindPythonShebangs(t *testing.T) {
	skipOnWindows(t)
	t.Parallel()
	dir := t.TempDir()
	spaced := fakePython(t, filepath.Join(dir, "My Envs", "py env", "bin", "python"), true)
	plain := fakePython(t, filepath.Join(dir, "plain", "bin", "python"), true)
	onPath := fakePython(t, filepath.Join(dir, "envbin", "python3"), true)
	for _, c := range []struct{ name, script, want string }{
		{"direct", "#!" + plain + "\n", plain},
		{"env", "#!/usr/bin/env python3\n", onPath},
		{"env -S", "#!/usr/bin/env -S python3\n", onPath},
		{"pip's trampoline for paths with spaces", "#!/bin/sh\n'''exec' \"" + spaced + "\" \"$0\" \"$@\"\n' '''\n", spaced},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bin := t.TempDir()
			writeExec(t, filepath.Join(bin, "jupyter-server"), c.script)
			env := map[string]string{"PATH": bin + string(os.PathListSeparator) + filepath.Dir(onPath)}
			got, err := search(env, "").find("")
			if err != nil {
				t.Fatal(err)
			}
			if want := c.want; got.Path != want || got.From != "jupyter-server on PATH" {
				t.Errorf("picked %+v, want %s from jupyter-server on PATH", got, c.want)
			}
		})
	}
}

// A --python that cannot run Jupyter is an error, not a reason to use
// another interpreter behind the user's back.
func TestFindPythonExplicitIsTheOnlyCandidate(t *testing.T) {
	skipOnWindows(t)
	t.Parallel()
	dir := t.TempDir()
	venv := fakePython(t, filepath.Join(dir, "venv", "bin", "python"), true)
	bad := fakePython(t, filepath.Join(dir, "other", "python"), false)
	env := map[string]string{"PATH": filepath.Dir(venv), "VIRTUAL_ENV": filepath.Join(dir, "venv")}
	_, err := search(env, "").find(bad)
	if !errors.Is(err, ErrJupyterNotInstalled) {
		t.Fatalf("err = %v, want ErrJupyterNotInstalled", err)
	}
	wantLine := "\n  --python: " + bad + ": cannot import jupyter_server, ipykernel (ModuleNotFoundError: No module named 'jupyter_server')\n"
	if !strings.Contains(err.Error(), wantLine) {
		t.Errorf("error does not say %q:\n%v", wantLine, err)
	}
	// A bare name is looked up on PATH.
	got, err := search(env, "").find("python")
	if err != nil || got.Path != venv {
		t.Errorf("find(python) = %+v, %v; want %s", got, err, venv)
	}
	_, err = search(env, "").find("python3.99")
	if err == nil || !strings.Contains(err.Error(), "\n  --python: python3.99: not found on PATH\n") {
		t.Errorf("find(python3.99) error = %v", err)
	}
}

// With nothing that works, the error lists each candidate and why it
// failed, and how to install Jupyter on this machine.
func TestFindPythonNoneWorks(t *testing.T) {
	skipOnWindows(t)
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	fakePython(t, filepath.Join(dir, "venv", "bin", "python"), false)
	if err := os.MkdirAll(filepath.Join(dir, "conda"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeExec(t, filepath.Join(bin, "jupyter-server"), "#!"+filepath.Join(dir, "gone", "python3")+"\n")
	writeExec(t, filepath.Join(bin, "jupyter"), "#!/bin/bash\necho not python\n")
	fakePython(t, filepath.Join(bin, "python3"), false)
	writeExec(t, filepath.Join(bin, "python"), "#!"+filepath.Join(dir, "nothing-here")+"\n")
	writeExec(t, filepath.Join(bin, "apt-get"), "#!/bin/sh\nexit 1\n")
	env := map[string]string{"PATH": bin, "VIRTUAL_ENV": filepath.Join(dir, "venv"), "CONDA_PREFIX": filepath.Join(dir, "conda")}
	s := search(env, filepath.Join(dir, "usr", "bin", "python3"))
	s.goos = "linux"
	_, err := s.find("")
	if !errors.Is(err, ErrJupyterNotInstalled) {
		t.Fatalf("err = %v, want ErrJupyterNotInstalled", err)
	}
	got := strings.ReplaceAll(err.Error(), dir, "$TMP")
	want := `jupyter-server is not installed: no Python that can import jupyter_server and ipykernel was found. Tried, in order:
  VIRTUAL_ENV: $TMP/venv/bin/python: cannot import jupyter_server, ipykernel (ModuleNotFoundError: No module named 'jupyter_server')
  CONDA_PREFIX: $TMP/conda: has no bin/python or bin/python3
  jupyter-server on PATH: $TMP/bin/jupyter-server: its #! line names $TMP/gone/python3, which does not exist
  jupyter on PATH: $TMP/bin/jupyter: its #! line names /bin/bash, not a Python
  python3 on PATH: $TMP/bin/python3: cannot import jupyter_server, ipykernel (ModuleNotFoundError: No module named 'jupyter_server')
  python on PATH: $TMP/bin/python: cannot run it: no such file or directory
  $TMP/usr/bin/python3: not found
Install Jupyter with one of:
  pip (into the active virtualenv): python3 -m pip install jupyter-server ipykernel
  conda: conda install -c conda-forge jupyter_server ipykernel
  apt (Debian/Ubuntu): sudo apt-get install jupyter-server python3-ipykernel python3-matplotlib python3-nbformat python3-jupyter-client
  pip (in a virtualenv): python3 -m venv .venv && .venv/bin/pip install jupyter-server ipykernel   (then: source .venv/bin/activate)
then run this again (a virtualenv or conda env must be active, or named with --python); or use a running Jupyter server: --jupyter-url URL --jupyter-token TOKEN`
	if got != want {
		t.Errorf("error:\n%s\n\nwant:\n%s", got, want)
	}

	// A machine with no Python at all.
	empty := t.TempDir()
	_, err = search(map[string]string{"PATH": empty}, "").find("")
	if !errors.Is(err, ErrJupyterNotInstalled) || !strings.Contains(err.Error(), "\n  VIRTUAL_ENV: not set\n  CONDA_PREFIX: not set\n  jupyter-server on PATH: not found\n") {
		t.Errorf("error with nothing installed:\n%v", err)
	}
}

// Each interpreter is asked once per process; the eval sandbox searches at
// every launch.
func TestFindPythonChecksOnce(t *testing.T) {
	skipOnWindows(t)
	t.Parallel()
	dir := t.TempDir()
	bad := fakePython(t, filepath.Join(dir, "bin", "python3"), false)
	good := fakePython(t, filepath.Join(dir, "sys", "python3"), true)
	s := search(map[string]string{"PATH": filepath.Dir(bad)}, good)
	for i := 0; i < 3; i++ {
		p, err := s.find("")
		if err != nil || p.Path != good {
			t.Fatalf("find = %+v, %v; want %s", p, err, good)
		}
	}
	if n, m := checksRun(t, bad), checksRun(t, good); n != 1 || m != 1 {
		t.Errorf("checks run: %d of the failing interpreter, %d of the working one; want 1 each", n, m)
	}
}

func TestInstallHints(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	path := func(names ...string) func(string) bool {
		return func(n string) bool { return strings.Contains(" "+strings.Join(names, " ")+" ", " "+n+" ") }
	}
	for _, c := range []struct {
		name   string
		goos   string
		getenv func(string) string
		onPath func(string) bool
		want   []string // the start of each hint, in order
	}{
		{"macOS with brew and uv", "darwin", env(), path("brew", "uv"), []string{"brew:", "uv:", "pip (in a virtualenv):"}},
		{"macOS in a conda env", "darwin", env("CONDA_PREFIX", "/opt/miniconda3"), path("conda"), []string{"conda:", "brew:", "pip (in a virtualenv):"}},
		{"Debian", "linux", env(), path("apt-get"), []string{"apt (Debian/Ubuntu):", "pip (in a virtualenv):"}},
		{"Linux without apt, in a virtualenv", "linux", env("VIRTUAL_ENV", "/home/u/.venv"), path(), []string{"pip (into the active virtualenv):", "pip (in a virtualenv):"}},
		{"Windows", "windows", env(), path("conda"), []string{"conda:", `pip (in a virtualenv): py -m venv .venv && .venv\Scripts\pip`}},
	} {
		got := installHints(c.goos, c.getenv, c.onPath)
		ok := len(got) == len(c.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], c.want[i])
		}
		if !ok {
			t.Errorf("%s: hints %q, want ones starting %q", c.name, got, c.want)
		}
	}
}
