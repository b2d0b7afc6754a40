package rootfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/fsutil/rootfs"
)

// TestOpenStaysInside: a link that leads out of the folder, by an
// absolute path or by "..", is refused with outside_root and its target
// is not read; a link that stays inside is followed; a named pipe is
// refused as not regular, without blocking.
func TestOpenStaysInside(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yaml")
	if err := os.WriteFile(secret, []byte("secret: hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "rules")
	if err := os.MkdirAll(filepath.Join(dir, "jax", "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "jax", "v1", "rules.yaml"), []byte("rules: []\n"), 0o644)
	rel, _ := filepath.Rel(filepath.Join(dir, "jax", "v1"), secret)
	links := map[string]string{
		"jax/v1/absolute.yaml": secret,
		"jax/v1/climbs.yaml":   rel, // ../../../..../secret.yaml
		"jax/v1/inside.yaml":   "rules.yaml",
		"jax/v2":               outside, // a version folder that is elsewhere
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "jax", "v1", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"jax/v1/absolute.yaml", "jax/v1/climbs.yaml", "jax/v2/secret.yaml"} {
		data, err := fs.ReadFile(fsys, name)
		if !rootfs.IsOutside(err) || len(data) > 0 {
			t.Errorf("ReadFile(%s) = %q, %v; want nothing and %s", name, data, err, rootfs.CodeOutsideRoot)
		}
		if _, err := fs.Stat(fsys, name); !rootfs.IsOutside(err) {
			t.Errorf("Stat(%s) = %v; want %s", name, err, rootfs.CodeOutsideRoot)
		}
	}
	if _, err := fs.ReadDir(fsys, "jax/v2"); !rootfs.IsOutside(err) {
		t.Errorf("ReadDir(jax/v2) = %v; want %s", err, rootfs.CodeOutsideRoot)
	}
	if data, err := fs.ReadFile(fsys, "jax/v1/inside.yaml"); err != nil || string(data) != "rules: []\n" {
		t.Errorf("ReadFile(jax/v1/inside.yaml) = %q, %v; want the file it links to", data, err)
	}
	var e *engine.Error
	if _, err := fsys.Open("jax/v1/pipe"); !errors.As(err, &e) || e.Code != engine.CodeNotRegular {
		t.Errorf("Open(a named pipe) = %v; want %s", err, engine.CodeNotRegular)
	}
	// engine.Load reads it as any rules folder, and names the file.
	if _, err := engine.ReadFile(fsys, "jax/v1/climbs.yaml"); !rootfs.IsOutside(err) {
		t.Errorf("engine.ReadFile of the climbing link = %v; want %s", err, rootfs.CodeOutsideRoot)
	}
}
