// Package atomicfile writes a file so that a reader, or a crash, sees the
// old file or the whole new one, never part of it.
package atomicfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Write calls write with a temporary file beside path, syncs it, gives it
// perm and renames it over path. On any error the temporary file is
// removed and path is left as it was. A process killed during Write
// leaves the temporary file, ".<name>.dlroute-<digits>.tmp"; RemoveStale
// removes it.
func Write(path string, perm fs.FileMode, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), tempPrefix(path)+"*"+tempSuffix)
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

// A temporary file is named ".<name>.dlroute-<digits>.tmp": the marker
// is what makes it this package's, since ".<name>.<digits>.tmp" is also
// what os.CreateTemp's common ".name.*.tmp" pattern gives another tool.
const (
	tempMarker = "dlroute-"
	tempSuffix = ".tmp"
)

func tempPrefix(path string) string { return "." + filepath.Base(path) + "." + tempMarker }

// StaleAfter is how long a temporary file of Write's must have gone
// unmodified before RemoveStale takes it for one a killed process left: a
// write in progress modifies its file as it goes, and one stalled for this
// long fails at its rename, leaving path as it was.
const StaleAfter = 10 * time.Minute

// RemoveStale removes the temporary files that a Write of path killed
// before it finished left beside path: regular files named as Write names
// them (".<name>.dlroute-<digits>.tmp", digits as os.CreateTemp writes
// them) and not modified for StaleAfter before now. Nothing else is
// touched, not even a file of the same name without the marker. It
// returns the paths removed and the first error; a folder that does not
// exist holds nothing to remove.
func RemoveStale(path string, now time.Time) ([]string, error) {
	dir, prefix := filepath.Dir(path), tempPrefix(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			err = nil
		}
		return nil, err
	}
	var removed []string
	var first error
	for _, e := range entries {
		if !isTemp(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < StaleAfter {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil {
			if first == nil && !os.IsNotExist(err) {
				first = err
			}
			continue
		}
		removed = append(removed, p)
	}
	return removed, first
}

// isTemp reports whether name is prefix, digits and tempSuffix.
func isTemp(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	digits, ok := strings.CutSuffix(rest, tempSuffix)
	return ok && allDigits(digits)
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
