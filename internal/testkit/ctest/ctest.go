// Package ctest builds C programs against libdlroute for tests: the
// library from this checkout (wasmbuild.Library, cached by a hash of its
// source) and a program compiled with the system's C compiler, linked to
// it. Where there is no C compiler the test skips, except under CI
// (CI=true), where a host that cannot be tested fails.
package ctest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

var (
	libOnce sync.Once
	libDir  string
	libErr  error
)

// Library returns a directory holding libdlroute.so built from this
// checkout, shared by the tests of one process.
func Library(t testing.TB) string {
	t.Helper()
	Compiler(t)
	libOnce.Do(func() {
		var path string
		path, libErr = wasmbuild.Library(context.Background(), wasmbuild.Options{Progress: os.Stderr})
		if libErr != nil {
			return
		}
		// A directory of the process's own: the cache may prune the build
		// under another process's test.
		libDir, libErr = os.MkdirTemp("", "libdlroute-test-")
		if libErr == nil {
			libErr = copyFile(path, filepath.Join(libDir, "libdlroute.so"))
		}
	})
	if libErr != nil {
		t.Fatal(libErr)
	}
	return libDir
}

// Compiler returns the C compiler, or skips (fails under CI) where there
// is none.
func Compiler(t testing.TB) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	p, err := exec.LookPath(cc)
	if err != nil {
		testenv.Missing(t, "no C compiler ("+cc+"), so the C host does not run (apt-get install -y gcc)")
	}
	return p
}

// Program compiles the C source files srcs (with the -I of dlroute.h,
// dir) against libdlroute and returns the executable's path, which finds
// the library by its run path.
func Program(t testing.TB, headerDir string, srcs ...string) string {
	t.Helper()
	cc := Compiler(t)
	lib := Library(t)
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(srcs[0]), ".c"))
	args := append([]string{"-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-pthread", "-I", headerDir, "-o", out}, srcs...)
	args = append(args, "-L", lib, "-ldlroute", "-Wl,-rpath,"+lib)
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, b)
	}
	return out
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o755)
}
