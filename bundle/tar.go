package bundle

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing/fstest"
)

// IsPlainTar reports whether data is an uncompressed tar archive (a ustar
// or GNU header), such as the playground's download of its rules, rather
// than a bundle, which is gzip-compressed.
func IsPlainTar(data []byte) bool {
	return len(data) >= 512 && bytes.HasPrefix(data[257:], []byte("ustar"))
}

// ReadTar reads a plain tar archive of a rules directory, as the
// playground downloads it: <name>/<version>/<file>, all under one top
// folder (the download's rules/) or none. It has no manifest, so no
// digest or signature is checked, but the rest is as strict as Read: only
// files and folders, paths of a rules directory, each once, within a
// bundle's limits.
func ReadTar(data []byte) (fs.FS, error) {
	if len(data) > MaxArchiveSize {
		return nil, errorf(CodeTooLong, "", "the archive is %d bytes; the limit is %d", len(data), MaxArchiveSize)
	}
	if !IsPlainTar(data) {
		return nil, &Error{Code: CodeNotBundle, Message: "not a tar archive of rules"}
	}
	top := topFolder(data)
	tr := tar.NewReader(bytes.NewReader(data))
	files := fstest.MapFS{}
	var total int64
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, streamError(err, "")
		}
		name, ok := strings.CutPrefix(hdr.Name, top)
		switch {
		case !ok:
			return nil, errorf(CodeBadPath, hdr.Name, "the archive's paths are all under %s or none is", top)
		case name == "" && hdr.Typeflag == tar.TypeDir:
			continue // the top folder itself
		case hdr.Typeflag == tar.TypeDir:
			if err := checkDir(name); err != nil {
				return nil, err
			}
			continue
		}
		if files[name] != nil {
			return nil, errorf(CodeDuplicate, hdr.Name, "the archive holds the path twice")
		}
		body, err := readRulesFile(tr, hdr, name, len(files), &total)
		if err != nil {
			return nil, err
		}
		files[name] = &fstest.MapFile{Data: body, Mode: 0o444}
	}
	if len(files) == 0 {
		return nil, errorf(CodeMissingFile, "", "the archive holds no file")
	}
	return files, nil
}

// topFolder is "rules/" when the archive's first member is a folder of one
// component that is not itself a rule set's (its next member is three
// components below it), else "".
func topFolder(data []byte) string {
	tr := tar.NewReader(bytes.NewReader(data))
	first, err := tr.Next()
	if err != nil {
		return ""
	}
	name := strings.TrimSuffix(first.Name, "/")
	if first.Typeflag == tar.TypeDir && name != "" && !strings.Contains(name, "/") {
		// A rules directory's own first folder is a rule set's name: it
		// is the top folder only when a file lies four levels below it.
		for {
			hdr, err := tr.Next()
			if err != nil {
				return ""
			}
			if hdr.Typeflag != tar.TypeDir {
				if strings.Count(hdr.Name, "/") == 3 && strings.HasPrefix(hdr.Name, name+"/") {
					return name + "/"
				}
				return ""
			}
		}
	}
	if strings.Count(first.Name, "/") == 3 {
		top, _, _ := strings.Cut(first.Name, "/")
		return top + "/"
	}
	return ""
}
