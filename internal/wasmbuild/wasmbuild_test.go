package wasmbuild

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
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

	src, err := findSource(wasmModule)
	if err != nil {
		t.Fatal(err)
	}
	before, err := sourceHash(ctx, src, wasmModule)
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
	after, err := sourceHash(ctx, copyDir, wasmModule)
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

// TestGzippedIsCachedBesideTheModule compresses the module once and then
// reads the compressed form from the cache.
func TestGzippedIsCachedBesideTheModule(t *testing.T) {
	if os.Getenv(EnvModule) != "" {
		t.Skipf("$%s names the module: Gzipped does not cache", EnvModule)
	}
	ctx := context.Background()
	module, gz, err := Gzipped(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, path, _ := Module(ctx, Options{})
	cached, err := os.ReadFile(path + ".gz")
	if err != nil || !bytes.Equal(cached, gz) {
		t.Fatalf("the compressed module is not cached at %s.gz (%v)", path, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.Equal(plain, module) || len(gz) > len(module)/3 {
		t.Errorf("the compressed module (%d bytes) is not the module (%d bytes), compressed", len(gz), len(module))
	}
	// A cache file of another module, or a broken one, is not used.
	sum := sha256.Sum256(module)
	if id := gzipOf(gz); id != fmt.Sprintf("sha256:%s level %d", hex.EncodeToString(sum[:]), GzipLevel) {
		t.Errorf("the compressed module says it is %q", id)
	}
	if id := gzipOf([]byte("stale")); id != "" {
		t.Errorf("a file that is not gzip says it is %q", id)
	}
}

// TestLibraryLeavesOnlyTheBuild: building the C library into the cache
// leaves the library and nothing else (cgo writes a header beside it).
func TestLibraryLeavesOnlyTheBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the C library")
	}
	if os.Getenv(EnvLibrary) != "" {
		t.Skipf("$%s names the library: nothing is built", EnvLibrary)
	}
	cache := t.TempDir()
	path, err := Library(context.Background(), Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 || filepath.Join(cache, entries[0].Name()) != path {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the cache holds %v; want only %s", names, filepath.Base(path))
	}
}
