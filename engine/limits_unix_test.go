//go:build unix

package engine_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// rulesDir writes jax@v3 to a folder and returns it, with the path of its
// tests.yaml.
func rulesDir(t *testing.T) (dir, tests string) {
	t.Helper()
	dir = t.TempDir()
	if err := ruletest.WriteDir(dir, versionFS(t, "v3")); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, "jax", "v3", "tests.yaml")
}

// replace puts a file of another kind where path is.
func replace(t *testing.T, path string, mk func(string) error) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := mk(path); err != nil {
		t.Fatal(err)
	}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// The kinds of file Load refuses without opening them for a read: each
// would block open() (a named pipe without a writer) or never end a read
// (/dev/zero), and each is refused as not a regular file, with a hint.
func TestLoadRefusesFilesThatAreNotRegular(t *testing.T) {
	tests := []struct {
		name string
		mk   func(string) error
	}{
		{"a named pipe", mkfifo},
		{"a link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"a link to a named pipe", func(p string) error {
			if err := mkfifo(p + ".pipe"); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(p)+".pipe", p)
		}},
		{"a folder", func(p string) error { return os.Mkdir(p, 0o755) }},
	}
	for _, tt := range tests {
		for _, via := range []struct {
			name string
			fs   func(string) fs.FS
		}{{"os.DirFS", os.DirFS}, {"engine.DirFS", engine.DirFS}} {
			t.Run(tt.name+" through "+via.name, func(t *testing.T) {
				dir, tests := rulesDir(t)
				replace(t, tests, tt.mk)
				err, alloc := loadBounded(t, via.fs(dir))
				e := refusedWith(t, err, engine.CodeNotRegular)
				if e.Pos == nil || e.Pos.File != "rules/jax/v3/tests.yaml" || e.Hint == "" {
					t.Errorf("refused at %v with hint %q, want rules/jax/v3/tests.yaml and a hint", e.Pos, e.Hint)
				}
				if alloc > 64<<20 {
					t.Errorf("Load allocated %d MiB, want under 64", alloc>>20)
				}
			})
		}
	}
}

// A sparse 100 MB file is refused from its size, without reading it.
func TestLoadRefusesALargeFileUnread(t *testing.T) {
	dir, tests := rulesDir(t)
	if err := os.Truncate(tests, 100<<20); err != nil {
		t.Fatal(err)
	}
	err, alloc := loadBounded(t, os.DirFS(dir))
	refusedWith(t, err, engine.CodeTooLong)
	if alloc > engine.MaxRuleFileSize {
		t.Errorf("Load allocated %d KiB refusing a 100 MB file, want less than the file limit: it was read", alloc>>10)
	}
}

// DirFS opens folders and regular files, and refuses every other kind
// with CodeNotRegular, at once.
func TestDirFSOpensOnlyRegularFiles(t *testing.T) {
	dir, tests := rulesDir(t)
	if err := fstest.TestFS(engine.DirFS(dir), "jax/v3/rules.yaml", "jax/v3/tests.yaml"); err != nil {
		t.Fatal(err)
	}
	v3 := filepath.Dir(tests)
	if err := mkfifo(filepath.Join(v3, "pipe")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", filepath.Join(v3, "null")); err != nil {
		t.Fatal(err)
	}
	// A socket's path must be short: the folder is one of its own.
	sockDir, err := os.MkdirTemp("", "sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	l, err := net.Listen("unix", filepath.Join(sockDir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fsys := engine.DirFS(dir)
	for _, name := range []string{"jax/v3/pipe", "jax/v3/null"} {
		refusedOpen(t, fsys, name)
	}
	refusedOpen(t, engine.DirFS(sockDir), "s")
	if _, err := fs.ReadFile(fsys, "jax/v3/pipe"); err == nil {
		t.Errorf("fs.ReadFile(DirFS, a pipe) succeeded")
	}
}

func refusedOpen(t *testing.T, fsys fs.FS, name string) {
	t.Helper()
	f, err := fsys.Open(name)
	if err == nil {
		f.Close()
		t.Errorf("Open(%s) succeeded, want it refused as not a regular file", name)
		return
	}
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.CodeNotRegular || !strings.Contains(err.Error(), name) {
		t.Errorf("Open(%s) = %v, want an error naming it with code %s", name, err, engine.CodeNotRegular)
	}
}

// DirFS reads a folder as os.DirFS does, but refuses, without blocking,
// to open what is not a regular file or a folder.
func ExampleDirFS() {
	dir, err := os.MkdirTemp("", "rules")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644)
	syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644)

	fsys := engine.DirFS(dir)
	data, err := fs.ReadFile(fsys, "notes.txt")
	fmt.Println(string(data), err)
	_, err = fsys.Open("pipe") // os.DirFS would wait here for a writer
	fmt.Println(engine.Errors(err)[0].Code)
	// Output:
	// hello <nil>
	// not_regular
}
