// Package wasmbuild gives hosts the dlroute WebAssembly module, built on
// first use from the source this binary carries (the root package's
// ModuleSource) and cached by a hash of everything the build reads, so a
// stale module is never served, a binary built anywhere runs from any
// directory, and the README's commands need no separate build step. The C
// library, which only the tests and the Python package's own build use, is
// built from the checkout around the working directory.
// internal/build/wasmbuild/RATIONALE.md says why the module is built rather than
// checked in, and the root RATIONALE.md why it travels as source.
package wasmbuild

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dlroute/dlroute"
)

// ModulePath is the Go module whose ./wasm package is built.
const ModulePath = "github.com/dlroute/dlroute"

// EnvModule names a prebuilt module file that Module uses instead of
// building, for machines without the source or a Go toolchain.
const EnvModule = "DLROUTE_WASM"

// Options configure Module. The zero value builds from the checkout around
// the working directory into the user cache directory.
type Options struct {
	// SourceDir is the root of a dlroute checkout to build from; empty
	// means the source this binary carries (dlroute.ModuleSource) for the
	// module, and for the C library the nearest directory above the
	// working directory whose go.mod is ModulePath.
	SourceDir string
	// CacheDir holds built modules by hash; empty means
	// os.UserCacheDir()/dlroute/wasm, or the temporary directory when there
	// is no user cache directory.
	CacheDir string
	// Progress, when set, gets a line before a build, which takes a minute.
	Progress io.Writer
}

// Module returns the module's bytes and the path they were read from: the
// file named by $DLROUTE_WASM, or the cached build for the current source,
// building it first when it is missing.
func Module(ctx context.Context, opts Options) ([]byte, string, error) {
	path, err := build(ctx, opts, wasmModule)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(path)
	if err != nil && os.Getenv(EnvModule) != "" {
		err = fmt.Errorf("reading the module named by $%s: %w", EnvModule, err)
	}
	return data, path, err
}

// target is one artifact built from the checkout: the package, the
// environment it is built for, and where it is cached.
type target struct {
	what   string   // "the WebAssembly module", for messages
	pkg    string   // "./wasm"
	env    []string // GOOS, GOARCH, CGO_ENABLED
	envVar string   // names a prebuilt file used instead
	subdir string   // of the user cache directory
	base   string   // of a build's file name: base, the hash, ext
	ext    string   // ".wasm"
	source fs.FS    // the source this binary carries; nil: the checkout's
}

var wasmModule = target{
	what: "the WebAssembly module", pkg: "./wasm", env: []string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0"},
	envVar: EnvModule, subdir: "wasm", base: "dlroute-", ext: ".wasm", source: dlroute.ModuleSource,
}

// build returns the path of t built from the checkout: the file named by
// t.envVar, or the cached build for the current source, built first when
// it is missing.
func build(ctx context.Context, opts Options, t target) (string, error) {
	if p := os.Getenv(t.envVar); p != "" {
		return p, nil
	}
	src := opts.SourceDir
	embedded := src == "" && t.source != nil
	var hash string
	var err error
	if embedded {
		hash, err = embeddedHash(t.source)
	} else {
		if src == "" {
			if src, err = findSource(t); err != nil {
				return "", err
			}
		}
		hash, err = sourceHash(ctx, src, t)
	}
	if err != nil {
		return "", err
	}
	cache := opts.CacheDir
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir() // no $HOME, as in some CI jobs
		}
		cache = filepath.Join(dir, "dlroute", t.subdir)
	}
	path := filepath.Join(cache, t.base+hash[:16]+t.ext)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		return path, nil
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("building %s needs the Go toolchain, and there is no go on $PATH; install Go (the module is built once, then cached), or set $%s to a built one", t.what, t.envVar)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	if embedded {
		if src, err = extract(t.source, cache); err != nil {
			os.RemoveAll(src)
			return "", fmt.Errorf("writing the source of %s: %w", t.what, err)
		}
		defer os.RemoveAll(src)
	}
	if opts.Progress != nil {
		from := src
		if embedded {
			from = "the source inside this binary"
		}
		fmt.Fprintf(opts.Progress, "building %s from %s (once per source change, about a minute)...\n", t.what, from)
	}
	tmp, err := os.CreateTemp(cache, "build-*"+t.ext)
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	defer os.Remove(strings.TrimSuffix(tmp.Name(), t.ext) + ".h") // a C library's header, beside it
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildmode=c-shared", "-o", tmp.Name(), t.pkg)
	cmd.Dir = src
	// GOWORK and GOFLAGS of the caller's own projects must not reach a
	// build of this module's pinned go.mod and go.sum.
	cmd.Env = append(os.Environ(), append(t.env, "GOWORK=off", "GOFLAGS=-mod=readonly")...)
	stop := Still(opts.Progress, "building "+t.what)
	out, err := cmd.CombinedOutput()
	stop()
	if err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", t.what, err, out)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	prune(cache, t.base, t.ext, keepBuilds)
	return path, nil
}

// keepBuilds is how many built modules the cache keeps, newest first: a
// few, for switching between branches, but not one per edit forever.
const keepBuilds = 3

func prune(cache, base, ext string, keep int) {
	matches, _ := filepath.Glob(filepath.Join(cache, base+"*"+ext))
	type built struct {
		path string
		mod  int64
	}
	var all []built
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil {
			all = append(all, built{m, st.ModTime().UnixNano()})
		}
	}
	slices.SortFunc(all, func(a, b built) int { return cmp.Compare(b.mod, a.mod) })
	for i := keep; i < len(all); i++ {
		os.Remove(all[i].path)
	}
	// Gzipped's files, whose module is gone (pruned here, or by a build
	// that did not know of them).
	gzipped, _ := filepath.Glob(filepath.Join(cache, "dlroute-*.wasm.gz"))
	for _, gz := range gzipped {
		if _, err := os.Stat(strings.TrimSuffix(gz, ".gz")); errors.Is(err, fs.ErrNotExist) {
			os.Remove(gz)
		}
	}
}

// findSource walks up from the working directory to the dlroute checkout.
func findSource(t target) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module "+ModulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no dlroute source above the working directory to build %s from; set $%s to a built one", t.what, t.envVar)
		}
		dir = parent
	}
}

// sourceHash hashes what the build reads: the Go version, go.mod, go.sum
// (which pins every dependency) and every file of this module's packages
// that the target's package imports, as `go list` reports them for its
// platform (with their C files, for the C library).
func sourceHash(ctx context.Context, src string, t target) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-json=Dir,Module,GoFiles,CgoFiles,CFiles,HFiles,EmbedFiles", t.pkg)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), t.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %w: %s", t.pkg, err, stderr.String())
	}
	version, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "go %s %s %s\n", strings.TrimSpace(string(version)), t.pkg, strings.Join(t.env, " "))
	files := []string{filepath.Join(src, "go.mod"), filepath.Join(src, "go.sum")}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var pkg struct {
			Dir               string
			Module            *struct{ Path string }
			GoFiles, CgoFiles []string
			CFiles, HFiles    []string
			EmbedFiles        []string
		}
		if err := dec.Decode(&pkg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", err
		}
		if pkg.Module == nil || pkg.Module.Path != ModulePath {
			continue // the standard library and dependencies: pinned by version and go.sum
		}
		for _, f := range slices.Concat(pkg.GoFiles, pkg.CgoFiles, pkg.CFiles, pkg.HFiles, pkg.EmbedFiles) {
			files = append(files, filepath.Join(pkg.Dir, f))
		}
	}
	slices.Sort(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(src, f)
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
