package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const src = "../../../wasm/decision/src"

// TestBuildIsReproducible: two builds of the sources give the same
// bytes, a WebAssembly module with no path of the machine in it.
func TestBuildIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: decisiongen runs clang in the full go test ./...")
	}
	if _, err := exec.LookPath("clang"); err != nil {
		t.Skip("no clang: install " + Packages)
	}
	a, err := Build("clang", src)
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
