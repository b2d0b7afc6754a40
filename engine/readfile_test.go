//go:build unix

package engine

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A named pipe swapped in after Open's Stat is opened without blocking
// and refused by the check of what was opened.
func TestDirFSChecksWhatItOpened(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := DirFS(dir).(dirFS).openChecked("pipe")
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeNotRegular {
			t.Fatalf("openChecked(a named pipe) = %v, want %s", err, CodeNotRegular)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("openChecked(a named pipe) has not returned after 5 s")
	}
}
