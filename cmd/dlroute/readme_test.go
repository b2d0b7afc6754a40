package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/readme"
)

// readmeBlocks returns the ```sh blocks of every page in readme.Pages,
// in order.
func readmeBlocks(t *testing.T) []readme.Block {
	t.Helper()
	blocks, err := readme.Blocks("../..")
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// Every page under docs/ is one whose blocks run, and the README links
// to each, so a page added or moved cannot leave its commands untested
// or unfound.
func TestREADMEPagesAllRun(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	front, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		page := "docs/" + filepath.Base(p)
		if !slices.Contains(readme.Pages, page) {
			t.Errorf("%s is not in readme.Pages, so TestREADMESnippetsRun does not run its commands", page)
		}
		if !strings.Contains(string(front), "]("+page+")") {
			t.Errorf("README.md does not link to %s", page)
		}
	}
	for _, page := range readme.Pages {
		if _, err := os.Stat(filepath.Join("../..", page)); err != nil {
			t.Errorf("readme.Pages names %s: %v", page, err)
		}
	}
}

// Every file a README command reads from the clone is in the clone:
// `resolve --json < testdata/inputs.jsonl`, `--buffer FILE`.
func TestREADMEReadsFilesThatExist(t *testing.T) {
	read := regexp.MustCompile(`(?:< |--buffer )([\w./-]+)`)
	n := 0
	for _, block := range readmeBlocks(t) {
		for _, m := range read.FindAllStringSubmatch(block.Text, -1) {
			if strings.HasPrefix(m[1], "/") || m[1] == strings.ToUpper(m[1]) { // outside the clone, or a placeholder
				continue
			}
			n++
			if _, err := os.Stat(filepath.Join("../..", m[1])); err != nil {
				t.Errorf("%s reads %s, which is not in the repository: %v", block.At, m[1], err)
			}
		}
	}
	if n == 0 {
		t.Error("found no file the README reads; has the pattern gone stale?")
	}
}

// testdata/inputs.jsonl, which the README feeds to resolve --json, starts
// with the seed's case, and every line is an input the rules answer.
func TestREADMEInputsJSONL(t *testing.T) {
	data, err := os.ReadFile("../../testdata/inputs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	status := run([]string{"resolve", "--json"}, strings.NewReader(string(data)), &stdout, &stderr)
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	seed := `{"error":{"type":"BufferError","message":"Unknown GPU platform for __dlpack__: <unknown>"},"rule":"gpu-unknown-platform","ruleset":"jax@v3"}`
	if status != 0 || stderr.String() != "" || len(lines) != strings.Count(string(data), "\n") || lines[0] != seed {
		t.Errorf("dlroute resolve --json < testdata/inputs.jsonl: status %d, stderr %q, stdout:\n%s\nwant status 0, one answer a line, the first:\n%s", status, stderr.String(), stdout.String(), seed)
	}
	for i, line := range lines {
		if strings.Contains(line, "input_error") || strings.Contains(line, "eval_error") {
			t.Errorf("testdata/inputs.jsonl:%d is not a valid input: %s", i+1, line)
		}
	}
}

// The operator's path writes its key, bundles and copy of the rules into a
// scratch directory, never into the clone, and copies only the rule
// sets: a copy of rules/rules.go would make the copy a Go package.
func TestREADMEOperatorPathStaysOutOfTheClone(t *testing.T) {
	blocks := readmeBlocks(t)
	i := slices.IndexFunc(blocks, func(b readme.Block) bool { return strings.HasPrefix(b.Before, "An operator's path") })
	if i < 0 {
		t.Fatal(`no page in readme.Pages has a block after "An operator's path"`)
	}
	lines := strings.Split(blocks[i].Text, "\n")
	if !strings.HasPrefix(lines[0], "demo=$(mktemp -d)") {
		t.Errorf("the operator's path starts with %q, want demo=$(mktemp -d)", lines[0])
	}
	inScratch := false
	for _, line := range lines {
		cmd, _, _ := strings.Cut(line, "#")
		if strings.Contains(cmd, "cp -r rules ") {
			t.Errorf("this line copies all of rules/, rules.go too: %s", line)
		}
		if strings.TrimSpace(cmd) == `cd "$demo"` {
			inScratch = true
		}
		if inScratch {
			continue
		}
		for _, part := range strings.Split(cmd, "&&") {
			args := strings.Fields(part)
			var targets []string // what the command writes
			for j, arg := range args {
				if (arg == "-o" || arg == "mkdir") && j+1 < len(args) {
					targets = append(targets, args[j+1])
				}
			}
			if len(args) > 0 && args[0] == "cp" {
				targets = append(targets, args[len(args)-1])
			}
			for _, target := range targets {
				if !strings.HasPrefix(target, `"$demo/`) {
					t.Errorf("before cd \"$demo\", this line writes %s into the clone: %s", target, line)
				}
			}
		}
	}
	if !inScratch {
		t.Error(`the operator's path never does cd "$demo"`)
	}

	// cp -r rules/*/ (or rules/jax rules/exchange ...) copies every rule
	// set, and no Go file: the glob, with its slash, matches folders only.
	copied := regexp.MustCompile(`cp -r ((?:rules/[\w*]+/? )+)`).FindStringSubmatch(blocks[i].Text)
	if copied == nil {
		t.Fatal("the operator's path copies no rule set")
	}
	var got []string
	for _, arg := range strings.Fields(copied[1]) {
		matches, _ := filepath.Glob(filepath.Join("../..", arg)) // Glob drops the slash: the shell's folders-only is checked here
		for _, m := range matches {
			st, err := os.Stat(m)
			switch {
			case err == nil && st.IsDir():
				got = append(got, "rules/"+filepath.Base(m))
			case !strings.HasSuffix(arg, "/"):
				t.Errorf("the operator's path copies %s, which is not a rule set's folder", m)
			}
		}
	}
	var sets []string
	entries, _ := os.ReadDir("../../rules")
	for _, e := range entries {
		if e.IsDir() {
			sets = append(sets, "rules/"+e.Name())
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(got)), sets) {
		t.Errorf("the operator's path copies %v, want every rule set: %v", got, sets)
	}
	for _, set := range sets {
		filepath.WalkDir(filepath.Join("../..", set), func(path string, d os.DirEntry, err error) error {
			if strings.HasSuffix(path, ".go") {
				t.Errorf("%s is copied with the rules, and makes the copy a Go package", path)
			}
			return err
		})
	}
}

// Should the README's examples be run in the clone after all, what they
// write is ignored: `git add -A` must never commit a private key.
func TestREADMEOutputsIgnored(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, path := range []string{"rules.key", "rules.key.pub", "rules.tar.gz", "myrules/jax/v3/rules.yaml", "site/index.html", "dlroute"} {
		cmd := exec.Command("git", "check-ignore", "-q", "--no-index", path)
		cmd.Dir = "../.."
		err := cmd.Run()
		if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == 1 {
			t.Errorf("%s, which a README example writes, is not ignored by .gitignore", path)
		} else if err != nil {
			t.Skipf("git check-ignore (not a git clone?): %v", err) // 128
		}
	}
}
