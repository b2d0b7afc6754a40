package bundle_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/rules"
)

func keyPair(t testing.TB, name string) (private, public string) {
	t.Helper()
	private, public, err := bundle.GenerateKey(name)
	if err != nil {
		t.Fatal(err)
	}
	return private, public
}

func TestSignatures(t *testing.T) {
	private, public := keyPair(t, "dlroute-rules")
	_, otherPublic := keyPair(t, "someone-else")
	signed := build(t, bundle.BuildOptions{SignerKeys: []string{private}, Revision: "2026-12-01.1"})
	unsigned := build(t, bundle.BuildOptions{Revision: "2026-12-01.1"})
	signer, _ := bundle.CheckPublicKey(public)

	tests := []struct {
		name     string
		data     []byte
		keys     []string
		want     bundle.Code // "" for accepted
		signedBy []string
	}{
		{"signed, with its key", signed, []string{public}, "", []string{signer}},
		{"signed, with its key among others", signed, []string{otherPublic, public}, "", []string{signer}},
		{"signed, no key configured", signed, nil, "", nil},
		{"unsigned, no key configured", unsigned, nil, "", nil},
		{"unsigned, a key configured", unsigned, []string{public}, bundle.CodeUnsigned, nil},
		{"signed by another key", signed, []string{otherPublic}, bundle.CodeUnknownSigner, nil},
		{"a key that is not a key", signed, []string{"not-a-key"}, bundle.CodeBadKey, nil},
		{"a private key given as the public one", signed, []string{private}, bundle.CodeBadKey, nil},
		{"the signature lines removed", edit(t, signed, func(ms []member) []member {
			text, _, _ := bytes.Cut(ms[0].body, []byte("\n\n"))
			ms[0].body = append(text, '\n')
			return ms
		}), []string{public}, bundle.CodeUnsigned, nil},
		{"the revision changed", edit(t, signed, func(ms []member) []member {
			ms[0].body = bytes.Replace(ms[0].body, []byte("2026-12-01.1"), []byte("2026-12-01.2"), 1)
			return ms
		}), []string{public}, bundle.CodeBadSignature, nil},
		{"a file changed, the manifest left signed", edit(t, signed, func(ms []member) []member {
			ms[len(ms)-1].body = append(ms[len(ms)-1].body, '#')
			return ms
		}), []string{public}, bundle.CodeDigest, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := bundle.Read(tt.data, bundle.ReadOptions{Keys: tt.keys})
			if got := code(err); got != tt.want {
				t.Fatalf("Read(%s) error = %v; want code %q", tt.name, err, tt.want)
			}
			if err == nil && !slices.Equal(b.SignedBy, tt.signedBy) {
				t.Errorf("Read(%s).SignedBy = %v, want %v", tt.name, b.SignedBy, tt.signedBy)
			}
		})
	}
}

// TestSignatureTamperedByte changes each byte of a signed manifest's text
// in turn, and bytes of its signature: no change may be accepted with the
// key configured.
func TestSignatureTamperedByte(t *testing.T) {
	private, public := keyPair(t, "dlroute-rules")
	var buf bytes.Buffer
	if _, err := bundle.Build(&buf, oneVersion(t, "jax/v3"), bundle.BuildOptions{SignerKeys: []string{private}}); err != nil {
		t.Fatal(err)
	}
	ms := unpackAll(t, buf.Bytes())
	manifest := ms[0].body
	text, _, _ := bytes.Cut(manifest, []byte("\n\n"))
	sigLine := bytes.LastIndex(manifest, []byte(" ")) + 1 // the base64 of the signature
	positions := []int{}
	for i := range len(text) + 2 {
		positions = append(positions, i)
	}
	// The last base64 characters may hold padding bits a decoder ignores;
	// a change there leaves the signature's bytes as they were.
	for i := sigLine; i < len(manifest)-4; i += 3 {
		positions = append(positions, i)
	}
	for _, i := range positions {
		tampered := bytes.Clone(manifest)
		tampered[i] ^= 1
		ms[0].body = tampered
		b, err := bundle.Read(pack(t, ms), bundle.ReadOptions{Keys: []string{public}})
		if err == nil {
			t.Fatalf("Read accepted a manifest with byte %d (%q) changed to %q: %v", i, manifest[i], tampered[i], b.Manifest.Revision)
		}
	}
	ms[0].body = manifest
	if _, err := bundle.Read(pack(t, ms), bundle.ReadOptions{Keys: []string{public}}); err != nil {
		t.Fatalf("Read of the untampered repack: %v", err)
	}
}

// oneVersion is the embedded rules' folder dir alone, as a rules
// directory.
func oneVersion(t testing.TB, dir string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	for _, name := range []string{"manifest.yaml", "device_types.yaml", "rules.yaml", "tests.yaml"} {
		data, err := rules.FS.ReadFile(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		out[dir+"/"+name] = &fstest.MapFile{Data: data}
	}
	return out
}

func TestGenerateKeyName(t *testing.T) {
	for _, name := range []string{"", "has space", "has+plus"} {
		if _, _, err := bundle.GenerateKey(name); code(err) != bundle.CodeBadKey {
			t.Errorf("GenerateKey(%q) error = %v, want code %s", name, err, bundle.CodeBadKey)
		}
	}
	private, public := keyPair(t, "ops")
	if !strings.HasPrefix(private, "PRIVATE+KEY+ops+") || !strings.HasPrefix(public, "ops+") {
		t.Errorf("GenerateKey(ops) = %q, %q; want PRIVATE+KEY+ops+... and ops+...", private, public)
	}
}

func TestBuildRefuses(t *testing.T) {
	var buf bytes.Buffer
	for _, tt := range []struct {
		name string
		opts bundle.BuildOptions
		want bundle.Code
	}{
		{"bad revision", bundle.BuildOptions{Revision: "a b"}, bundle.CodeBadRevision},
		{"long revision", bundle.BuildOptions{Revision: strings.Repeat("r", bundle.MaxRevisionLen+1)}, bundle.CodeBadRevision},
		{"bad signing key", bundle.BuildOptions{SignerKeys: []string{"ops+1234+abc"}}, bundle.CodeBadKey},
	} {
		if _, err := bundle.Build(&buf, nil, tt.opts); code(err) != tt.want {
			t.Errorf("Build(%s) error = %v, want code %s", tt.name, err, tt.want)
		}
	}
}
