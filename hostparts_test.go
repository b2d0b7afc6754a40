package dlroute

import (
	"os/exec"
	"strings"
	"testing"
)

// debianPart is a program the full test run needs that no registry
// provides, with the Debian package that installs it.
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
	{"curl", "the README's operator path", onPath("curl")},
	{"python3-venv", "the Python tests' virtual environment", func() bool {
		return exec.Command("/usr/bin/python3", "-c", "import venv, ensurepip").Run() == nil
	}},
	{"python3-torch", "the Python tests on torch 1.13", func() bool {
		return exec.Command("/usr/bin/python3", "-c", "import torch").Run() == nil
	}},
}

// TestHostPartsInstalled names, in one line at the start of the full run
// (this package's tests run and print first), every part the run needs
// that it cannot install itself, with the command that installs them all.
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
	if len(missing) > 0 {
		t.Errorf("not installed: %s (for %s), so those tests skip: apt-get install -y %s; or run the quick loop, go test -short ./...",
			strings.Join(missing, ", "), strings.Join(whys, "; "), strings.Join(missing, " "))
	}
}
