package bundle_test

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"testing"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/internal/testkit/fuzzbound"
)

// The key the signed seeds are signed with. It signs nothing else: it is
// public, here.
const (
	fuzzPrivate = "PRIVATE+KEY+dlroute-fuzz+2747c33e+AX9uTe38nMFGqtSbJRSjRyXoyH/PRyVhNwlkElQGT3q7"
	fuzzPublic  = "dlroute-fuzz+2747c33e+AXUfwsjW3Lj1VrsVmrDCdZDSy+wDgd9+DXbrl84SXC35"
)

// What one Read of fuzzed bytes may cost. The limits bound a bundle that
// passes to about MaxUnpackedSize held plus what reading it grows
// through (buffers that double on the way): about four times
// MaxUnpackedSize, which the near-limit archive reaches (268 MiB under
// -race); a little input must not cost more than that.
const (
	fuzzMaxTime  = 2 * time.Second
	fuzzMaxAlloc = 6 * bundle.MaxUnpackedSize
)

// FuzzReadBundle feeds arbitrary bytes to Read, with no key and with one.
// Read must not panic, must refuse with an *Error that has a code, must
// keep to the time and memory above, and what it accepts must be what
// its manifest says. Seeds: testdata/fuzz/FuzzReadBundle (a bundle of
// jax/v3, signed and not, truncated, with a link or a path twice, not
// gzip, empty); the whole embedded rules are added here.
func FuzzReadBundle(f *testing.F) {
	f.Add(build(f, bundle.BuildOptions{Sequence: 1, SignerKeys: []string{fuzzPrivate}}))
	f.Add(pack(f, []member{{name: bundle.ManifestPath, body: []byte(`{"format":"dlroute-bundle/v1"}`)}, {name: "jax/", typeflag: '5'}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []bundle.ReadOptions{{}, {Keys: []string{fuzzPublic}}} {
			if b, err := readWithinBounds(t, data, opts, fuzzbound.Time(fuzzMaxTime)); err == nil {
				checkAccepted(t, b, opts)
			}
		}
	})
}

// TestReadCostNearLimits holds Read to FuzzReadBundle's memory bound on
// the archive that makes it hold the most, too large a seed for fuzzing
// to mutate at speed. Reading it is reading MaxUnpackedSize bytes, which
// under -race on a loaded machine takes seconds: its time bound catches a
// Read that never ends, not a slow one (that is a benchmark's to say).
func TestReadCostNearLimits(t *testing.T) {
	readWithinBounds(t, nearLimits(t), bundle.ReadOptions{}, 2*time.Minute)
}

// readWithinBounds is Read, failing t when it takes longer than maxTime
// or allocates more than fuzzMaxAlloc, or refuses with anything but an
// *Error with a code and a message.
func readWithinBounds(t *testing.T, data []byte, opts bundle.ReadOptions, maxTime time.Duration) (*bundle.Bundle, error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var b *bundle.Bundle
	var err error
	done := make(chan struct{})
	go func() { // so that a Read that never returns fails too
		defer close(done)
		b, err = bundle.Read(data, opts)
	}()
	select {
	case <-done:
	case <-time.After(maxTime):
		stacks := make([]byte, 1<<20)
		t.Fatalf("Read of %d bytes took more than %v:\n%s", len(data), maxTime, stacks[:runtime.Stack(stacks, true)])
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > fuzzMaxAlloc {
		t.Fatalf("Read of %d bytes allocated %d MiB; the bound is %d MiB", len(data), alloc>>20, fuzzMaxAlloc>>20)
	}
	var e *bundle.Error
	if err != nil && (!errors.As(err, &e) || e.Code == "" || e.Message == "") {
		t.Fatalf("Read refused with %#v: not an *Error with a code and a message", err)
	}
	return b, err
}

// checkAccepted holds a bundle Read accepted to what it promises.
func checkAccepted(t *testing.T, b *bundle.Bundle, opts bundle.ReadOptions) {
	t.Helper()
	if len(opts.Keys) > 0 && len(b.SignedBy) == 0 {
		t.Fatalf("Read with a key accepted a bundle signed by none")
	}
	if err := bundle.CheckRevision(b.Manifest.Revision); err != nil {
		t.Fatalf("Read accepted revision %q: %v", b.Manifest.Revision, err)
	}
	n := 0
	err := fs.WalkDir(b.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		return nil
	})
	if err != nil || n != len(b.Manifest.Files) {
		t.Fatalf("the bundle's FS holds %d files (%v); its manifest lists %d", n, err, len(b.Manifest.Files))
	}
	for _, f := range b.Manifest.Files {
		data, err := fs.ReadFile(b.FS(), f.Path)
		if err != nil || int64(len(data)) != f.Size {
			t.Fatalf("%s: %d bytes (%v); the manifest says %d", f.Path, len(data), err, f.Size)
		}
	}
}

// nearLimits is the embedded rules' bundle with MaxUnpackedSize bytes of
// files more, each of MaxFileSize: the most a bundle makes Read hold, in
// a little input.
func nearLimits(t testing.TB) []byte {
	ms := unpackAll(t, build(t, bundle.BuildOptions{}))
	zeros := make([]byte, bundle.MaxFileSize)
	for i := range bundle.MaxUnpackedSize / bundle.MaxFileSize {
		ms = append(ms, member{name: fmt.Sprintf("zeros/v1/f%03d", i), body: zeros})
	}
	return pack(t, ms)
}
