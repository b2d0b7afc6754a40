package main

// What lint and test print from a rules folder: characters a terminal acts
// on (ESC's colour codes, U+202E's reversal) come out escaped.

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/rules"
)

// copyVersionAs writes the embedded jax/v3 into dir as set/v3, its files
// edited by edit (nil: unchanged).
func copyVersionAs(t *testing.T, dir, set string, edit func(file, text string) string) {
	t.Helper()
	sub, err := fs.Sub(rules.FS, "jax/v3")
	if err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(dir, set, "v3")
	if err := os.CopyFS(to, sub); err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return
	}
	entries, _ := os.ReadDir(to)
	for _, e := range entries {
		if e.IsDir() { // evidence/: the runs' records, no rule file
			continue
		}
		p := filepath.Join(to, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(edit(e.Name(), string(data))), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLintEscapesWhatATerminalActsOn: lint of folders named with ESC's
// colour codes and U+202E, and of a manifest whose line holds U+202E,
// refuses them and prints no raw ESC or bidi character: the positions
// quoted, the names escaped.
func TestLintEscapesWhatATerminalActsOn(t *testing.T) {
	dir := t.TempDir()
	copyVersionAs(t, dir, "jax\x1b[31m", nil)
	copyVersionAs(t, dir, "jax\u202e", nil)
	copyVersionAs(t, dir, "jax", func(file, text string) string {
		if file != "manifest.yaml" {
			return text
		}
		return strings.Replace(text, "name: jax\n", "name: jax\u202e\u2066\n", 1)
	})
	stdout, stderr, status := runDlroute(t, "lint", "--rules", dir)
	out := stdout + stderr
	if status != 1 {
		t.Fatalf("lint: status %d, want 1:\n%s", status, out)
	}
	if i := strings.IndexFunc(out, func(r rune) bool { return r == 0x1b || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 }); i >= 0 {
		t.Errorf("lint printed a raw %U:\n%q", []rune(out[i:])[0], out)
	}
	for _, want := range []string{
		`"` + dir + `/jax\x1b[31m": rule-set folder "jax\x1b[31m" is not named with`,
		`"` + dir + `/jax\u202e": rule-set folder "jax\u202e" is not named with`,
		`name: jax\u202e\u2066`, // the manifest's line, under its error
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint's output lacks %s:\n%s", want, out)
		}
	}
}

// TestShown: shown escapes control and format characters and invalid
// UTF-8, and leaves tabs, newlines and every printable character.
func TestShown(t *testing.T) {
	for in, want := range map[string]string{
		"rules/jax/v3/rules.yaml:12:9: no\n | \tx\n | \t^": "rules/jax/v3/rules.yaml:12:9: no\n | \tx\n | \t^",
		"jäx → 日本 \"q\" \\":                                "jäx → 日本 \"q\" \\",
		"jax\x1b[31m":                                      `jax\x1b[31m`,
		"a\u202eb\u2066c\u2069\u200fd\x00\x7f\r":           `a\u202eb\u2066c\u2069\u200fd\x00\x7f\r`,
		"bad \xff byte":                                    `bad \xff byte`,
	} {
		if got := shown(in); got != want {
			t.Errorf("shown(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestResolveErrorEscapesWhatATerminalActsOn: the errors every other
// command prints (printError) are escaped as lint's are: a --ruleset
// pasted from elsewhere cannot recolour the terminal through the message
// that quotes it (the operating system's, here, which quotes nothing).
func TestResolveErrorEscapesWhatATerminalActsOn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rules\x1b[31m\u202e")
	stdout, stderr, status := runDlroute(t, "resolve", "--rules", dir, "--platform", "cpu")
	out := stdout + stderr
	if status == 0 {
		t.Fatalf("resolve: status 0 for a --rules folder that is not there:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("resolve printed a raw control or bidi character:\n%q", out)
	}
	if !strings.Contains(out, `\x1b[31m\u202e`) {
		t.Errorf("resolve's error does not show the folder, escaped:\n%s", out)
	}
}
