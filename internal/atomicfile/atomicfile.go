// Package atomicfile writes a file so that a reader, or a crash, sees the
// old file or the whole new one, never part of it.
package atomicfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write calls write with a temporary file beside path, syncs it, gives it
// perm and renames it over path. On any error the temporary file is
// removed and path is left as it was.
func Write(path string, perm fs.FileMode, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), perm)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// WriteFile is Write of data.
func WriteFile(path string, perm fs.FileMode, data []byte) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
