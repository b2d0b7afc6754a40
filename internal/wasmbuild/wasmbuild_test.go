package wasmbuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleIsCachedByContent builds once (or finds the build in the user
// cache), then checks that an unchanged source finds the same file, and
// that the hash moves when a file the module is built from changes.
func TestModuleIsCachedByContent(t *testing.T) {
	ctx := context.Background()
	var progress strings.Builder
	data, path, err := Module(ctx, Options{Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 1<<20 || string(data[:4]) != "\x00asm" {
		t.Fatalf("%s is not a WebAssembly module (%d bytes)", path, len(data))
	}
	_, again, err := Module(ctx, Options{Progress: &progress})
	if err != nil || again != path {
		t.Fatalf("an unchanged source gave %s (%v), want the cached %s", again, err, path)
	}
	if strings.Count(progress.String(), "building") > 1 {
		t.Errorf("built twice for one source:\n%s", progress.String())
	}

	src, err := findSource()
	if err != nil {
		t.Fatal(err)
	}
	before, err := sourceHash(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	// A copy of the checkout with one engine file changed hashes differently.
	copyDir := t.TempDir()
	if err := os.CopyFS(copyDir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(copyDir, "engine", "doc.go")
	old, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, append(old, "\n// changed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	after, err := sourceHash(ctx, copyDir)
	if err != nil {
		t.Fatal(err)
	}
	if before == after {
		t.Errorf("changing engine/doc.go left the source hash at %s", before)
	}
}

func TestModuleFromEnv(t *testing.T) {
	t.Setenv(EnvModule, filepath.Join(t.TempDir(), "missing.wasm"))
	if _, _, err := Module(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), EnvModule) {
		t.Fatalf("a missing $%s file: error %v, want one naming the variable", EnvModule, err)
	}
}
