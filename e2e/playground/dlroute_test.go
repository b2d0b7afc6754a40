package playground

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/testkit/ruletest"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/rules"
)

// repoRoot is the root module's directory: the binary is built there, by
// that module's requirements, as a person's `go build ./cmd/dlroute`.
const repoRoot = "../.."

// binDir holds the dlroute binary these tests build, removed when they end.
var binDir string

// coldLoads is how many cold loads of each page the tests that record
// figures make (TestDecisionFirstColdLoad, TestPlaygroundFirstScreen's
// cold load): one in the test command, which checks what every load must
// show; BENCHMARKS.md's commands ask for more (-loads 5) to report
// medians.
var coldLoads = flag.Int("loads", 1, "cold loads of each page in the tests that record figures (BENCHMARKS.md)")

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dlroute-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// built is the dlroute binary of this checkout, built once per test
// binary, the first time a test asks for it (under -short none does).
var built = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "dlroute")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/dlroute/dlroute/cmd/dlroute")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/dlroute: %v\n%s", err, out)
	}
	return bin, nil
})

// dlroute is the path of the dlroute binary of this checkout.
func dlroute(t *testing.T) string {
	t.Helper()
	bin, err := built()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// servePlayground runs `dlroute playground --addr 127.0.0.1:0 ARGS...`
// until the test ends, and returns its URL.
func servePlayground(t *testing.T, args ...string) string {
	t.Helper()
	testenv.Short(t, "the playground in a browser")
	url, _ := servePlaygroundLog(t, args...)
	return url
}

// servePlaygroundLog is servePlayground, and also returns what the
// command writes to stderr. When the test ends the command is
// interrupted, as a person's Ctrl-C does, and must exit 0.
func servePlaygroundLog(t *testing.T, args ...string) (string, *testenv.Buffer) {
	t.Helper()
	cmd := exec.Command(dlroute(t), append([]string{"playground", "--addr", "127.0.0.1:0"}, args...)...)
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("dlroute playground: %v: %s", err, stderr.String())
		}
	})
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		t.Fatalf("dlroute playground printed no address: %s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	url, ok := strings.CutPrefix(lines.Text(), "dlroute playground: ")
	if !ok {
		t.Fatalf("dlroute playground printed %q", lines.Text())
	}
	return url, &stderr
}

// copyRules copies the embedded rules to a new directory and returns it
// with the path of the newest jax version's rules.yaml and that version's
// ref.
func copyRules(t *testing.T) (dir, rulesFile, ref string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.CopyFS(dir, rules.FS); err != nil {
		t.Fatal(err)
	}
	newest := ruleSet(t, rules.FS, "jax")
	return dir, filepath.Join(dir, newest.Name(), newest.Version(), engine.RulesFile), newest.Ref()
}

// insertAfter is ruletest.InsertAfter, failing the test on an error.
func insertAfter(t *testing.T, file, before, after string, lines ...string) {
	t.Helper()
	if _, err := ruletest.InsertAfter(file, before, after, lines...); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
