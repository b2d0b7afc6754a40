package wasmbuild

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute"
)

// TestModuleIsCachedByContent builds once (or finds the build in the user
// cache), then checks that an unchanged source finds the same file, and
// that the hash moves when a file the module is built from changes.
func TestModuleIsCachedByContent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the module (a minute after any change to the rules or the engine)")
	}
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

	// The source the binary carries, with one engine file changed, hashes
	// differently; a test file changed does not (the build skips it).
	base, err := embeddedHash(dlroute.ModuleSource)
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]bool{"engine/doc.go": true, "engine/load_test.go": false} {
		changed := fstest.MapFS{}
		if err := fs.WalkDir(dlroute.ModuleSource, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(dlroute.ModuleSource, p)
			if p == file {
				data = append(data, "\n// changed\n"...)
			}
			changed[p] = &fstest.MapFile{Data: data}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if after, err := embeddedHash(changed); err != nil || (after != base) != want {
			t.Errorf("changing %s: hash moved %v (%v), want %v", file, after != base, err, want)
		}
	}

	// The C library is built from the checkout, hashed by what go list says
	// the build reads.
	src, err := findSource(libdlroute)
	if err != nil {
		t.Fatal(err)
	}
	before, err := sourceHash(ctx, src, libdlroute)
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
	after, err := sourceHash(ctx, copyDir, libdlroute)
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
	if testing.Short() {
		t.Skip("-short: builds the module")
	}
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

// TestModuleSourceIsComplete: the source the binary carries for each
// module holds every file of this module that building it reads, as go
// list reports them for wasip1, so a new package or file a module
// imports cannot be left out of dlroute.ModuleSource unnoticed.
func TestModuleSourceIsComplete(t *testing.T) {
	src, err := findSource(libdlroute)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		target target
		name   string
		least  int
	}{{wasmModule, "dlroute.ModuleSource", 20}} {
		cmd := exec.Command("go", "list", "-deps", "-f", `{{if .Module}}{{if eq .Module.Path "`+ModulePath+`"}}{{range .GoFiles}}{{$.Dir}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$.Dir}}/{{.}}
{{end}}{{end}}{{end}}`, tt.target.pkg)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), tt.target.env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", tt.target.pkg, err)
		}
		have, err := buildFiles(tt.target.source)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"go.mod", "go.sum"}
		for _, f := range strings.Fields(string(out)) {
			rel, _ := filepath.Rel(src, f)
			want = append(want, filepath.ToSlash(rel))
		}
		for _, f := range want {
			if !slices.Contains(have, f) {
				t.Errorf("%s lacks %s, which the build of %s reads: add its pattern to the go:embed line in source.go", tt.name, f, tt.target.pkg)
			}
		}
		if len(want) < tt.least {
			t.Errorf("go list %s named only %d files: %v", tt.target.pkg, len(want), want)
		}
	}
}
