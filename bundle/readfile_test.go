//go:build unix

package bundle_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dlroute/dlroute/bundle"
)

// TestReadFileRefuses is every file ReadFile must refuse before it reads
// a byte, and quickly: a named pipe with no writer and /dev/zero would
// block or never end.
func TestReadFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "rules.tar.gz")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	zero := filepath.Join(dir, "zero.tar.gz")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.tar.gz")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, bundle.MaxArchiveSize+1); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       bundle.Code
	}{
		{"named pipe", fifo, bundle.CodeNotRegular},
		{"link to /dev/zero", zero, bundle.CodeNotRegular},
		{"directory", dir, bundle.CodeNotRegular},
		{"over MaxArchiveSize", sparse, bundle.CodeTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := bundle.ReadFile(tt.path, bundle.ReadOptions{})
				done <- err
			}()
			select {
			case err := <-done:
				var e *bundle.Error
				if !errors.As(err, &e) || e.Code != tt.want || e.Path != tt.path {
					t.Errorf("ReadFile(%s) = %v; want code %s at %s", tt.name, err, tt.want, tt.path)
				}
			case <-time.After(time.Second):
				t.Fatalf("ReadFile(%s) still reading after a second", tt.name)
			}
		})
	}

	if _, err := bundle.ReadFile(filepath.Join(dir, "absent.tar.gz"), bundle.ReadOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(absent) = %v; want fs.ErrNotExist", err)
	}
	good := filepath.Join(dir, "good.tar.gz")
	os.WriteFile(good, build(t, bundle.BuildOptions{}), 0o644)
	if _, err := bundle.ReadFile(good, bundle.ReadOptions{}); err != nil {
		t.Errorf("ReadFile(good) = %v", err)
	}
}
