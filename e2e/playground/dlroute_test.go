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
	if srv := embeddedServer; srv != nil {
		if err := srv.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "the shared server of the embedded rules:", err)
			code = 1
		}
	}
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
// until the test ends, when it is interrupted, as a person's Ctrl-C
// does, and must exit 0; it returns its URL. With no ARGS, the embedded
// rules, every test shares one server (embedded): a page's tests each
// open it in a browser of their own, and such a server holds nothing a
// page changes.
func servePlayground(t *testing.T, args ...string) string {
	t.Helper()
	testenv.Short(t, "the playground in a browser")
	if len(args) == 0 {
		srv, err := embedded()
		if err != nil {
			t.Fatal(err)
		}
		return srv.url
	}
	srv, err := startPlayground(dlroute(t), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.stop(); err != nil {
			t.Error(err)
		}
	})
	return srv.url
}

// playgroundServer is a running `dlroute playground`.
type playgroundServer struct {
	cmd    *exec.Cmd
	url    string
	stderr *testenv.Buffer
}

// startPlayground starts `bin playground --addr 127.0.0.1:0 ARGS...` and
// waits for the address it prints.
func startPlayground(bin string, args ...string) (*playgroundServer, error) {
	srv := &playgroundServer{cmd: exec.Command(bin, append([]string{"playground", "--addr", "127.0.0.1:0"}, args...)...), stderr: &testenv.Buffer{}}
	srv.cmd.Stderr = srv.stderr
	stdout, err := srv.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := srv.cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		srv.cmd.Process.Kill()
		srv.cmd.Wait()
		return nil, fmt.Errorf("dlroute playground printed no address: %s", srv.stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	url, ok := strings.CutPrefix(lines.Text(), "dlroute playground: ")
	if !ok {
		srv.cmd.Process.Kill()
		srv.cmd.Wait()
		return nil, fmt.Errorf("dlroute playground printed %q", lines.Text())
	}
	srv.url = url
	return srv, nil
}

// stop interrupts the server, as a person's Ctrl-C does: it must exit 0.
func (srv *playgroundServer) stop() error {
	srv.cmd.Process.Signal(syscall.SIGINT)
	if err := srv.cmd.Wait(); err != nil {
		return fmt.Errorf("dlroute playground: %v: %s", err, srv.stderr.String())
	}
	return nil
}

// embedded is the server of the embedded rules that the tests share,
// started by the first that asks and stopped by TestMain.
func embedded() (*playgroundServer, error) {
	embeddedOnce.Do(func() {
		bin, err := built()
		if err != nil {
			embeddedErr = err
			return
		}
		embeddedServer, embeddedErr = startPlayground(bin)
	})
	return embeddedServer, embeddedErr
}

var (
	embeddedOnce   sync.Once
	embeddedServer *playgroundServer // nil until a test asks, or when it did not start
	embeddedErr    error
)

// copyRules copies jax and exchange, every version (ruletest.Rules), to
// a directory to edit: the other rule sets would only give the command
// and the page more to load on every change. copyAllRules copies every
// rule set, for the interop grid, which needs the other libraries.
func copyRules(t *testing.T) (dir, rulesFile, ref string)    { return ruletest.Copy(t, ruletest.Rules()) }
func copyAllRules(t *testing.T) (dir, rulesFile, ref string) { return ruletest.Copy(t, rules.FS) }

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
