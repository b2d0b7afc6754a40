package live

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dlroute/dlroute/internal/atomicfile"
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

// readLimited reads a file of at most max bytes.
func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &SourceError{Code: CodeRead, Message: err.Error(), err: err}
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, &SourceError{Code: CodeRead, Message: err.Error(), err: err}
	}
	if int64(buf.Len()) > max {
		return nil, &SourceError{Code: CodeTooLarge, Message: fmt.Sprintf("%s is larger than %d bytes", path, max)}
	}
	return buf.Bytes(), nil
}
