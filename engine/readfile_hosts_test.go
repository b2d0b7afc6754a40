package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dlroute/dlroute/engine"
)

// TestReadFile: what hosts read of a rules directory they hand on, they
// read as Load does.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte("a: 1\n"), 0o644)
	syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o644)
	big, _ := os.Create(filepath.Join(dir, "big.yaml"))
	big.Truncate(engine.MaxRuleFileSize + 1)
	big.Close()
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml"))
	fsys := os.DirFS(dir) // read as engine.DirFS: nothing blocks
	if data, err := engine.ReadFile(fsys, "ok.yaml"); err != nil || string(data) != "a: 1\n" {
		t.Errorf("ReadFile(ok.yaml) = %q, %v", data, err)
	}
	for name, code := range map[string]engine.Code{"pipe.yaml": engine.CodeNotRegular, "zero.yaml": engine.CodeNotRegular, "big.yaml": engine.CodeTooLong, "none.yaml": engine.CodeMissingFile} {
		_, err := engine.ReadFile(fsys, name)
		list := engine.Errors(err)
		if len(list) != 1 || list[0].Code != code || list[0].Pos == nil || !strings.HasSuffix(list[0].Pos.File, name) {
			t.Errorf("ReadFile(%s) = %v, want %s at %s", name, err, code, name)
		}
	}
}
