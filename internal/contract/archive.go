package contract

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
)

// The rules archive is how a host hands a rules directory to the module:
// for each file, a u32 length and its slash-separated path relative to the
// rules directory ("jax/v3/rules.yaml"), then a u32 length and its bytes.
// Little-endian, no header: simple enough for any host to write.

// MaxArchiveSize is the largest rules archive PackFS writes: the limit of
// a bundle's unpacked files (bundle.MaxUnpackedSize).
const MaxArchiveSize = 64 << 20

// PackFS writes every regular file of fsys into an archive, sorted by path
// so that equal directories give equal archives; all but the set of plans
// at the root (engine.PlansFile), which the module that reads an archive
// never reads: it compiles the rules, and the decision module embeds its
// plans.
func PackFS(fsys fs.FS) ([]byte, error) { return pack(fsys, true) }

// PackText is PackFS without the engine.ParsedFile at the root: the
// archive of rules whose parsed.bin the module must not take, since it is
// not as trusted as the host (the module takes an archive's as the
// host's word: engine.Options.TrustParsed).
func PackText(fsys fs.FS) ([]byte, error) { return pack(fsys, false) }

func pack(fsys fs.FS, parsed bool) ([]byte, error) {
	var names []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && p != engine.PlansFile && (parsed || p != engine.ParsedFile) {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var b []byte
	for _, name := range names {
		data, err := engine.ReadFile(fsys, name) // regular, unblocking, within MaxRuleFileSize
		if err != nil {
			return nil, err
		}
		if len(b)+len(data) > MaxArchiveSize {
			return nil, &engine.Error{Code: engine.CodeTooLong, Message: fmt.Sprintf("the rules are larger than %d bytes", MaxArchiveSize)}
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(name)))
		b = append(b, name...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
		b = append(b, data...)
	}
	return b, nil
}

// UnpackFS reads an archive into an in-memory file system. It refuses
// truncated archives and paths that are absolute or leave the directory.
func UnpackFS(b []byte) (fs.FS, error) {
	out := fstest.MapFS{}
	for len(b) > 0 {
		name, rest, ok := cutString(b)
		if !ok {
			return nil, fmt.Errorf("rules archive is truncated in a path")
		}
		data, rest, ok := cutString(rest)
		if !ok {
			return nil, fmt.Errorf("rules archive is truncated in %s", name)
		}
		if !fs.ValidPath(name) || name == "." || strings.Contains(name, "\\") || path.Clean(name) != name {
			return nil, fmt.Errorf("rules archive has a path that is not inside the directory: %q", name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("rules archive has %s twice", name)
		}
		out[name] = &fstest.MapFile{Data: []byte(data), Mode: 0o444}
		b = rest
	}
	return out, nil
}
