package bundle_test

import (
	"bytes"
	"testing"

	"github.com/dlroute/dlroute/bundle"
)

// TestSequence is the manifest's order: carried and signed when set,
// absent (and 0) when not, so that a bundle built without one reads as a
// bundle from before the field.
func TestSequence(t *testing.T) {
	private, public := keyPair(t, "dlroute-rules")
	data := build(t, bundle.BuildOptions{Sequence: 1767225600, SignerKeys: []string{private}})
	b, err := bundle.Read(data, bundle.ReadOptions{Keys: []string{public}})
	if err != nil || b.Manifest.Sequence != 1767225600 {
		t.Fatalf("Read of a bundle built with Sequence 1767225600: sequence %v, %v", b.Manifest.Sequence, err)
	}

	// The sequence is under the signature: raised by one, it does not verify.
	ms := unpackAll(t, data)
	ms[0].body = bytes.Replace(ms[0].body, []byte(`"sequence": 1767225600`), []byte(`"sequence": 1767225601`), 1)
	if _, err := bundle.Read(pack(t, ms), bundle.ReadOptions{Keys: []string{public}}); code(err) != bundle.CodeBadSignature {
		t.Errorf("Read of a signed manifest with its sequence raised: %v; want %s", err, bundle.CodeBadSignature)
	}

	unordered := build(t, bundle.BuildOptions{})
	if manifest := unpackAll(t, unordered)[0].body; bytes.Contains(manifest, []byte("sequence")) {
		t.Errorf("a bundle built with Sequence 0 names a sequence:\n%s", manifest)
	}
	if b, err := bundle.Read(unordered, bundle.ReadOptions{}); err != nil || b.Manifest.Sequence != 0 {
		t.Errorf("Read of an unordered bundle: sequence %v, %v; want 0", b.Manifest.Sequence, err)
	}

	for _, bad := range []string{`"sequence": -1`, `"sequence": 1.5`, `"sequence": "7"`, `"sequence": 18446744073709551616`} {
		ms := unpackAll(t, unordered)
		ms[0].body = bytes.Replace(ms[0].body, []byte(`"format": "dlroute-bundle/v1",`), []byte(`"format": "dlroute-bundle/v1", `+bad+`,`), 1)
		if _, err := bundle.Read(pack(t, ms), bundle.ReadOptions{}); code(err) != bundle.CodeManifest {
			t.Errorf("Read of a manifest with %s: %v; want %s", bad, err, bundle.CodeManifest)
		}
	}
}
