package readme_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dlroute/dlroute/internal/testkit/readme"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// readmeBlocks returns the ```sh blocks of every page in readme.Pages,
// in order.
func readmeBlocks(t *testing.T) []readme.Block {
	t.Helper()
	blocks, err := readme.Blocks(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// readmeFailure is what a command a person pasted prints when the README
// is wrong, even where the block's last command, whose status is the
// block's, succeeds: dlroute's own errors and usage errors, the shell's (a command
// or a file that is not there), another tool's, a compiler's or a
// script's error at its file and line, a Python traceback.
var readmeFailure = regexp.MustCompile(`(?m)^error: |^(bash|cp|mkdir|sed|cat|gcc|ld|curl|python3|node): |^\S+\.(c|mjs|py):\d+|^Traceback |flag provided but not defined|^Usage: `)

// rewriteScratch replaces /tmp in block, as a README block names it, by
// dir, in every spelling a pasted command can use: "/tmp/copy.bin",
// "-L/tmp", "-Wl,-rpath,/tmp", "/tmp" alone. It is /tmp as a whole path:
// after the start, a compiler's -L, -I or -B, or a character that no path
// has inside it; before "/", the end, or such a character. "/tmpfs",
// "/var/tmp" and "build/tmp" are not it.
func rewriteScratch(block, dir string) string {
	inPath := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.-/", c) >= 0
	}
	var out strings.Builder
	for i := 0; i < len(block); i++ {
		if strings.HasPrefix(block[i:], "/tmp") {
			before := i == 0 || !inPath(block[i-1]) || i >= 2 && block[i-2] == '-' && strings.IndexByte("LIB", block[i-1]) >= 0
			j := i + len("/tmp")
			after := j == len(block) || block[j] == '/' || !inPath(block[j])
			if before && after {
				out.WriteString(dir)
				i = j - 1
				continue
			}
		}
		out.WriteByte(block[i])
	}
	return out.String()
}

// namesTmp is any /tmp a line still names, more widely than
// rewriteScratch finds them ("/var/tmp", "dir/tmp/"), so a gap in the
// rewrite shows.
var namesTmp = regexp.MustCompile(`/tmp([^A-Za-z0-9]|$)`)

// withScratch rewrites every /tmp of a README block to dir, the test's own
// stand-in for it, and reports the lines that still name /tmp after the
// rewrite (none, unless the rewrite has a gap), so that no block reads a
// file an earlier run left in the machine's /tmp.
func withScratch(block, dir string) (script string, left []string) {
	for _, line := range strings.Split(rewriteScratch(block, "<scratch>"), "\n") {
		if namesTmp.MatchString(line) {
			left = append(left, line)
		}
	}
	return rewriteScratch(block, dir), left
}

// TestREADMESnippetsRun pastes every ```sh block of the README and of the
// pages beside it (readme.Pages), in order, into bash in one fresh clone (the tracked files, committed into a new
// repository), with the dlroute binary on $PATH and every /tmp, and
// $TMPDIR, replaced by a directory of the test's own, and every port it
// serves on by a free one (withOwnPorts). No block may print
// an error, name a /tmp the rewrite missed, leave out an output it shows,
// or leave the clone with anything untracked that is not ignored.
func TestREADMESnippetsRun(t *testing.T) {
	testenv.Short(t, "running the README's commands")
	for _, tool := range []string{"git", "node", "python3", "gcc", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, tool+" is not installed, and the README's commands use it")
		}
	}
	clone, tmp, bin := t.TempDir(), t.TempDir(), t.TempDir()
	files, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimSuffix(string(files), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			continue // deleted in the working tree
		}
		p := filepath.Join(clone, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", clone, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "clone")
	// Each step a subtest, so the test command shows each as it ends:
	// the build, then each block, named by where it is.
	if !t.Run("build", func(t *testing.T) {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, "dlroute"), "github.com/dlroute/dlroute/cmd/dlroute")
		build.Dir = repoRoot
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/dlroute: %v\n%s", err, out)
		}
	}) {
		return
	}

	for _, b := range readmeBlocks(t) {
		block, at, mode, why := b.Text, b.At, b.Mode, b.Why
		if mode == "skip" {
			t.Logf("%s: not run: %s", at, why)
			continue
		}
		t.Run(at, func(t *testing.T) { runBlock(t, block, at, mode, why, clone, tmp, bin) })
	}
	if left := git("status", "--porcelain", "--untracked-files=all"); left != "" {
		t.Errorf("the README's commands leave files in the clone that are neither tracked nor ignored:\n%s", left)
	}
}

// runBlock runs the block at (mode and why as its readme-test comment
// says) as a person pastes it, in the clone, with bin on its PATH and
// tmp for its /tmp, and checks that it passes and prints what it shows.
func runBlock(t *testing.T, block, at, mode, why, clone, tmp, bin string) {
	if mode == "first line" {
		block, _, _ = strings.Cut(block, "\n")
	}
	script, left := withScratch(block, tmp)
	if len(left) > 0 {
		t.Fatalf("%s: the block names /tmp where the test cannot give it a directory of its own, so it would read what an earlier run left there:\n%s", at, strings.Join(left, "\n"))
	}
	script, left, err := withOwnPorts(script)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("%s: the block starts a server on its default port, which another run of the tests may hold; name it (--addr 127.0.0.1:8080), and the test gives the block a free port of its own:\n%s", at, strings.Join(left, "\n"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", script)
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "PYTHONUNBUFFERED=1", "TMPDIR="+tmp)
	var out testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if mode == "serves" {
		runUntil(t, cmd, &out, why, at)
	} else if err := cmd.Run(); ctx.Err() != nil {
		t.Errorf("%s: the block had not ended when the test's time ran out:\n%s", at, out.String())
	} else if status := exitStatus(err); status != wantStatus(mode, why) || readmeFailure.MatchString(out.String()) {
		t.Errorf("%s: the block, pasted, fails (%v):\n%s\noutput:\n%s", at, err, block, out.String())
	} else {
		for _, want := range shownOutputs(block) {
			if !slices.Contains(strings.Split(out.String(), "\n"), want) {
				t.Errorf("%s: the block shows the output\n\t%s\nbut, pasted, prints no such line:\n%s", at, want, out.String())
			}
		}
	}
}

// runUntil starts a block that serves, waits for want in its output (or
// for it to end, which fails), then stops its process group.
func runUntil(t *testing.T, cmd *exec.Cmd, out *testenv.Buffer, want, at string) {
	t.Helper()
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(testenv.Patience(t))
	for !bytes.Contains([]byte(out.String()), []byte(want)) {
		select {
		case err := <-done:
			t.Errorf("%s: the block ended (%v) before it printed %q:\n%s", at, err, want, out.String())
			return
		case <-deadline:
			t.Errorf("%s: the block had not printed %q when the test's time ran out:\n%s", at, want, out.String())
			killGroup(cmd)
			<-done
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	killGroup(cmd)
	<-done
	if readmeFailure.MatchString(out.String()) {
		t.Errorf("%s: the block, pasted, fails:\n%s", at, out.String())
	}
}

// exitStatus is the status of a block that ran to its end.
func exitStatus(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// wantStatus is the status a block must end with: 0, or the N of its
// "exits: N why" mark.
func wantStatus(mode, why string) int {
	if mode != "exits" {
		return 0
	}
	n, err := strconv.Atoi(strings.Fields(why + " x")[0])
	if err != nil {
		return -1
	}
	return n
}

// shownOutputs is what a block says its commands print: a comment line
// that holds a JSON object ("# {...}"), printed, as a whole line, by the
// command before it.
func shownOutputs(block string) []string {
	var out []string
	for _, line := range strings.Split(block, "\n") {
		if shown, ok := strings.CutPrefix(line, "# {"); ok {
			out = append(out, "{"+shown)
		}
	}
	return out
}

// TestREADMEScratchRewrite: every spelling of /tmp a pasted command uses
// is the test's directory after the rewrite, a path that only looks like
// it is left alone, and what the rewrite cannot place is reported.
func TestREADMEScratchRewrite(t *testing.T) {
	const dir = "/T/scratch"
	for _, c := range []struct{ in, want string }{
		{"cp -r rules /tmp/myrules", "cp -r rules /T/scratch/myrules"},
		{"gcc -L/tmp -ldlroute -Wl,-rpath,/tmp", "gcc -L/T/scratch -ldlroute -Wl,-rpath,/T/scratch"},
		{"cd /tmp && ls /tmp/", "cd /T/scratch && ls /T/scratch/"},
		{`out="/tmp/copy.bin" x='/tmp'`, `out="/T/scratch/copy.bin" x='/T/scratch'`},
		{"PATH=/tmp:/tmp:$PATH", "PATH=/T/scratch:/T/scratch:$PATH"},
		{"--out=/tmp/copy.bin", "--out=/T/scratch/copy.bin"},
		{"echo /tmp", "echo /T/scratch"},
		{"mount -t tmpfs none /tmpfs", "mount -t tmpfs none /tmpfs"},
	} {
		got, left := withScratch(c.in, dir)
		if got != c.want || len(left) != 0 {
			t.Errorf("withScratch(%q) = %q, left %q; want %q, nothing left", c.in, got, left, c.want)
		}
	}
	for _, in := range []string{"ls /var/tmp/x", "ls build/tmp/x"} {
		if _, left := withScratch(in, dir); len(left) != 1 {
			t.Errorf("withScratch(%q) left %q; want the line reported, as the test cannot give it a directory of its own", in, left)
		}
	}
}
