package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/ruletest"
)

// TestBundleBuildRefusesNonRegular: `bundle build` over a folder whose
// tests.yaml is a named pipe, or a link to /dev/zero, says so at once
// instead of blocking in open(2) or reading for ever.
func TestBundleBuildRefusesNonRegular(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(path string) error
		want string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "named pipe"},
		{"dev-zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "not a regular file"},
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
			case <-time.After(30 * time.Second):
				t.Fatal("bundle build did not return in 30 s")
			}
			if status != 1 || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("bundle build: status %d, stderr %q; want 1 and %q", status, stderr.String(), c.want)
			}
		})
	}
}
