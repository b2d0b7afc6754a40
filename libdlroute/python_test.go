package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/ctest"
	"github.com/dlroute/dlroute/internal/testenv"
	"github.com/dlroute/dlroute/internal/wasmbuild"
)

// TestPython runs the Python package's tests (python/tests) with pytest,
// on real jax, numpy and torch, over the library built from this
// checkout. The interpreter is $DLROUTE_PYTHON, or a virtual environment
// of Debian's /usr/bin/python3 (which sees Debian's CPU build of torch,
// python3-torch) with python/requirements-test.txt installed, made once
// in the user cache directory and kept by a hash of the requirements.
func TestPython(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Python tests take a minute")
	}
	python := pythonForTests(t)
	lib := filepath.Join(ctest.Library(t), "libdlroute.so")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "python/tests")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), wasmbuild.EnvLibrary+"="+lib, "PYTHONPATH=python", "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("pytest:\n%s", out)
	if ctx.Err() != nil {
		t.Fatal("pytest ran past 15 minutes")
	}
	if err != nil {
		t.Fatalf("pytest: %v", err)
	}
}

// pythonForTests returns an interpreter with the test requirements, making
// the virtual environment on first use.
func pythonForTests(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DLROUTE_PYTHON"); p != "" {
		return p
	}
	base := "/usr/bin/python3"
	if _, err := os.Stat(base); err != nil {
		testenv.Missing(t, "no /usr/bin/python3, so the Python tests do not run (apt-get install -y python3 python3-venv python3-torch)")
	}
	if exec.Command(base, "-c", "import torch, venv").Run() != nil {
		testenv.Missing(t, "/usr/bin/python3 lacks torch or venv, so the Python tests do not run (apt-get install -y python3-venv python3-torch)")
	}
	reqs, err := os.ReadFile("../python/requirements-test.txt")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(reqs)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	venv := filepath.Join(cache, "dlroute", "venv-"+hex.EncodeToString(sum[:])[:16])
	python := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(filepath.Join(venv, ".complete")); err == nil {
		return python
	}
	t.Logf("making %s (once per change of python/requirements-test.txt)", venv)
	os.RemoveAll(venv)
	for _, args := range [][]string{
		{base, "-m", "venv", "--system-site-packages", venv},
		{python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", "../python/requirements-test.txt"},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(venv, ".complete"), reqs, 0o644); err != nil {
		t.Fatal(err)
	}
	return python
}
