package wasmbuild

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// Gzipped returns the module as Module finds it, and the module
// gzip-compressed at gzip.BestCompression, for hosts that send it over
// HTTP (dlroute playground). Compressing 27 MB takes seconds (tens under
// the race detector), so a built module's compressed form is cached
// beside it, as <module>.gz, and made once per build. A module named by
// $DLROUTE_WASM is compressed in memory: its directory is not ours to
// write in.
func Gzipped(ctx context.Context, opts Options) (module, gz []byte, err error) {
	module, path, err := Module(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(module)
	id := "sha256:" + hex.EncodeToString(sum[:])
	cached := os.Getenv(EnvModule) == ""
	if cached {
		if gz, err := os.ReadFile(path + ".gz"); err == nil && gzipOf(gz) == id {
			return module, gz, nil
		}
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Comment = id // which module this is the compressed form of
	zw.Write(module)
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	gz = b.Bytes()
	if cached {
		// A failed write only costs the next caller the compression again.
		if tmp, err := os.CreateTemp(filepath.Dir(path), "gzip-*.tmp"); err == nil {
			tmp.Chmod(0o644)
			_, werr := tmp.Write(gz)
			if cerr := tmp.Close(); werr == nil && cerr == nil {
				os.Rename(tmp.Name(), path+".gz")
			}
			os.Remove(tmp.Name())
		}
	}
	return module, gz, nil
}

// gzipOf reads the comment of a gzip file's header: the id of the module
// it was made from.
func gzipOf(gz []byte) string {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return ""
	}
	defer zr.Close()
	return zr.Comment
}
