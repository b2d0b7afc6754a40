package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// TestBundleBuildRefusesNonRegular: `bundle build` over a folder whose
// tests.yaml is a named pipe, or a link to /dev/zero (outside the
// folder), says so at once
// instead of blocking in open(2) or reading for ever.
func TestBundleBuildRefusesNonRegular(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(path string) error
		want string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "named pipe"},
		{"dev-zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "leads outside the rules folder"}, // refused before its kind is looked at
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := ruletest.WriteDir(dir, ruletest.Rules()); err != nil {
				t.Fatal(err)
			}
			tests := filepath.Join(dir, "jax", "v3", "tests.yaml")
			os.Remove(tests)
			if err := c.make(tests); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var stderr bytes.Buffer
			var status int
			go func() {
				defer close(done)
				status = run([]string{"bundle", "build", dir, "-o", filepath.Join(t.TempDir(), "b.tar.gz")}, nil, new(bytes.Buffer), &stderr)
			}()
			select {
			case <-done:
			case <-time.After(testenv.Patience(t)):
				t.Fatal("bundle build had not returned when the test's time ran out")
			}
			if status != 1 || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("bundle build: status %d, stderr %q; want 1 and %q", status, stderr.String(), c.want)
			}
		})
	}
}

// TestRulesDirStaysInside: `--rules DIR` and `bundle build DIR` refuse a
// link out of the folder with outside_root, and never read its target.
func TestRulesDirStaysInside(t *testing.T) {
	const secret = "hunter2-0xSECRET"
	outside := filepath.Join(t.TempDir(), "credentials.yaml")
	if err := os.WriteFile(outside, []byte("password: "+secret+"\n  : ["), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := ruletest.WriteDir(dir, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	tests := filepath.Join(dir, "jax", "v3", "tests.yaml")
	os.Remove(tests)
	if err := os.Symlink(outside, tests); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"lint", "--rules", dir},
		{"test", "--rules", dir},
		{"bundle", "build", dir, "-o", filepath.Join(t.TempDir(), "b.tar.gz")},
	} {
		var stdout, stderr bytes.Buffer
		status := run(args, nil, &stdout, &stderr)
		if status != 1 || !strings.Contains(stdout.String()+stderr.String(), "outside") || strings.Contains(stdout.String()+stderr.String(), secret) {
			t.Errorf("dlroute %s: status %d\n%s%s; want 1, the link refused as leading outside, and the file unread", strings.Join(args, " "), status, stdout.String(), stderr.String())
		}
	}
}
