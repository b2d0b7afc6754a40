package bundle_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"testing"

	"github.com/dlroute/dlroute/bundle"
)

type tarMember struct {
	name string
	typ  byte
	body string
}

func plainTar(t *testing.T, members ...tarMember) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, m := range members {
		hdr := &tar.Header{Name: m.name, Typeflag: m.typ, Mode: 0o644, Size: int64(len(m.body)), Format: tar.FormatUSTAR}
		if m.typ == tar.TypeDir || m.typ == tar.TypeSymlink {
			hdr.Size = 0
		}
		if m.typ == tar.TypeSymlink {
			hdr.Linkname = "/etc/passwd"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Size > 0 {
			tw.Write([]byte(m.body))
		}
	}
	tw.Close()
	return b.Bytes()
}

// TestReadTar: the page's download (under rules/) and a bare rules
// directory both read; what a bundle refuses, a plain tar refuses too.
func TestReadTar(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []tarMember
		want    string // a file that must be there
	}{
		{"the page's download", []tarMember{{"rules/", tar.TypeDir, ""}, {"rules/jax/", tar.TypeDir, ""}, {"rules/jax/v3/", tar.TypeDir, ""}, {"rules/jax/v3/rules.yaml", tar.TypeReg, "x"}}, "jax/v3/rules.yaml"},
		{"files only, under a top folder", []tarMember{{"rules/jax/v3/rules.yaml", tar.TypeReg, "x"}}, "jax/v3/rules.yaml"},
		{"a bare rules directory", []tarMember{{"jax/", tar.TypeDir, ""}, {"jax/v3/", tar.TypeDir, ""}, {"jax/v3/rules.yaml", tar.TypeReg, "x"}}, "jax/v3/rules.yaml"},
	} {
		fsys, err := bundle.ReadTar(plainTar(t, tc.members...))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if data, err := fs.ReadFile(fsys, tc.want); err != nil || string(data) != "x" {
			t.Errorf("%s: %s = %q, %v", tc.name, tc.want, data, err)
		}
	}
	for _, tc := range []struct {
		name    string
		members []tarMember
		code    bundle.Code
	}{
		{"a symbolic link", []tarMember{{"rules/jax/v3/rules.yaml", tar.TypeSymlink, ""}}, bundle.CodeNotRegular},
		{"a path out of the directory", []tarMember{{"rules/jax/../../etc/x", tar.TypeReg, "x"}}, bundle.CodeBadPath},
		{"two tops", []tarMember{{"rules/jax/v3/rules.yaml", tar.TypeReg, "x"}, {"other/jax/v3/tests.yaml", tar.TypeReg, "x"}}, bundle.CodeBadPath},
		{"a path twice", []tarMember{{"jax/v3/rules.yaml", tar.TypeReg, "x"}, {"jax/v3/rules.yaml", tar.TypeReg, "y"}}, bundle.CodeDuplicate},
		{"nothing", []tarMember{{"rules/", tar.TypeDir, ""}}, bundle.CodeMissingFile},
	} {
		_, err := bundle.ReadTar(plainTar(t, tc.members...))
		var e *bundle.Error
		if !errors.As(err, &e) || e.Code != tc.code {
			t.Errorf("%s: %v, want code %s", tc.name, err, tc.code)
		}
	}
	if bundle.IsPlainTar([]byte("\x1f\x8b gzip")) {
		t.Error("a gzip stream is not a plain tar")
	}
}
