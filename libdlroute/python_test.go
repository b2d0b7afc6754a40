package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/ctest"
	"github.com/dlroute/dlroute/internal/testenv"
	"github.com/dlroute/dlroute/internal/wasmbuild"
)

// A pythonStack is one interpreter and the pinned requirements the Python
// tests run on: a virtual environment of base with requirements installed.
type pythonStack struct {
	name         string
	requirements string // relative to the repository root
	// base finds the interpreter, or says what is missing and how to
	// install it.
	base func() (python, missing string)
	// systemSite lets the environment see base's own packages (Debian's
	// python3-torch).
	systemSite bool
	// uv installs the requirements with uv (pinned, installed by pip
	// first): the multi-GB torch install is faster (RATIONALE.md, "Why
	// does the Python 3.12 stack install with uv?").
	uv bool
}

// uvRequirement is the uv that installs the 3.12 stack.
const uvRequirement = "uv==0.9.5"

var pythonStacks = []pythonStack{
	{
		name:         "py3.11-debian",
		requirements: "python/requirements-py311.txt",
		base:         debianPython,
		systemSite:   true,
	},
	{
		name:         "py3.12-pypi",
		requirements: "python/requirements-py312.txt",
		base:         pyenvPython("3.12"),
		uv:           true,
	},
}

// TestPython runs the Python package's tests (python/tests) with pytest
// and the conformance runner (`python -m dlroute check`), over the library
// built from this checkout, on each stack: Debian's Python 3.11 with its
// torch 1.13, jax 0.10.2 and numpy 2.4.6; and pyenv's Python 3.12 with
// PyPI's numpy, jax and torch of today. Each stack's virtual environment is
// made once in the user cache directory and kept by a hash of its
// requirements. $DLROUTE_PYTHON names one interpreter to run instead.
func TestPython(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Python tests take minutes")
	}
	lib := filepath.Join(ctest.Library(t), "libdlroute.so")
	if p := os.Getenv("DLROUTE_PYTHON"); p != "" {
		runPythonTests(t, p, lib)
		return
	}
	for _, s := range pythonStacks {
		t.Run(s.name, func(t *testing.T) {
			runPythonTests(t, venvFor(t, s), lib)
		})
	}
}

func runPythonTests(t *testing.T, python, lib string) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	env := append(os.Environ(), wasmbuild.EnvLibrary+"="+lib, "PYTHONPATH=python", "PYTHONDONTWRITEBYTECODE=1")
	for _, args := range [][]string{
		{"-m", "pytest", "-q", "-p", "no:cacheprovider", "python/tests"},
		{"-m", "dlroute", "check"},
	} {
		cmd := exec.CommandContext(ctx, python, args...)
		cmd.Dir = ".."
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		t.Logf("%s:\n%s", strings.Join(args[1:], " "), out)
		if ctx.Err() != nil {
			t.Fatalf("%s ran past 15 minutes", args[1])
		}
		if err != nil {
			t.Fatalf("%s %s: %v", python, strings.Join(args, " "), err)
		}
	}
}

// venvFor returns the interpreter of s's virtual environment, making it
// on first use (once per change of its requirements).
func venvFor(t *testing.T, s pythonStack) string {
	t.Helper()
	base, missing := s.base()
	if missing != "" {
		testenv.Missing(t, missing)
	}
	reqs, err := os.ReadFile(filepath.Join("..", s.requirements))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append([]byte(base+"\n"+uvRequirement+"\n"), reqs...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	venv := filepath.Join(cache, "dlroute", "venv-"+s.name+"-"+hex.EncodeToString(sum[:])[:16])
	python := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(filepath.Join(venv, ".complete")); err == nil {
		return python
	}
	t.Logf("making %s (once per change of %s)", venv, s.requirements)
	os.RemoveAll(venv)
	mk := []string{base, "-m", "venv"}
	if s.systemSite {
		mk = append(mk, "--system-site-packages")
	}
	steps := [][]string{append(mk, venv)}
	req := filepath.Join("..", s.requirements)
	if s.uv {
		steps = append(steps,
			[]string{python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", uvRequirement},
			[]string{filepath.Join(venv, "bin", "uv"), "pip", "install", "--quiet", "--python", python, "-r", req})
	} else {
		steps = append(steps, []string{python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", req})
	}
	for _, args := range steps {
		start := time.Now()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		t.Logf("%s: %s", strings.Join(args[:3], " "), time.Since(start).Round(time.Second))
	}
	if err := os.WriteFile(filepath.Join(venv, ".complete"), reqs, 0o644); err != nil {
		t.Fatal(err)
	}
	return python
}

// debianPython is Debian's /usr/bin/python3 where it sees python3-torch.
func debianPython() (string, string) {
	base := "/usr/bin/python3"
	if _, err := os.Stat(base); err != nil {
		return "", "no /usr/bin/python3, so the Python 3.11 stack does not run (apt-get install -y python3 python3-venv python3-torch)"
	}
	if exec.Command(base, "-c", "import torch, venv").Run() != nil {
		return "", "/usr/bin/python3 lacks torch or venv, so the Python 3.11 stack does not run (apt-get install -y python3-venv python3-torch)"
	}
	return base, ""
}

// pyenvPython finds pyenv's interpreter of a minor version: `pyenv prefix`,
// else the newest ~/.pyenv/versions/<minor>.*.
func pyenvPython(minor string) func() (string, string) {
	return func() (string, string) {
		if out, err := exec.Command("pyenv", "prefix", minor).Output(); err == nil {
			p := filepath.Join(strings.TrimSpace(string(out)), "bin", "python")
			if _, err := os.Stat(p); err == nil {
				return p, ""
			}
		}
		home, _ := os.UserHomeDir()
		found, _ := filepath.Glob(filepath.Join(home, ".pyenv", "versions", minor+".*", "bin", "python"))
		if len(found) == 0 {
			return "", "no Python " + minor + " (pyenv install " + minor + "), so the Python " + minor + " stack does not run"
		}
		sort.Slice(found, func(i, j int) bool { return newerPatch(found[i], found[j]) })
		return found[0], ""
	}
}

// newerPatch orders .../3.12.10/bin/python before .../3.12.9/bin/python.
func newerPatch(a, b string) bool {
	pa, pb := filepath.Base(filepath.Dir(filepath.Dir(a))), filepath.Base(filepath.Dir(filepath.Dir(b)))
	na, nb := strings.Split(pa, "."), strings.Split(pb, ".")
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			if len(na[i]) != len(nb[i]) {
				return len(na[i]) > len(nb[i])
			}
			return na[i] > nb[i]
		}
	}
	return len(na) > len(nb)
}
