package main

// Each testdata/*.txt file is a transcript of dlroute commands, run in
// process through run() and compared with what the file says they print.
// A transcript's lines are:
//
//	# a comment          comments and blank lines go before a command
//	$ dlroute ARGS...    a command; ARGS split at spaces, and an ARG in
//	                     single quotes, such as '<unknown>', may hold spaces
//	< LINE               a line of the command's stdin
//	> LINE               a line it must write to stdout
//	2> LINE              a line it must write to stderr
//	? N                  its exit status, when not 0
//
// A command must print exactly its > and 2> lines, nothing more.
// `go test ./cmd/dlroute -run Transcript -update` rewrites every command's
// expected output from what it printed; `git diff testdata` then shows each
// changed line.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected outputs of testdata/*.txt")

// step is one command of a transcript and what it must print.
type step struct {
	text           string // the comments before it, its $ line and its < lines
	line           int    // the line number of its $ line
	command        string // its $ line, without the $
	args           []string
	stdin          string
	stdout, stderr string
	status         int
}

func TestTranscript(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no testdata/*.txt transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			rewritten := ""
			for _, want := range parseTranscript(t, file, string(data)) {
				got := want
				if testing.Short() && slices.Contains(want.args, "wasm") && !*update {
					continue // the module's start: the full run's
				}
				if want.args != nil {
					var stdout, stderr strings.Builder
					got.status = run(want.args, strings.NewReader(want.stdin), &stdout, &stderr)
					got.stdout, got.stderr = stdout.String(), withoutBuildProgress(stderr.String())
				}
				if got.output() != want.output() && !*update {
					t.Errorf("%s:%d: $ %s\ngot:\n%swant:\n%s", file, want.line, want.command, got.output(), want.output())
				}
				rewritten += got.text + got.output()
			}
			if *update && rewritten != string(data) {
				if err := os.WriteFile(file, []byte(rewritten), 0o666); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// withoutBuildProgress drops the lines wasmbuild prints when a command is
// the first to need a module since its source changed: whether it
// appears depends on the cache and on which test ran first, not on the
// command.
func withoutBuildProgress(stderr string) string {
	var out []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(line, "building the WebAssembly module from ") && !strings.HasPrefix(line, "building the decision module from ") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// output is what s prints, in transcript form.
func (s step) output() string {
	out := prefixLines("> ", s.stdout) + prefixLines("2> ", s.stderr)
	if s.status != 0 {
		out += fmt.Sprintf("? %d\n", s.status)
	}
	return out
}

// prefixLines writes each line of text after prefix, trimming the space
// that would end the line of an empty one.
func prefixLines(prefix, text string) (out string) {
	for line := range strings.Lines(text) {
		if line == "\n" {
			out += strings.TrimSpace(prefix) + line
			continue
		}
		out += prefix + line
	}
	return out
}

func parseTranscript(t *testing.T, file, data string) (steps []step) {
	var s step
	n := 0
	for line := range strings.Lines(data) {
		n++
		kind, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if strings.HasPrefix(kind, "#") {
			kind = "#"
		}
		if s.args != nil && (kind == "#" || kind == "" || kind == "$") {
			steps, s = append(steps, s), step{}
		}
		switch kind {
		case "#", "":
			s.text += line
		case "$":
			s.text += line
			s.line, s.command, s.args = n, rest, splitArgs(t, file, n, rest)
		case "<":
			s.text += line
			s.stdin += rest + "\n"
		case ">":
			s.stdout += rest + "\n"
		case "2>":
			s.stderr += rest + "\n"
		case "?":
			if _, err := fmt.Sscan(rest, &s.status); err != nil {
				t.Fatalf("%s:%d: ? wants an exit status: %v", file, n, err)
			}
		default:
			t.Fatalf("%s:%d: a line starts with #, $, <, >, 2> or ?, not %q", file, n, kind)
		}
	}
	return append(steps, s)
}

// splitArgs splits "dlroute ARGS..." into ARGS, as described above.
func splitArgs(t *testing.T, file string, n int, command string) (args []string) {
	rest, ok := strings.CutPrefix(command+" ", "dlroute ")
	for rest = strings.TrimLeft(rest, " "); ok && rest != ""; rest = strings.TrimLeft(rest, " ") {
		var arg string
		if quoted, ok2 := strings.CutPrefix(rest, "'"); ok2 {
			arg, rest, ok = strings.Cut(quoted, "'")
		} else {
			arg, rest, _ = strings.Cut(rest, " ")
		}
		args = append(args, arg)
	}
	if !ok {
		t.Fatalf("%s:%d: want $ dlroute ARGS, with each quote closed: %s", file, n, command)
	}
	return append([]string{}, args...) // not nil: a command with no ARGS runs too
}
