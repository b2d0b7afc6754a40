package engine

import (
	"context"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"cel.dev/cel-go/cel"
	"google.golang.org/protobuf/proto"

	"github.com/dlroute/dlroute/rules"
)

// withoutParsedFile is a copy of the embedded rules with no ParsedFile.
// (ruletest.Rules cannot serve here: ruletest imports bundle, which
// imports engine.)
func withoutParsedFile() fstest.MapFS {
	fsys := fstest.MapFS{}
	fs.WalkDir(rules.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != ParsedFile {
			data, _ := rules.FS.ReadFile(p)
			fsys[p] = &fstest.MapFile{Data: data}
		}
		return err
	})
	return fsys
}

// TestParsedFileDecidesAsText: the embedded rules, loaded with their
// ParsedFile and without it, decide and explain every case of every
// version alike, and the file is the one WriteParsed makes of them.
func TestParsedFileDecidesAsText(t *testing.T) {
	ctx := context.Background()
	with, err := Load(rules.FS, Options{TrustParsed: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rules.FS.ReadFile(ParsedFile); err != nil {
		t.Fatalf("the embedded rules have no %s: %v", ParsedFile, err)
	}
	without, err := Load(withoutParsedFile(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range without.RuleSets() {
		other, err := with.RuleSet(rs.Ref())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rs.Cases() {
			want, wantErr := rs.Explain(ctx, c.Input)
			got, gotErr := other.Explain(ctx, c.Input)
			w, _ := json.Marshal(want)
			g, _ := json.Marshal(got)
			if string(w) != string(g) || (wantErr == nil) != (gotErr == nil) {
				t.Errorf("%s %s: explained %s, %v with %s; %s, %v from the text", rs.Ref(), c.Name, g, gotErr, ParsedFile, w, wantErr)
			}
		}
	}
}

// TestParsedFileIsUsed: where Options.TrustParsed says so, Load takes an
// expression's parsed form from the file rather than parsing its text,
// which a file that says the catch-all rule's `true` is `false` shows;
// the same file written for a parser with other macros is not used, and
// without TrustParsed (a directory from elsewhere: issue 25) no file is.
func TestParsedFileIsUsed(t *testing.T) {
	ctx := context.Background()
	data, err := WriteParsed(withoutParsedFile(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, bad := decodeParsed(data)
	if bad != "" {
		t.Fatal(bad)
	}
	if _, ok := x.entries["true"]; !ok {
		t.Fatal(`the parsed file has no "true"`)
	}
	env, err := cel.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Parse("false")
	if iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	pe, _ := cel.AstToParsedExpr(ast)
	if x.entries["true"], err = proto.Marshal(pe); err != nil {
		t.Fatal(err)
	}
	mystery := Input{"platform": "mystery", "platform_version": "mystery 1"}
	for _, c := range []struct {
		key     string
		trusted bool
		want    Code // of the catch-all's input
	}{
		{x.key, true, CodeNoMatch},       // true is false: no rule matches
		{"macros has:1:false", true, ""}, // a file for other macros: the text decides
		{x.key, false, ""},               // a file not trusted: the text decides
	} {
		x.key = c.key
		fsys := withoutParsedFile()
		fsys[ParsedFile] = &fstest.MapFile{Data: x.encode()}
		cat, err := Load(fsys, Options{Select: []string{"jax@v3"}, TrustParsed: c.trusted})
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := cat.RuleSet("jax@v3")
		d, err := rs.Resolve(ctx, mystery)
		if got := Code(""); err != nil {
			got = Errors(err)[0].Code
			if got != c.want {
				t.Errorf("key %.40s..., trusted %v: %v, want code %q", c.key, c.trusted, err, c.want)
			}
		} else if c.want != "" || d.Rule != "unsupported-platform" {
			t.Errorf("key %.40s..., trusted %v: decided %v, want code %q", c.key, c.trusted, d, c.want)
		}
	}
}

// TestParsedFileErrors: a trusted ParsedFile that is not one is an error
// at its position, with a hint (one not trusted is not read); an
// expression taken from the file that fails to type-check where it is
// used is positioned as from its text.
func TestParsedFileErrors(t *testing.T) {
	for _, data := range []string{"not a parsed file", parsedMagic, parsedMagic + "key\n\x05ab"} {
		fsys := withoutParsedFile()
		fsys[ParsedFile] = &fstest.MapFile{Data: []byte(data)}
		_, err := Load(fsys, Options{TrustParsed: true})
		list := Errors(err)
		if len(list) != 1 || list[0].Code != CodeSchema || list[0].Pos == nil || list[0].Pos.File != "rules/parsed.bin" || !strings.Contains(list[0].Hint, "go generate ./rules") {
			t.Errorf("%q: %v, want one schema error at rules/parsed.bin with a hint", data, err)
		}
		if _, err := Load(fsys, Options{Select: []string{"jax@v3"}}); err != nil {
			t.Errorf("%q, not trusted: %v, want it not read", data, err)
		}
	}

	// jax@v3 with shards undeclared: its rule's `shards != 1` fails to
	// type-check, taken from the file or parsed from the text alike.
	typo := withoutParsedFile()
	text := string(typo["jax/v3/rules.yaml"].Data)
	typo["jax/v3/rules.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(text, "  shards:\n", "  shard_count:\n", 1))}
	_, fromText := Load(typo, Options{Select: []string{"jax@v3"}})
	data, err := WriteParsed(withoutParsedFile(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	typo[ParsedFile] = &fstest.MapFile{Data: data}
	_, fromFile := Load(typo, Options{Select: []string{"jax@v3"}, TrustParsed: true})
	if fromText == nil || !strings.Contains(fromText.Error(), "shards") {
		t.Fatalf("jax@v3 without shards: %v", fromText)
	}
	if fromFile == nil || fromFile.Error() != fromText.Error() {
		t.Errorf("with %s:\n%v\nfrom the text:\n%v", ParsedFile, fromFile, fromText)
	}
}
