package bundle_test

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// TestBuildPacksAnyFolderName: Build packs a rules folder whose names a
// ustar header cannot hold (U+202E, é), so that the folder reaches
// engine.Load, which refuses a rule set's bad name with bad_name as lint
// does, rather than Build failing with a tar message and no code (what
// serve's gate said of such a folder). Names ustar holds are packed as
// before.
func TestBuildPacksAnyFolderName(t *testing.T) {
	for _, name := range []string{"jax\u202e", "jax\x1b[31m", "jäx"} {
		fsys := fstest.MapFS{}
		for _, file := range []string{engine.ManifestFile, engine.DeviceTypesFile, engine.RulesFile, engine.TestsFile} {
			data, err := fs.ReadFile(rules.FS, "jax/v3/"+file)
			if err != nil {
				t.Fatal(err)
			}
			fsys[name+"/v3/"+file] = &fstest.MapFile{Data: data}
		}
		var buf bytes.Buffer
		if _, err := bundle.Build(&buf, fsys, bundle.BuildOptions{}); err != nil {
			t.Fatalf("Build of %q/v3: %v", name, err)
		}
		b, err := bundle.Read(buf.Bytes(), bundle.ReadOptions{})
		if err != nil {
			t.Fatalf("Read of %q/v3: %v", name, err)
		}
		_, err = engine.Load(b.FS(), engine.Options{})
		if errs := engine.Errors(err); len(errs) != 1 || errs[0].Code != engine.CodeBadName {
			t.Errorf("Load of the bundle of %q/v3: got %v, want %s", name, err, engine.CodeBadName)
		}
	}
	for _, m := range unpackAll(t, build(t, bundle.BuildOptions{})) {
		if strings.Contains(m.name, "PaxHeaders") {
			t.Errorf("the embedded rules' bundle has a PAX header: %s", m.name)
		}
	}
}

// TestErrorQuotesPath: a bundle error's path that holds a control or
// bidi character prints quoted, as engine.Position does.
func TestErrorQuotesPath(t *testing.T) {
	for path, want := range map[string]string{
		"jax/v3/rules.yaml":         "jax/v3/rules.yaml: too big",
		"jax\x1b[31m/v3/rules.yaml": `"jax\x1b[31m/v3/rules.yaml": too big`,
		"jax/v3/\u202elmay.rules":   `"jax/v3/\u202elmay.rules": too big`,
	} {
		e := &bundle.Error{Code: bundle.CodeTooLong, Path: path, Message: "too big"}
		if got := e.Error(); got != want {
			t.Errorf("Error{Path: %q}.Error() = %s, want %s", path, got, want)
		}
	}
}
