package live

import (
	"io"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
)

// Snapshot is one activated version of the rules: the compiled catalog and
// the bundle it came from. It is immutable and safe for concurrent use.
// Every decision made through it is named by its RuleSet ref and by
// Revision.
type Snapshot struct {
	catalog   *engine.Catalog
	plans     map[string][]byte // by ref: every version's plan (Plans)
	bundle    *bundle.Bundle
	archive   []byte
	origin    string
	kept      bool
	keptAt    time.Time // the kept file's modification time, when kept
	activated time.Time
	attached  io.Closer

	refs      atomic.Int64 // holders, plus retiredBit once replaced
	closeOnce sync.Once
}

const retiredBit = 1 << 62

// Catalog returns the compiled rule sets.
func (s *Snapshot) Catalog() *engine.Catalog { return s.catalog }

// Plan returns the plan of version ref ("jax@v3") that the gate built
// (Plans), as engine.RuleSet.Plan writes it, or nil for a version the
// snapshot does not hold. Do not modify it.
func (s *Snapshot) Plan(ref string) []byte { return s.plans[ref] }

// Revision returns the bundle's revision: for a rules directory, its
// bundle.ContentRevision.
func (s *Snapshot) Revision() string { return s.bundle.Manifest.Revision }

// Digest returns the SHA-256 of the bundle's manifest, "sha256:...".
func (s *Snapshot) Digest() string { return s.bundle.Digest }

// Manifest returns the bundle's manifest.
func (s *Snapshot) Manifest() bundle.Manifest { return s.bundle.Manifest }

// SignedBy returns the keys whose signatures were verified.
func (s *Snapshot) SignedBy() []string { return append([]string(nil), s.bundle.SignedBy...) }

// Origin returns where the candidate came from: the source, or the path
// of the kept bundle.
func (s *Snapshot) Origin() string { return s.origin }

// Kept reports whether the snapshot was restored from the kept last good
// bundle because the source had nothing better at start.
func (s *Snapshot) Kept() bool { return s.kept }

// KeptAt returns when the kept bundle a Kept snapshot was restored from
// was written, by its file's modification time: how old the rules are
// that a host serves while its source has nothing better. Zero when not
// Kept.
func (s *Snapshot) KeptAt() time.Time { return s.keptAt }

// Sequence returns the bundle's bundle.Manifest.Sequence; 0 for an
// unordered bundle and a rules directory.
func (s *Snapshot) Sequence() uint64 { return s.bundle.Manifest.Sequence }

// ActivatedAt returns when the snapshot was swapped in; zero for one
// that Gate.Admit returned and nothing activated.
func (s *Snapshot) ActivatedAt() time.Time { return s.activated }

// FS returns the rules' files, <name>/<version>/<file>, as the catalog
// was loaded from them.
func (s *Snapshot) FS() fs.FS { return s.bundle.FS() }

// Archive returns the bundle's bytes, as kept on disk. Do not modify.
func (s *Snapshot) Archive() []byte { return s.archive }

// Attached returns what Gate.Prepare returned for this snapshot, or nil.
// It is closed once the snapshot is replaced and no holder (Rules.Acquire)
// has it; a caller that uses it holds the snapshot.
func (s *Snapshot) Attached() io.Closer { return s.attached }

// Release gives back a snapshot that Rules.Acquire returned.
func (s *Snapshot) Release() {
	if s.refs.Add(-1) == retiredBit {
		s.close()
	}
}

// hold counts a holder, unless the snapshot is retired.
func (s *Snapshot) hold() bool {
	if s.refs.Add(1)&retiredBit != 0 {
		s.Release()
		return false
	}
	return true
}

// retire marks the snapshot replaced; the last holder closes it.
func (s *Snapshot) retire() {
	if s.refs.Add(retiredBit) == retiredBit {
		s.close()
	}
}

func (s *Snapshot) close() {
	s.closeOnce.Do(func() {
		if s.attached != nil {
			s.attached.Close()
		}
	})
}
