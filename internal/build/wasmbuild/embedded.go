package wasmbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// buildFiles lists the files of src a build reads, in a stable order:
// go.mod, go.sum and every Go file that is not a test.
func buildFiles(src fs.FS) ([]string, error) {
	var files []string
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		base := path.Base(p)
		if base == "go.mod" || base == "go.sum" || strings.HasSuffix(base, ".go") && !strings.HasSuffix(base, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	return files, err // WalkDir visits in lexical order
}

// embeddedHash hashes the files of src a build reads, and the Go version
// that built this binary: the same source always finds the same cached
// module, and no other source does. It runs no command, so a cached
// module costs a start nothing but the hashing.
func embeddedHash(src fs.FS) (string, error) {
	files, err := buildFiles(src)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "embedded source, built by %s\n", runtime.Version())
	for _, f := range files {
		data, err := fs.ReadFile(src, f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// extract writes the files of src a build reads into a new directory under
// parent, for `go build` to run in, and returns it.
func extract(src fs.FS, parent string) (string, error) {
	dir, err := os.MkdirTemp(parent, "source-*")
	if err != nil {
		return "", err
	}
	files, err := buildFiles(src)
	if err != nil {
		return dir, err
	}
	for _, f := range files {
		data, err := fs.ReadFile(src, f)
		if err != nil {
			return dir, err
		}
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return dir, err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return dir, err
		}
	}
	return dir, nil
}
