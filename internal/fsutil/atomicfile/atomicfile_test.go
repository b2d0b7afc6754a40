package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/fsutil/atomicfile"
)

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := atomicfile.WriteFile(path, 0o640, []byte("new")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	info, err := os.Stat(path)
	if err != nil || string(data) != "new" || info.Mode().Perm() != 0o640 {
		t.Errorf("got %q, %v, %v; want \"new\" with mode 0640", data, info.Mode(), err)
	}
}

// A write that fails half way leaves the old file and no temporary one.
func TestWriteFailing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	os.WriteFile(path, []byte("old"), 0o644)
	boom := errors.New("boom")
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		w.Write([]byte("ne"))
		return boom
	})
	data, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if !errors.Is(err, boom) || string(data) != "old" || len(entries) != 1 {
		t.Errorf("err %v, file %q, %d entries; want boom, \"old\", 1 entry", err, data, len(entries))
	}
}

// RemoveStale removes what a killed Write left, once it is StaleAfter
// old, and nothing else.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "last-good.tar.gz")
	now := time.Now()
	old := now.Add(-atomicfile.StaleAfter - time.Second)
	files := map[string]time.Time{
		".last-good.tar.gz.dlroute-123456.tmp":    old, // left by a kill -9: removed
		".last-good.tar.gz.dlroute-987.tmp":       now, // a write in progress: kept
		".last-good.tar.gz.dlroute-12ab.tmp":      old, // not a name Write gives
		".other.tar.gz.dlroute-123456.tmp":        old, // another file's
		"12345.tmp":                               old, // an unrelated file of digits
		".last-good.tar.gz.123456.tmp":            old, // another tool's ".name.*.tmp"
		"last-good.tar.gz":                        old,
		".last-good.tar.gz.dlroute-.tmp":          old,
		".last-good.tar.gz.tmp":                   old,
		"last-good.tar.gz.dlroute-123456.tmp":     old,
		".last-good.tar.gz.dlroute-123456.tmp.gz": old,
	}
	for name, mtime := range files {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("x"), 0o600)
		os.Chtimes(p, mtime, mtime)
	}
	folder := filepath.Join(dir, ".last-good.tar.gz.dlroute-55.tmp") // a folder: not Write's
	os.Mkdir(folder, 0o700)
	os.Chtimes(folder, old, old)

	removed, err := atomicfile.RemoveStale(path, now)
	want := []string{filepath.Join(dir, ".last-good.tar.gz.dlroute-123456.tmp")}
	if err != nil || !slices.Equal(removed, want) {
		t.Errorf("RemoveStale = %v, %v; want %v", removed, err, want)
	}
	for name := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := errors.Is(err, os.ErrNotExist); gone != slices.Contains(want, filepath.Join(dir, name)) {
			t.Errorf("after RemoveStale, %s: %v", name, err)
		}
	}
	if removed, err := atomicfile.RemoveStale(filepath.Join(dir, "absent", "f"), now); removed != nil || err != nil {
		t.Errorf("RemoveStale in a folder that does not exist = %v, %v; want nothing", removed, err)
	}
}

// The name Write gives its temporary file is one RemoveStale takes, once
// it is old: the two agree on the scheme, whatever it is.
func TestRemoveStaleTakesWritesTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kept.tar.gz")
	var temp string
	var removed []string
	err := atomicfile.Write(path, 0o600, func(w io.Writer) error {
		temp = w.(interface{ Name() string }).Name()
		old := time.Now().Add(-atomicfile.StaleAfter - time.Second)
		os.Chtimes(temp, old, old) // as if the writer had been killed here long ago
		var err error
		removed, err = atomicfile.RemoveStale(path, time.Now())
		return err
	})
	if !slices.Equal(removed, []string{temp}) {
		t.Errorf("RemoveStale during Write removed %v; want Write's temporary %s", removed, temp)
	}
	if err == nil {
		t.Errorf("Write whose temporary was removed = nil; want the rename's error")
	}
}
