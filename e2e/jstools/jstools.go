// Package jstools finds the JavaScript tools the tests use (tsc, ESLint,
// axe-core), which _npm/package.json pins, and lints the repository's
// JavaScript (TestLint). The first test that needs them installs them
// with `npm ci --prefix e2e/jstools/_npm` (once, then kept until
// package-lock.json changes), as the Python tests make their own virtual
// environment: the README's test command does every set-up a registry can
// provide. They are test tools only: nothing dlroute ships needs them.
// The folder's name starts with "_" so that the go command never reads
// what npm installs there (npm packages can hold Go files).
package jstools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// Dir is the directory of package.json, found from this file's source path.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "_npm")
}

// installed is the file npm ci's run writes last: package-lock.json's
// bytes as they were installed, so a changed lock installs again.
const installed = "node_modules/.dlroute-installed"

// Path returns the installed file at rel under node_modules (for example
// ".bin/tsc" or "axe-core/axe.min.js"), installing the tools first if
// they are not installed from the current package-lock.json. Without npm,
// or when the install fails, it skips t (fails it under CI) saying why.
func Path(t testing.TB, rel string) string {
	t.Helper()
	if err := install(); err != nil {
		testenv.Missing(t, err.Error())
	}
	p := filepath.Join(Dir(), "node_modules", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("npm ci --prefix e2e/jstools/_npm installed no %s: is it in package.json?", rel)
	}
	return p
}

// install runs npm ci unless the tools are installed from today's lock.
// Test binaries of several packages run at once, so it holds an exclusive
// lock on the folder while it looks and installs: the second waits, then
// finds the tools there.
func install() error {
	dir := Dir()
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	if done, err := os.ReadFile(filepath.Join(dir, installed)); err == nil && bytes.Equal(done, lock) {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if done, err := os.ReadFile(filepath.Join(dir, installed)); err == nil && bytes.Equal(done, lock) {
		return nil // installed while this one waited
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return fmt.Errorf("no npm to install tsc, ESLint and axe-core with (apt-get install -y npm)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "ci", "--prefix", dir, "--no-audit", "--no-fund").CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci --prefix e2e/jstools/_npm, to install tsc, ESLint and axe-core, failed (%v):\n%s", err, out)
	}
	return os.WriteFile(filepath.Join(dir, installed), lock, 0o644)
}
