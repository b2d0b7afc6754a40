package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// debianPart is a program the e2e tier needs that no registry provides,
// with the Debian package that installs it.
type debianPart struct {
	pkg, why string
	present  func() bool
}

func onPath(names ...string) func() bool {
	return func() bool {
		for _, name := range names {
			if _, err := exec.LookPath(name); err == nil {
				return true
			}
		}
		return false
	}
}

var debianParts = []debianPart{
	{"chromium", "the playground's browser tests", onPath("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")},
	{"nodejs", "the Node.js package, the page's modules, ESLint and tsc", onPath("node")},
	{"npm", "installing tsc, ESLint and axe-core", onPath("npm")},
	{"gcc", "the C library's tests", onPath("gcc")},
	{"git", "the README's commands", onPath("git")},
	{"curl", "the operator's path (docs/operating.md)", onPath("curl")},
	{"python3-venv", "the Python tests' virtual environment", func() bool {
		return exec.Command("/usr/bin/python3", "-c", "import venv, ensurepip").Run() == nil
	}},
	{"python3-torch", "the Python tests on torch 1.13", func() bool {
		return exec.Command("/usr/bin/python3", "-c", "import torch").Run() == nil
	}},
}

// python312 finds the Python 3.12 that the Python tests' second stack
// runs on as libdlroute's harness does: pyenv's.
func python312() bool {
	if exec.Command("pyenv", "prefix", "3.12").Run() == nil {
		return true
	}
	home, _ := os.UserHomeDir()
	found, _ := filepath.Glob(filepath.Join(home, ".pyenv", "versions", "3.12.*", "bin", "python"))
	return len(found) > 0
}

// TestHostPartsInstalled names, in one line at the start of the e2e tier
// (this package's tests run and print first), every part the tier needs
// that it cannot install itself, with the commands that install them.
// Without them the tests that use them skip, and CI fails them; what a
// registry provides (the npm tools, the Python packages) the tests that
// use it install. The quick loop (-short) runs no host and needs none.
func TestHostPartsInstalled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short runs no host")
	}
	var missing, whys []string
	for _, p := range debianParts {
		if !p.present() {
			missing = append(missing, p.pkg)
			whys = append(whys, p.why)
		}
	}
	var install []string
	if len(missing) > 0 {
		install = append(install, "apt-get install -y "+strings.Join(missing, " "))
	}
	if !python312() {
		missing = append(missing, "Python 3.12")
		whys = append(whys, "the Python tests on numpy 2.5.5, jax 0.12.0.1 and torch 2.15.0")
		install = append(install, "pyenv install 3.12")
	}
	if len(missing) > 0 {
		t.Errorf("not installed: %s (for %s), so those tests skip: %s; or run the quick loop, go test -short ./...",
			strings.Join(missing, ", "), strings.Join(whys, "; "), strings.Join(install, " and "))
	}
}
