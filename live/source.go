package live

import (
	"context"
	"errors"
	"io/fs"
)

// Candidate is a version of the rules a source offers: a bundle, or a
// rules directory. Exactly one of Archive and Dir is set.
type Candidate struct {
	// Origin names where it came from, such as a path or a URL; positions
	// in its rule files are shown under it.
	Origin string
	// Archive is a bundle as bundle.Build writes it.
	Archive []byte
	// Dir is a rules directory, <name>/<version>/<file>. It is packed into
	// an unsigned bundle before anything else, so a directory and a bundle
	// take the same path; with Gate.Keys set, a directory is refused as
	// unsigned.
	Dir fs.FS
}

// Source yields candidates. Fetch may be called from one goroutine at a
// time.
type Source interface {
	// Fetch returns the source's current candidate, or ErrNotModified when
	// the source can tell nothing changed since the last Fetch (an HTTP
	// 304), or a *SourceError.
	Fetch(ctx context.Context) (*Candidate, error)
	// String names the source in status and logs.
	String() string
}

// Watcher is a Source that says when it may have changed, as a folder
// does through file-system events. Rules.Watch checks a Watcher's source
// soon after each signal, and every Config.Interval besides; a Source that
// is not a Watcher is checked every Config.Interval only.
type Watcher interface {
	Source
	// Changes starts watching and returns a channel that receives after
	// each change; it is closed when ctx ends.
	Changes(ctx context.Context) (<-chan struct{}, error)
}

// ErrNotModified is what Fetch returns when the candidate is the one it
// returned last.
var ErrNotModified = errors.New("live: the source has not changed")

// Static is a source that always offers the same rules directory, such as
// the embedded rules.FS.
func Static(origin string, fsys fs.FS) Source { return static{origin, fsys} }

type static struct {
	origin string
	fsys   fs.FS
}

func (s static) Fetch(context.Context) (*Candidate, error) {
	return &Candidate{Origin: s.origin, Dir: s.fsys}, nil
}

func (s static) String() string { return s.origin }
