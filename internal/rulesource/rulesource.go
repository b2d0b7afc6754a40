// Package rulesource opens rules as the command line's --rules names
// them, for every host that takes such a path (the command line, the C
// library): the embedded rules, a rules directory, or a bundle file.
package rulesource

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/fsutil/rootfs"
	"github.com/dlroute/dlroute/rules"
)

// Open returns the embedded rules when path is "", else the rules at
// path: a directory (read as engine.DirFS reads it: regular files only,
// never blocking; and nothing outside it, rootfs.Open), a bundle file with every digest checked and, when keys
// are given, signed by one of them, or the plain .tar of a rules directory
// the playground downloads (without keys). Its errors are *engine.Error
// with code read_error and hint as their hint.
func Open(path string, keys []string, hint string) (fs.FS, error) {
	if path == "" {
		return rules.FS, nil
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, &engine.Error{Code: engine.CodeRead, Message: err.Error(), Hint: hint}
	case st.IsDir():
		fsys, err := rootfs.Open(path)
		if err != nil {
			return nil, &engine.Error{Code: engine.CodeRead, Message: err.Error(), Hint: hint}
		}
		return fsys, nil
	case st.Mode().IsRegular():
		return openFile(path, keys, hint)
	}
	return nil, &engine.Error{Code: engine.CodeRead, Message: fmt.Sprintf("%s is neither a directory nor a file", path), Hint: hint}
}

// openFile reads a bundle, or the plain tar of a rules directory that the
// playground downloads (no digests, no signature: refused when keys ask
// for one).
func openFile(path string, keys []string, hint string) (fs.FS, error) {
	data, err := bundle.ReadArchive(path)
	if err == nil && bundle.IsPlainTar(data) {
		if len(keys) > 0 {
			return nil, &engine.Error{Code: engine.CodeRead, Message: fmt.Sprintf("%s is a plain tar of rules, which has no signature to check", path),
				Hint: "a key checks a signed bundle: make one with 'dlroute bundle build', or leave the key out"}
		}
		fsys, err := bundle.ReadTar(data)
		if err != nil {
			return nil, &engine.Error{Code: engine.CodeRead, Message: fmt.Sprintf("reading the rules archive %s: %v", path, err), Hint: hint}
		}
		return fsys, nil
	}
	var b *bundle.Bundle
	if err == nil {
		b, err = bundle.Read(data, bundle.ReadOptions{Keys: keys})
	}
	if err != nil {
		return nil, &engine.Error{Code: engine.CodeRead, Message: fmt.Sprintf("reading the bundle %s: %v", path, err), Hint: hint}
	}
	return b.FS(), nil
}

// PublicKey is key itself when it is a public key (name+hash+key, as
// `dlroute bundle keygen` writes it), or the key in the file named key.
func PublicKey(key string) (string, error) {
	if data, err := os.ReadFile(key); err == nil {
		key = strings.TrimSpace(string(data))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if _, err := bundle.CheckPublicKey(key); err != nil {
		return "", fmt.Errorf("%q is neither a public key nor a file holding one (name+hash+key, from 'dlroute bundle keygen')", key)
	}
	return key, nil
}
