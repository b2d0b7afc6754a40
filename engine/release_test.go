package engine_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
	"io/fs"
	"regexp"
)

// TestRuleSetByRelease: a user who knows their installed jax gets the
// version whose manifest says it covers that release, whether the catalog
// compiled everything or only what the ref selects.
func TestRuleSetByRelease(t *testing.T) {
	all := loadEmbedded(t, engine.Options{})
	for _, c := range []struct{ ref, want string }{
		{"jax==0.4.15", "jax@v0"},
		{"jax==0.4.25", "jax@v0"},
		{"jax==0.4.26", "jax@v1"},
		{"jax==0.7.1", "jax@v1"},
		{"jax==0.10.1", "jax@v1"},
		{"jax==0.10.2", "jax@v1.1"},
		{"jax==0.10.2+cuda12", "jax@v1.1"}, // a local label is the same code
		{"jax==0.11", "jax@v3"},            // 0.11 is 0.11.0
		{"jax==0.11.0", "jax@v3"},
		{"jax==1.0.0", "jax@v3"}, // v3's range is open: every later release
	} {
		for what, load := range map[string]func() (*engine.Catalog, error){
			"every version": func() (*engine.Catalog, error) { return all, nil },
			"selected":      func() (*engine.Catalog, error) { return engine.Load(rules.FS, engine.Options{Select: []string{c.ref}}) },
		} {
			cat, err := load()
			if err != nil {
				t.Fatalf("%s: Load: %v", what, err)
			}
			rs, err := cat.RuleSet(c.ref)
			if err != nil {
				t.Errorf("%s: RuleSet(%q): %v", what, c.ref, err)
				continue
			}
			if rs.Ref() != c.want {
				t.Errorf("%s: RuleSet(%q) = %s, want %s", what, c.ref, rs.Ref(), c.want)
			}
		}
	}
}

// TestRuleSetByReleaseRefuses: a release no version covers names the
// nearest versions with their ranges; a development build says why it
// has no range; each is CodeNoRuleSet.
func TestRuleSetByReleaseRefuses(t *testing.T) {
	cat := loadEmbedded(t, engine.Options{})
	for _, c := range []struct{ ref, message, hint string }{
		{"jax==0.4.14", "rule set jax has no version for release 0.4.14",
			"it is older than every version: the oldest, jax@v0 covers 0.4.15 to 0.4.25"},
		{"jax==0.11.0.dev20260801", `rule set jax: "0.11.0.dev20260801" is a pre-release or a development build, whose behaviour is that of the commit it was built from`,
			"choose a version by its commit range instead: `dlroute rules` lists them; --ruleset jax@<version>"},
		{"jax==0.11.0rc1", `rule set jax: "0.11.0rc1" is a pre-release`, ""},
		{"jax==latest", `rule set jax: "latest" is not a release number such as 0.4.26`, ""},
		{"numbat==1.0", `no rule set "numbat"`, "loaded: "},
	} {
		_, err := cat.RuleSet(c.ref)
		var e *engine.Error
		if !errors.As(err, &e) || e.Code != engine.CodeNoRuleSet {
			t.Fatalf("RuleSet(%q) = %v, want a %s error", c.ref, err, engine.CodeNoRuleSet)
		}
		if !strings.HasPrefix(e.Message, c.message) || !strings.HasPrefix(e.Hint, c.hint) {
			t.Errorf("RuleSet(%q):\n  message %q\n     want %q\n  hint    %q\n     want %q", c.ref, e.Message, c.message, e.Hint, c.hint)
		}
	}
}

// TestReleaseGaps: a release between two versions' ranges names both, and
// two versions claiming one release is refused rather than one picked.
func TestReleaseGaps(t *testing.T) {
	fsys := fstest.MapFS{}
	for v, releases := range map[string]string{
		"v1": `{first: "1.0", last: "1.4"}`,
		"v2": `{first: "2.0", last: "2.3"}`,
		"v3": `{first: "2.3"}`,
	} {
		copyVersion(t, fsys, "lib", v, releases)
	}
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cat.RuleSet("lib==1.7")
	if want := "nearest: lib@v1 covers 1.0 to 1.4; lib@v2 covers 2.0 to 2.3"; err == nil || err.(*engine.Error).Hint != want {
		t.Errorf("lib==1.7: %v, want the hint %q", err, want)
	}
	_, err = cat.RuleSet("lib==2.3")
	if want := "rule set lib: release 2.3 is in the range of lib@v2 and lib@v3"; err == nil || err.(*engine.Error).Message != want {
		t.Errorf("lib==2.3: %v, want %q", err, want)
	}
}

// TestManifestReleasesChecked: a range whose ends are not releases, or in
// the wrong order, is refused at load with its position.
func TestManifestReleasesChecked(t *testing.T) {
	for releases, want := range map[string]string{
		`{first: "0.5", last: "0.4"}`: "releases: first 0.5 comes after last 0.4",
		`{first: "soon"}`:             `releases: first: "soon" is not a release number`,
		`{last: "0.4"}`:               `needs "first"`,
		`{first: "1", until: "2"}`:    "until",
	} {
		fsys := fstest.MapFS{}
		copyVersion(t, fsys, "lib", "v1", releases)
		_, err := engine.Load(fsys, engine.Options{})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "manifest.yaml:") {
			t.Errorf("releases %s: %v, want an error at manifest.yaml saying %q", releases, err, want)
		}
	}
}

// copyVersion adds name/version to fsys: jax@v3's files, its manifest
// renamed and its releases line replaced by releases.
func copyVersion(t *testing.T, fsys fstest.MapFS, name, version, releases string) {
	t.Helper()
	files, err := fs.Glob(rules.FS, "jax/v3/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("jax/v3: %v", err)
	}
	for _, file := range files {
		data, err := fs.ReadFile(rules.FS, file)
		if err != nil {
			t.Fatal(err)
		}
		base := file[len("jax/v3/"):]
		if base == "manifest.yaml" {
			m := regexp.MustCompile(`(?m)^name: jax$`).ReplaceAllString(string(data), "name: "+name)
			m = regexp.MustCompile(`(?m)^version: v3$`).ReplaceAllString(m, "version: "+version)
			m = regexp.MustCompile(`(?m)^  releases: .*$`).ReplaceAllString(m, "  releases: "+releases)
			data = []byte(m)
		}
		fsys[name+"/"+version+"/"+base] = &fstest.MapFile{Data: data}
	}
}
