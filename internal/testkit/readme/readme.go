// Package readme reads the ```sh blocks of the README and of the pages
// beside it: what a person pastes. cmd/dlroute's tests check what the
// blocks say (the files they read, the test command, the operator's
// path); the e2e tier runs them (e2e/readme, TestREADMESnippetsRun),
// since they use Node.js, Python and curl.
package readme

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Pages are the pages, relative to the repository's root, whose ```sh
// blocks TestREADMESnippetsRun pastes, in this order, into one clone and
// one scratch directory: the README first, since the pages after it use
// what its blocks make (the copy of the rules in /tmp/myrules).
var Pages = []string{
	"README.md",
	"docs/commands.md",
	"docs/playground.md",
	"docs/embedding.md",
	"docs/operating.md",
}

// RunMark is the HTML comment before a ```sh block that says how
// TestREADMESnippetsRun runs it: "skip: why", "first line: why" (the rest
// cannot run inside a test), or "serves: TEXT" (it starts a server: the
// block runs until its output shows TEXT, then is stopped), or "exits: N
// why" (its last command's status, the block's, is N, as it documents).
// Unmarked blocks run to their end and succeed.
var RunMark = regexp.MustCompile(`<!-- readme-test: (skip|first line|serves|exits): ([^>]*) -->\s*$`)

// Block is one ```sh block of a page in Pages.
type Block struct {
	Text      string // the block, without its fences
	At        string // page:line of its first line
	Before    string // the paragraph before it
	Mode, Why string // its <!-- readme-test: mode: why --> mark (RunMark), if any
}

// Blocks returns the ```sh blocks of every page in Pages, in order, read
// from root, the repository's root.
func Blocks(root string) ([]Block, error) {
	var blocks []Block
	for _, page := range Pages {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, err
		}
		parts := strings.Split(string(data), "```sh\n")
		for i := 1; i < len(parts); i++ {
			b := Block{At: fmt.Sprintf("%s:%d", page, strings.Count(strings.Join(parts[:i], "```sh\n"), "\n")+2)}
			b.Text, _, _ = strings.Cut(parts[i], "```")
			prose := strings.Split(strings.TrimSpace(parts[i-1]), "\n\n")
			b.Before = prose[len(prose)-1]
			if m := RunMark.FindStringSubmatch(parts[i-1]); m != nil {
				b.Mode, b.Why = m[1], m[2]
			}
			blocks = append(blocks, b)
		}
	}
	return blocks, nil
}
