package engine_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// TestRuleSetByRelease: a user who knows their installed jax gets the
// version whose manifest says it covers that release, whether the catalog
// compiled everything or only what the ref selects; a release newer than
// every range, or a build between releases, gets a version and a warning.
func TestRuleSetByRelease(t *testing.T) {
	all := loadEmbedded(t, engine.Options{})
	for _, c := range []struct {
		ref, want string
		warned    bool
	}{
		{"jax==0.4.15", "jax@v0", false},
		{"jax==0.4.25", "jax@v0", false},
		{"jax==0.4.26", "jax@v1", false},
		{"jax==0.7.1", "jax@v1", false},
		{"jax==0.10.1", "jax@v1", false},
		{"jax==0.10.2", "jax@v1.1", false},
		{"jax==0.10.2+cuda12", "jax@v1.1", false}, // a local label is the release's code
		{"jax==0.10.2.post1", "jax@v1.1", false},  // and so is a post-release
		{"jax==0.11", "jax@v3", false},            // 0.11 is 0.11.0
		{"jax==0.11.0", "jax@v3", false},
		{"jax==0.12.0.1", "jax@v3", false},
		{"jax==1.0.0", "jax@v3", true},                // newer than every range
		{"jax==0.11.0.dev20260801", "jax@v3", true},   // a development build, read as 0.11.0
		{"jax==0.11.0rc1", "jax@v3", true},            // a pre-release, read as 0.11.0
		{"torch==1.13.1+dfsg", "torch@v1", false},     // Debian's label on 1.13.1's code
		{"numpy==9.0.0.dev0+local", "numpy@v2", true}, // both: a build of a newer release
	} {
		for what, load := range map[string]func() (*engine.Catalog, error){
			"every version": func() (*engine.Catalog, error) { return all, nil },
			"selected":      func() (*engine.Catalog, error) { return engine.Load(rules.FS, engine.Options{Select: []string{c.ref}}) },
		} {
			cat, err := load()
			if err != nil {
				t.Fatalf("%s: Load: %v", what, err)
			}
			rs, w, err := cat.Lookup(c.ref)
			if err != nil {
				t.Errorf("%s: Lookup(%q): %v", what, c.ref, err)
				continue
			}
			if rs.Ref() != c.want || (w != nil) != c.warned {
				t.Errorf("%s: Lookup(%q) = %s, warning %v; want %s, warned %v", what, c.ref, rs.Ref(), w, c.want, c.warned)
			}
			if w != nil && w.RuleSet != rs.Ref() {
				t.Errorf("%s: Lookup(%q): the warning names %s, the answer is %s", what, c.ref, w.RuleSet, rs.Ref())
			}
			strict, err := cat.RuleSet(c.ref)
			var e *engine.Error
			switch {
			case !c.warned && (err != nil || strict != rs):
				t.Errorf("%s: RuleSet(%q) = %v, %v; want %s", what, c.ref, strict, err, c.want)
			case c.warned && (!errors.As(err, &e) || e.Code != engine.CodeUncheckedRelease || e.Message != "refused (strict): "+w.Message):
				t.Errorf("%s: RuleSet(%q) = %v, want the warning as a %s refusal", what, c.ref, err, engine.CodeUncheckedRelease)
			}
		}
	}
}

// TestReleaseWarning: the warning is a value that says why no version was
// checked against the release, which version answers, and what was
// checked, run here or read from source.
func TestReleaseWarning(t *testing.T) {
	cat := rangedCatalog(t)
	for _, c := range []struct {
		ref     string
		want    engine.ReleaseWarning
		message string
	}{
		{"lib==2.6.0", engine.ReleaseWarning{Release: "2.6.0", Newer: true, RuleSet: "lib@v2"},
			"lib 2.6.0 is newer than every release dlroute checked; using lib@v2, checked against 2.3, 2.1 (run here), 2.0 (source only)"},
		{"lib==2.16.0.dev20261201+cpu", engine.ReleaseWarning{Release: "2.16.0.dev20261201+cpu", Build: "development build", ReadAs: "2.16.0", Newer: true, RuleSet: "lib@v2"},
			"lib 2.16.0.dev20261201+cpu is a development build, read as 2.16.0, which is newer than every release dlroute checked; using lib@v2, checked against 2.3, 2.1 (run here), 2.0 (source only)"},
		{"lib==1.3.0a0+gitunknown", engine.ReleaseWarning{Release: "1.3.0a0+gitunknown", Build: "pre-release", ReadAs: "1.3.0", RuleSet: "lib@v1"},
			"lib 1.3.0a0+gitunknown is a pre-release, read as 1.3.0; using lib@v1 (1.0 to 1.4), checked against 1.4 (run here), 1.0 (source only)"},
	} {
		_, w, err := cat.Lookup(c.ref)
		if err != nil || w == nil {
			t.Fatalf("Lookup(%q) = %v, %v; want a warning", c.ref, w, err)
		}
		if w.Message != c.message {
			t.Errorf("Lookup(%q):\n message %q\n    want %q", c.ref, w.Message, c.message)
		}
		if w.Code != engine.CodeUncheckedRelease || w.Ref != c.ref || w.Release != c.want.Release || w.Build != c.want.Build ||
			w.ReadAs != c.want.ReadAs || w.Newer != c.want.Newer || w.RuleSet != c.want.RuleSet {
			t.Errorf("Lookup(%q) = %+v, want %+v", c.ref, *w, c.want)
		}
		if !strings.Contains(w.Hint, "python -m dlroute check") {
			t.Errorf("Lookup(%q): hint %q does not say how to check the release", c.ref, w.Hint)
		}
		data, _ := json.Marshal(w)
		var back map[string]any
		json.Unmarshal(data, &back)
		if r, _ := back["releases"].(map[string]any); back["code"] != "unchecked_release" || back["ruleset"] != c.want.RuleSet || r == nil || r["checked"] == nil {
			t.Errorf("Lookup(%q): JSON %s", c.ref, data)
		}
	}
}

// TestReleaseGaps: a release between two versions' ranges, or older than
// all, names the nearest (a build says what it was read as). (Two versions
// claiming one release are refused at load: TestOverlappingReleases.)
func TestReleaseGaps(t *testing.T) {
	cat := rangedCatalog(t)
	for _, c := range []struct{ ref, message, hint string }{
		{"lib==1.7", "rule set lib has no version for release 1.7", "nearest: lib@v1 covers 1.0 to 1.4; lib@v2 covers 2.0 to 2.3"},
		{"lib==1.7.dev3", "rule set lib has no version for 1.7.dev3 (a development build, read as 1.7)", "nearest: lib@v1 covers 1.0 to 1.4; lib@v2 covers 2.0 to 2.3"},
		{"lib==0.9", "rule set lib has no version for release 0.9", "it is older than every version: the oldest, lib@v1 covers 1.0 to 1.4"},
		{"lib==latest", `rule set lib: "latest" is not a release number such as 0.4.26`, "choose a version by its commit range instead"},
		{"numbat==1.0", `no rule set "numbat"`, "loaded: lib"},
	} {
		_, w, err := cat.Lookup(c.ref)
		var e *engine.Error
		if !errors.As(err, &e) || e.Code != engine.CodeNoRuleSet || w != nil {
			t.Fatalf("Lookup(%q) = %v, %v; want a %s error", c.ref, w, err, engine.CodeNoRuleSet)
		}
		if e.Message != c.message || !strings.HasPrefix(e.Hint, c.hint) {
			t.Errorf("Lookup(%q):\n  message %q\n     want %q\n  hint    %q\n     want %q", c.ref, e.Message, c.message, e.Hint, c.hint)
		}
	}
}

// TestManifestReleasesChecked: a range that is open-ended, whose last
// release was not checked, that lists a release outside it or a how that
// is neither run nor source, or whose ends are not releases in order, is
// refused at load, at its line and column.
func TestManifestReleasesChecked(t *testing.T) {
	for _, c := range []struct{ releases, want string }{
		{"\n    first: \"1.0\"\n    checked: {\"1.0\": run}", `manifest.yaml:13:5: releases has no last: a range ends at the newest release checked against its real code, never open-ended`},
		{" {first: \"1.0\"}", `manifest.yaml:12:13: releases has no last`},
		{"\n    first: \"1.0\"\n    last: \"1.2\"\n    checked: {\"1.0\": run}", `manifest.yaml:14:11: releases: last 1.2 is not in checked`},
		{"\n    first: \"1.0\"\n    last: \"1.2\"\n    checked:\n      \"1.2\": run\n      \"1.3\": source", `manifest.yaml:17:7: releases: checked: 1.3 is outside the range 1.0 to 1.2`},
		{"\n    first: \"1.0\"\n    last: \"1.2\"\n    checked:\n      \"1.2\": tested", `manifest.yaml:16:14: releases: checked: 1.2 was checked "tested"; how is run or source`},
		{"\n    first: \"1.0\"\n    last: \"1.2\"", `manifest.yaml:13:5: releases needs "checked"`},
		{"\n    first: \"1.0\"\n    last: \"1.2\"\n    checked: {\"1.2rc1\": run, \"1.2\": run}", `manifest.yaml:15:15: releases: checked: "1.2rc1" is not a release: a manifest names releases by their numbers alone, such as 1.2`},
		{" {first: \"0.5\", last: \"0.4\", checked: {\"0.4\": run}}", "releases: first 0.5 comes after last 0.4"},
		{" {first: \"soon\", last: \"1\", checked: {\"1\": run}}", `releases: first: "soon" is not a release number`},
		{" {last: \"0.4\", checked: {\"0.4\": run}}", `releases needs "first"`},
		{" {first: \"1\", last: \"1\", checked: {\"1\": run}, until: \"2\"}", `unknown key "until"`},
	} {
		fsys := fstest.MapFS{}
		copyVersion(t, fsys, "lib", "v1", c.releases)
		_, err := engine.Load(fsys, engine.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("releases:%s\n got %v\nwant an error saying %q", c.releases, err, c.want)
		}
	}
}

// TestEmbeddedRangesChecked: every embedded version with releases ends
// its range at a release checked against its real code, and says how.
func TestEmbeddedRangesChecked(t *testing.T) {
	for _, rs := range loadEmbedded(t, engine.Options{}).RuleSets() {
		r := rs.Manifest().Mirrors.Releases
		if r == nil {
			continue
		}
		if how := r.Checked[r.Last]; how != engine.CheckRun && how != engine.CheckSource {
			t.Errorf("%s: last %s checked %q", rs.Ref(), r.Last, how)
		}
	}
}

// rangedCatalog is rule set lib with two versions: v1 covers 1.0 to 1.4,
// v2 2.0 to 2.3.
func rangedCatalog(t *testing.T) *engine.Catalog {
	t.Helper()
	fsys := fstest.MapFS{}
	for v, releases := range map[string]string{
		"v1": ` {first: "1.0", last: "1.4", checked: {"1.4": run, "1.0": source}}`,
		"v2": ` {first: "2.0", last: "2.3", checked: {"2.3": run, "2.1": run, "2.0": source}}`,
	} {
		copyVersion(t, fsys, "lib", v, releases)
	}
	cat, err := engine.Load(fsys, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// copyVersion adds name/version to fsys: jax@v3's files, its manifest
// renamed and its releases block replaced by "  releases:" and releases.
func copyVersion(t *testing.T, fsys fstest.MapFS, name, version, releases string) {
	t.Helper()
	files, err := fs.Glob(rules.FS, "jax/v3/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("jax/v3: %v", err)
	}
	block := regexp.MustCompile(`(?m)^  releases:.*\n(?:    .*\n)*`)
	for _, file := range files {
		data, err := fs.ReadFile(rules.FS, file)
		if err != nil {
			t.Fatal(err)
		}
		base := file[len("jax/v3/"):]
		if base == "manifest.yaml" {
			m := regexp.MustCompile(`(?m)^name: jax$`).ReplaceAllString(string(data), "name: "+name)
			m = regexp.MustCompile(`(?m)^version: v3$`).ReplaceAllString(m, "version: "+version)
			if !block.MatchString(m) {
				t.Fatal("jax/v3/manifest.yaml has no releases block to replace")
			}
			m = block.ReplaceAllLiteralString(m, "  releases:"+releases+"\n")
			data = []byte(m)
		}
		fsys[name+"/"+version+"/"+base] = &fstest.MapFile{Data: data}
	}
}

// TestInstalledReleasesUsersHave: the releases installed on the machines
// the tests run on, as their packages report them, resolve to the version
// checked against them: today's PyPI wheels without a warning, Debian's
// torch (1.13.1 reporting 1.13.0a0+gitunknown) by its base release with
// one, and a release newer than every one checked with one too.
func TestInstalledReleasesUsersHave(t *testing.T) {
	cat := loadEmbedded(t, engine.Options{})
	for ref, want := range map[string]struct {
		version string
		warned  bool
	}{
		"numpy==2.5.5":                   {"numpy@v2", false},
		"numpy==2.4.6":                   {"numpy@v1", false},
		"torch==2.15.0":                  {"torch@v3", false},
		"torch==2.15.0+cu128":            {"torch@v3", false},
		"torch==2.11.0":                  {"torch@v2", false},
		"torch==1.13.0a0+gitunknown":     {"torch@v1", true},
		"torch==2.16.0":                  {"torch@v3", true},
		"jax==0.12.0.1":                  {"jax@v3", false},
		"jax-export==0.12.0.1":           {"jax-export@v2", false},
		"jax-export==0.10.2":             {"jax-export@v0.10", false},
		"jax-export==0.9.2":              {"jax-export@v0.5", false},
		"jax-export==0.13.0.dev20261201": {"jax-export@v2", true},
	} {
		rs, w, err := cat.Lookup(ref)
		if err != nil {
			t.Errorf("Lookup(%s): %v", ref, err)
			continue
		}
		if rs.Ref() != want.version || (w != nil) != want.warned {
			t.Errorf("Lookup(%s) = %s, warning %v; want %s, a warning: %v", ref, rs.Ref(), w, want.version, want.warned)
		}
	}
}
