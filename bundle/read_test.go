package bundle_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

func TestReadRoundTrip(t *testing.T) {
	data := build(t, bundle.BuildOptions{})
	b, err := bundle.Read(data, bundle.ReadOptions{})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	// Every version folder of the embedded rules, by its path.
	manifests, err := fs.Glob(rules.FS, "*/*/manifest.yaml")
	if err != nil || len(manifests) == 0 {
		t.Fatalf("the embedded rules' manifests: %v, %v", manifests, err)
	}
	var want []string
	for _, m := range manifests {
		dir := strings.Split(m, "/")
		want = append(want, dir[0]+"@"+dir[1])
	}
	slices.Sort(want)
	if !slices.Equal(b.Manifest.RuleSets, want) {
		t.Errorf("RuleSets = %v, want %v", b.Manifest.RuleSets, want)
	}
	if b.Manifest.Revision != bundle.ContentRevision(b.Manifest.Files) {
		t.Errorf("Revision = %q, want the content revision %q", b.Manifest.Revision, bundle.ContentRevision(b.Manifest.Files))
	}
	cat, err := engine.Load(b.FS(), engine.Options{})
	if err != nil {
		t.Fatalf("engine.Load(b.FS()): %v", err)
	}
	if got := len(cat.RuleSets()); got != len(want) {
		t.Errorf("engine.Load(b.FS()) loaded %d versions, want %d", got, len(want))
	}
	if again := build(t, bundle.BuildOptions{}); !bytes.Equal(again, data) {
		t.Errorf("two builds of the same rules differ (%d and %d bytes): a build must be reproducible", len(data), len(again))
	}
}

// TestReadRefuses is every archive Read must refuse, with its code.
func TestReadRefuses(t *testing.T) {
	good := build(t, bundle.BuildOptions{})
	withFile := func(name string, body []byte, typeflag byte, link string) []byte {
		return edit(t, good, func(ms []member) []member {
			return append(ms, member{name: name, body: body, typeflag: typeflag, linkname: link})
		})
	}
	var gzipped bytes.Buffer
	zw := gzip.NewWriter(&gzipped)
	zw.Write([]byte("plain text, not a tar archive, gzip-compressed"))
	zw.Close()
	bomb := edit(t, good, func(ms []member) []member {
		zeros := make([]byte, bundle.MaxFileSize)
		for i := range bundle.MaxUnpackedSize/bundle.MaxFileSize + 1 {
			ms = append(ms, member{name: "bomb/v1/f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26)), body: zeros})
		}
		return ms
	})

	tests := []struct {
		name string
		data []byte
		want bundle.Code
	}{
		{"empty", nil, bundle.CodeTruncated},
		{"not gzip", []byte("hello, world"), bundle.CodeNotBundle},
		{"gzip of text", gzipped.Bytes(), bundle.CodeTruncated},
		{"truncated in the gzip header", good[:5], bundle.CodeTruncated},
		{"truncated in half", good[:len(good)/2], bundle.CodeTruncated},
		{"truncated before the gzip trailer", good[:len(good)-4], bundle.CodeTruncated},
		{"a byte flipped in the stream", flip(good, len(good)/2), bundle.CodeCorrupt},
		{"a byte flipped in the checksum", flip(good, len(good)-6), bundle.CodeCorrupt},
		{"data after the archive", append(bytes.Clone(good), "junk"...), bundle.CodeCorrupt},
		{"larger than MaxArchiveSize", make([]byte, bundle.MaxArchiveSize+1), bundle.CodeTooLong},
		{"../ escapes the folder", withFile("../evil/v1/rules.yaml", []byte("x"), 0, ""), bundle.CodeBadPath},
		{"../ inside the path", withFile("jax/v3/../../../etc/passwd", []byte("x"), 0, ""), bundle.CodeBadPath},
		{"absolute path", withFile("/etc/dlroute/v1/rules.yaml", []byte("x"), 0, ""), bundle.CodeBadPath},
		{"./ prefix", withFile("./jax/v3/rules.yaml", []byte("x"), 0, ""), bundle.CodeBadPath},
		{"backslash", withFile(`jax\v3\x.yaml`, []byte("x"), 0, ""), bundle.CodeBadPath},
		{"too deep", withFile("jax/v3/sub/x.yaml", []byte("x"), 0, ""), bundle.CodeBadPath},
		{"a file at the top", withFile("README.md", []byte("x"), 0, ""), bundle.CodeBadPath},
		{"a dot-file", withFile("jax/v3/.hidden", []byte("x"), 0, ""), bundle.CodeBadPath},
		{"a folder too deep", withFile("jax/v3/sub/", nil, tar.TypeDir, ""), bundle.CodeBadPath},
		{"a path twice", withFile("jax/v3/rules.yaml", []byte("x"), 0, ""), bundle.CodeDuplicate},
		{"a symbolic link", withFile("jax/v3/link.yaml", nil, tar.TypeSymlink, "/etc/passwd"), bundle.CodeNotRegular},
		{"a hard link", withFile("jax/v3/link.yaml", nil, tar.TypeLink, "jax/v3/rules.yaml"), bundle.CodeNotRegular},
		{"a device", withFile("jax/v3/dev", nil, tar.TypeChar, ""), bundle.CodeNotRegular},
		{"a file over MaxFileSize", withFile("jax/v3/big.yaml", make([]byte, bundle.MaxFileSize+1), 0, ""), bundle.CodeTooLong},
		{"unpacks over MaxUnpackedSize", bomb, bundle.CodeTooLong},
		{"a file the manifest does not list", withFile("jax/v3/extra.yaml", []byte("x: 1\n"), 0, ""), bundle.CodeUnlisted},
		{"a listed file missing", edit(t, good, func(ms []member) []member {
			return slices.DeleteFunc(ms, func(m member) bool { return m.name == "jax/v3/tests.yaml" })
		}), bundle.CodeMissingFile},
		{"a file's byte changed", edit(t, good, func(ms []member) []member {
			for i := range ms {
				if ms[i].name == "jax/v3/rules.yaml" {
					ms[i].body = bytes.Replace(ms[i].body, []byte("cuda"), []byte("cudb"), 1)
				}
			}
			return ms
		}), bundle.CodeDigest},
		{"a file cut short", edit(t, good, func(ms []member) []member {
			ms[len(ms)-1].body = ms[len(ms)-1].body[:10]
			return ms
		}), bundle.CodeDigest},
		{"no manifest", edit(t, good, func(ms []member) []member { return ms[1:] }), bundle.CodeManifest},
		{"the manifest not first", edit(t, good, func(ms []member) []member {
			ms[0], ms[1] = ms[1], ms[0]
			return ms
		}), bundle.CodeManifest},
		{"a manifest of another format", edit(t, good, func(ms []member) []member {
			ms[0].body = bytes.Replace(ms[0].body, []byte(bundle.Format), []byte("dlroute-bundle/v9"), 1)
			return ms
		}), bundle.CodeManifest},
		{"a manifest with an unknown field", edit(t, good, func(ms []member) []member {
			ms[0].body = bytes.Replace(ms[0].body, []byte(`"revision"`), []byte(`"extra": 1, "revision"`), 1)
			return ms
		}), bundle.CodeManifest},
		{"a manifest whose rule sets are not its files'", edit(t, good, func(ms []member) []member {
			ms[0].body = bytes.Replace(ms[0].body, []byte(`"jax@v1",`), nil, 1)
			return ms
		}), bundle.CodeManifest},
		{"a manifest listing ../", edit(t, good, func(ms []member) []member {
			ms[0].body = bytes.Replace(ms[0].body, []byte(`"path": "jax/v1/`), []byte(`"path": "../v1/`), 1)
			return ms
		}), bundle.CodeManifest},
		{"a bad revision", edit(t, good, func(ms []member) []member {
			rev := unpackManifestRevision(t, ms[0].body)
			ms[0].body = bytes.Replace(ms[0].body, []byte(rev), []byte("has space"), 1)
			return ms
		}), bundle.CodeManifest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := bundle.Read(tt.data, bundle.ReadOptions{})
			if got := code(err); got != tt.want {
				t.Fatalf("Read(%s) = %v, %v; want code %s", tt.name, b != nil, err, tt.want)
			}
			if b != nil {
				t.Errorf("Read(%s) returned a bundle with its error", tt.name)
			}
		})
	}
}

func flip(data []byte, i int) []byte {
	out := bytes.Clone(data)
	out[i] ^= 0x55
	return out
}

func unpackManifestRevision(t *testing.T, manifest []byte) string {
	_, rest, _ := strings.Cut(string(manifest), `"revision": "`)
	rev, _, ok := strings.Cut(rest, `"`)
	if !ok {
		t.Fatal("no revision in the manifest")
	}
	return rev
}
