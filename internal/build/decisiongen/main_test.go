package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dlroute/dlroute/internal/testkit/testenv"
)

const src = "../../../wasm/decision/src"

// needBuildParts skips t in the quick loop, and where clang or wasm-opt
// is missing (fails under CI), naming the packages to install.
func needBuildParts(t *testing.T) {
	t.Helper()
	testenv.Short(t, "decisiongen runs clang")
	for _, program := range []string{"clang", WasmOpt} {
		if _, err := exec.LookPath(program); err != nil {
			testenv.Missing(t, "no "+program+", so the decision module cannot be built: apt-get install -y "+Packages)
		}
	}
}

// built is the sources built once per test binary, which
// TestCheckedInModuleIsFresh compares with the checked-in module and
// TestBuildIsReproducible with a second build.
var built = sync.OnceValues(func() ([]byte, error) { return Build("clang", src) })

// TestBuildIsReproducible: two builds of the sources give the same
// bytes, a WebAssembly module with no path of the machine in it.
func TestBuildIsReproducible(t *testing.T) {
	needBuildParts(t)
	a, err := built()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build("clang", src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("two builds differ: %d and %d bytes", len(a), len(b))
	}
	if !bytes.HasPrefix(a, []byte("\x00asm")) {
		t.Errorf("the build is not a WebAssembly module: % x", a[:min(8, len(a))])
	}
	abs, _ := filepath.Abs(src)
	for _, s := range []string{abs, "/usr/", "clang version"} {
		if bytes.Contains(a, []byte(s)) {
			t.Errorf("the module holds %q", s)
		}
	}
}

// TestCommandSortsSources: the sources are named in sorted order, after
// the fixed flags, so that the link's order, and the bytes, do not
// depend on the directory's listing.
func TestCommandSortsSources(t *testing.T) {
	cmd, err := Command("clang", src, "out.wasm")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, a := range cmd {
		if strings.HasSuffix(a, ".c") {
			files = append(files, a)
		}
	}
	for i := 1; i < len(files); i++ {
		if files[i-1] >= files[i] {
			t.Errorf("sources out of order: %q before %q", files[i-1], files[i])
		}
	}
	if len(files) == 0 || !strings.Contains(strings.Join(cmd, " "), "-mexec-model=reactor -Os") {
		t.Errorf("Command = %q", cmd)
	}
}

// TestMissingClangNamesPackages: without clang, the error says which
// Debian packages to install.
func TestMissingClangNamesPackages(t *testing.T) {
	var stderr bytes.Buffer
	code := doMain([]string{"-clang", "no-such-clang-14", "-src", src, "-o", filepath.Join(t.TempDir(), "d.wasm")}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "install the Debian packages "+Packages) {
		t.Errorf("doMain = %d, %q; want 1 and the packages", code, stderr.String())
	}
}

// TestMissingSysroot: clang's messages for a missing C library, linker
// or builtins are told apart from an error in the sources.
func TestMissingSysroot(t *testing.T) {
	for msg, want := range map[string]bool{
		"arena.c:11:10: fatal error: 'stdlib.h' file not found":                                                true,
		`clang: error: unable to execute command: Executable "wasm-ld" doesn't exist!`:                         true,
		"wasm-ld: error: cannot open /usr/lib/llvm-14/lib/clang/14.0.6/lib/wasi/libclang_rt.builtins-wasm32.a": true,
		"decode.c:3:10: fatal error: 'decision.h' file not found":                                              false,
		"decode.c:40:2: error: use of undeclared identifier 'x'":                                               false,
	} {
		if got := missingSysroot(msg); got != want {
			t.Errorf("missingSysroot(%q) = %v, want %v", msg, got, want)
		}
	}
}

// TestMissingWasmOptNamesPackages: with clang but no wasm-opt on the
// PATH, clang would build a larger module than the checked-in one
// without a word; Build refuses instead, naming binaryen.
func TestMissingWasmOptNamesPackages(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		t.Skip("no clang: the refusal is for a machine with clang but no wasm-opt")
	}
	bin := t.TempDir()
	if err := os.Symlink(clang, filepath.Join(bin, "clang")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	_, err = Build("clang", src)
	if err == nil || !strings.Contains(err.Error(), "wasm-opt not found") || !strings.Contains(err.Error(), "binaryen") {
		t.Errorf("Build without wasm-opt = %v; want an error naming wasm-opt and binaryen", err)
	}
}
