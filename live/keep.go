package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/internal/fsutil/atomicfile"
)

// keep writes the activated bundle to path so that the next Open can
// restore it: to a temporary file beside it, synced, then renamed over
// it, so that a crash leaves the old file or the new, never half of one.
func keep(path string, archive []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, 0o600, archive)
}

// readLimited reads a bundle file of at most max bytes, and at most
// bundle.MaxArchiveSize, as bundle.ReadArchive does: a regular file only,
// opened so that it cannot block, its size checked before it is read.
func readLimited(path string, max int64) ([]byte, error) {
	data, err := bundle.ReadArchive(path)
	var be *bundle.Error
	switch {
	case errors.As(err, &be) && be.Code == bundle.CodeTooLong:
		return nil, &SourceError{Code: CodeTooLong, Message: be.Error(), err: err}
	case errors.As(err, &be) && be.Code == bundle.CodeNotRegular:
		return nil, &SourceError{Code: CodeNotRegular, Message: be.Error(), err: err}
	case err != nil:
		return nil, &SourceError{Code: CodeRead, Message: err.Error(), err: err}
	case int64(len(data)) > max:
		return nil, &SourceError{Code: CodeTooLong, Message: fmt.Sprintf("%s is larger than %d bytes", path, max)}
	}
	return data, nil
}
