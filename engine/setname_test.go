package engine_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
)

// TestLoadRefusesBadSetNames: a rule-set folder named outside
// engine.NamePattern is refused with CodeBadName at the folder, its name
// quoted in the message and the position, so that no terminal acts on
// its characters; hidden folders are still left out, and the shipped
// kinds of name load.
func TestLoadRefusesBadSetNames(t *testing.T) {
	for _, c := range []struct{ dir, quoted string }{
		{"jax\x1b[31m", `"jax\x1b[31m"`},
		{"jax\u202e", `"jax\u202e"`},
		{"Jax", `"Jax"`},
		{"jax export", `"jax export"`},
		{"jax@v1", `"jax@v1"`},
		{"-jax", `"-jax"`},
	} {
		fsys := versionFS(t, "v3")
		moveSet(fsys, "jax", c.dir)
		_, err := engine.Load(fsys, engine.Options{})
		errs := engine.Errors(err)
		if len(errs) != 1 || errs[0].Code != engine.CodeBadName {
			t.Errorf("Load of rules/%q: got %v, want one %s", c.dir, err, engine.CodeBadName)
			continue
		}
		e := errs[0]
		if e.Pos == nil || e.Pos.File != "rules/"+c.dir || !strings.Contains(e.Message, c.quoted) || e.Hint == "" {
			t.Errorf("Load of rules/%q: got %v (hint %q), want it at the folder, quoting %s", c.dir, e, e.Hint, c.quoted)
		}
		if strings.ContainsAny(e.Error(), "\x1b\u202e") {
			t.Errorf("Load of rules/%q: the error's text holds the raw name: %q", c.dir, e.Error())
		}
	}
	for _, dir := range []string{"jax-export", "jax_2", "numpy.v2", "0day", ".hidden"} {
		fsys := versionFS(t, "v3")
		if !strings.HasPrefix(dir, ".") {
			moveSet(fsys, "jax", dir)
		} else {
			fsys[dir+"/v1/manifest.yaml"] = &fstest.MapFile{Data: []byte("not: [a manifest")}
		}
		// The manifest still names jax: only the folder's name is checked.
		if _, err := engine.Load(fsys, engine.Options{}); hasCode(err, engine.CodeBadName) {
			t.Errorf("Load of rules/%s: %v", dir, err)
		}
	}
}

// moveSet renames rule-set folder from to to.
func moveSet(fsys fstest.MapFS, from, to string) {
	for name, f := range fsys {
		if rest, ok := strings.CutPrefix(name, from+"/"); ok {
			delete(fsys, name)
			fsys[to+"/"+rest] = f
		}
	}
}

// TestPositionQuotesWhatATerminalActsOn: a position whose file holds a
// control or bidi character prints it quoted; any other prints as it is.
func TestPositionQuotesWhatATerminalActsOn(t *testing.T) {
	for _, c := range []struct {
		pos  engine.Position
		want string
	}{
		{engine.Position{File: "rules/jax/v3/rules.yaml", Line: 12, Column: 9}, "rules/jax/v3/rules.yaml:12:9"},
		{engine.Position{File: `C:\rules\jax/v3/rules.yaml`, Line: 12}, `C:\rules\jax/v3/rules.yaml:12`},
		{engine.Position{File: "rules/jäx/v3"}, "rules/jäx/v3"},
		{engine.Position{File: "rules/jax\x1b[31m/v3/rules.yaml", Line: 12, Column: 9}, `"rules/jax\x1b[31m/v3/rules.yaml":12:9`},
		{engine.Position{File: "rules/jax\u202e/v3"}, `"rules/jax\u202e/v3"`},
		{engine.Position{File: "rules/\u2066jax\u2069/v3", Line: 1}, `"rules/\u2066jax\u2069/v3":1`},
		{engine.Position{File: "rules/jax\n/v3"}, `"rules/jax\n/v3"`},
		{engine.Position{File: "rules/jax\xff/v3"}, `"rules/jax\xff/v3"`},
	} {
		if got := c.pos.String(); got != c.want {
			t.Errorf("Position{File: %q}.String() = %s, want %s", c.pos.File, got, c.want)
		}
	}
}
