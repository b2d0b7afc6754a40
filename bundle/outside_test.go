//go:build unix

package bundle_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/internal/fsutil/rootfs"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
)

// TestBuildRefusesLinksOut: over a folder read inside itself
// (rootfs.Open, as every host reads one), a file or a version folder
// that links out of it is outside_root, not packed and not left out.
func TestBuildRefusesLinksOut(t *testing.T) {
	outside := t.TempDir()
	if err := ruletest.WriteDir(outside, ruletest.Rules()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, link, target string }{
		{"a file", "jax/v3/tests.yaml", filepath.Join(outside, "jax", "v3", "tests.yaml")},
		{"a version folder", "jax/v9", filepath.Join(outside, "jax", "v3")},
		{"a rule set's folder", "other", filepath.Join(outside, "jax")},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := ruletest.WriteDir(dir, ruletest.Rules()); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, filepath.FromSlash(c.link))
			os.Remove(link)
			if err := os.Symlink(c.target, link); err != nil {
				t.Fatal(err)
			}
			fsys, err := rootfs.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := bundle.Build(&buf, fsys, bundle.BuildOptions{}); code(err) != bundle.CodeOutsideRoot || buf.Len() > 0 {
				t.Errorf("Build with %s linked out: %v, %d bytes; want %s and nothing written", c.link, err, buf.Len(), bundle.CodeOutsideRoot)
			}
		})
	}
}
