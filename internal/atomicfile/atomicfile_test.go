package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dlroute/dlroute/internal/atomicfile"
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
