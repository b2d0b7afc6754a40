package bundle_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/rules"
)

// member is one tar member, for archives the tests write by hand.
type member struct {
	name     string
	body     []byte
	typeflag byte // 0 means tar.TypeReg
	linkname string
}

// build packs the embedded rules, signed by keys.
func build(t testing.TB, opts bundle.BuildOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := bundle.Build(&buf, rules.FS, opts); err != nil {
		t.Fatalf("Build: %v", err)
	}
	return buf.Bytes()
}

// unpackAll reads every member of an archive with archive/tar.
func unpackAll(t testing.TB, data []byte) []member {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []member
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		out = append(out, member{name: hdr.Name, body: body, typeflag: hdr.Typeflag, linkname: hdr.Linkname})
	}
}

// pack writes members as a gzip-compressed tar archive.
func pack(t testing.TB, members []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	for _, m := range members {
		hdr := &tar.Header{Name: m.name, Typeflag: m.typeflag, Linkname: m.linkname, Mode: 0o644, Size: int64(len(m.body))}
		if hdr.Typeflag == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if hdr.Typeflag != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Size > 0 {
			tw.Write(m.body)
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// edit returns the members of data with f applied.
func edit(t testing.TB, data []byte, f func([]member) []member) []byte {
	t.Helper()
	return pack(t, f(unpackAll(t, data)))
}

// code is the bundle code of err, or "" when it has none.
func code(err error) bundle.Code {
	var e *bundle.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
