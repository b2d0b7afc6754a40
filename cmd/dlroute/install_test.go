package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

// TestInstalledBinary is a user who built dlroute with `go build -o` and
// runs it elsewhere: from a directory outside the checkout, with an empty
// home and an empty dlroute cache (Go's own module and build caches kept,
// as on a machine that has just built dlroute). The decision module is
// embedded; the playground's compiler module is built from the source
// the binary carries.
func TestInstalledBinary(t *testing.T) {
	testenv.Short(t, "building the binary and its module in an empty cache")
	bin := filepath.Join(t.TempDir(), "dlroute")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -o: %v\n%s", err, out)
	}
	home, work := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "PATH=" + os.Getenv("PATH")}
	for _, name := range []string{"GOMODCACHE", "GOCACHE", "GOPROXY", "GOSUMDB", "GOTOOLCHAIN", "GOFLAGS"} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		env = append(env, name+"="+strings.TrimSpace(string(out)))
	}
	dlroute := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dlroute %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// resolve decides and explains in the decision module the binary
	// embeds (package wasm/decision): nothing is built, and no command
	// but the playground builds the compiler module.
	out := dlroute("resolve", "--engine", "wasm", "--platform", "gpu", "--platform-version", "<unknown>")
	want := `{"error":{"type":"BufferError","message":"Unknown GPU platform for __dlpack__: <unknown>"},"rule":"gpu-unknown-platform","ruleset":"jax@v3"}`
	if strings.Contains(out, "building") || out != want+"\n" {
		t.Errorf("resolve --engine wasm, the first run in an empty cache:\n%s\nwant only %s", out, want)
	}
	if out := dlroute("resolve", "--explain", "--engine", "wasm", "--platform", "cpu", "--platform-version", "cpu"); !strings.Contains(out, `"rule":"cpu"`) {
		t.Errorf("resolve --explain --engine wasm:\n%s\nwant the explanation", out)
	}
	if built, _ := filepath.Glob(filepath.Join(home, ".cache", "dlroute", "wasm", "*.wasm")); len(built) != 0 {
		t.Errorf("the empty cache holds modules %v after resolve, want none", built)
	}

	native := dlroute("test")
	if out := dlroute("test", "--engine", "wasm"); out != native || !strings.HasSuffix(out, " 0 failed\n") {
		t.Errorf("test --engine wasm:\n%s\nwant what the native engine says:\n%s", out, native)
	}

	site := filepath.Join(work, "site")
	dlroute("playground", "--static", site)
	for _, f := range []string{"index.html", "dlroute.wasm"} {
		if st, err := os.Stat(filepath.Join(site, f)); err != nil || st.Size() == 0 {
			t.Errorf("playground --static wrote no %s: %v", f, err)
		}
	}
	if entries, _ := os.ReadDir(work); len(entries) != 1 {
		t.Errorf("the working directory holds %d entries, want only the site", len(entries))
	}
}
