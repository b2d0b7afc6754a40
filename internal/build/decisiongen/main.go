// Command decisiongen builds the decision module, decision.wasm, from its
// C sources (wasm/decision/src/*.c: package plan ported to C) with clang
// and wasi-libc, as a WebAssembly reactor of ABI version 3
// (wasm/decision/ABI.md). From the module's root:
//
//	go run ./internal/build/decisiongen [-src wasm/decision/src] [-o wasm/decision/decision.wasm]
//
// (go generate ./wasm/decision runs it) runs, in the source directory,
// the command Command returns:
//
//	clang --target=wasm32-wasi -mexec-model=reactor -Os -std=c11 -Wall -Wextra -Werror
//	  -Wl,--strip-all -Wl,--stack-first -Wl,-z,stack-size=1048576
//	  -ffile-prefix-map=SRC=. -o OUT answer.c arena.c decode.c ...
//
// The sources are named in sorted order and the output holds no paths,
// names or timestamps, so the same sources and the same clang give the
// same bytes (TestBuildIsReproducible). At -Os clang's driver runs
// binaryen's wasm-opt -Os over the linked module when wasm-opt is on the
// PATH, and silently does not when it is not, so Build refuses to run
// without it (internal/build/decisiongen/RATIONALE.md, "Why must
// wasm-opt be installed?"). Without clang, the wasm32 C library or
// wasm-opt it fails naming the Debian packages that provide them:
// clang, lld, wasi-libc, libclang-rt-14-dev-wasm32 and binaryen.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Packages are the Debian packages that give clang a wasm32-wasi target:
// the compiler, its linker, the C library, the compiler's builtins and
// binaryen, whose wasm-opt clang runs after linking.
const Packages = "clang lld wasi-libc libclang-rt-14-dev-wasm32 binaryen"

// WasmOpt is the program clang's driver runs over the linked module at
// -Os when it finds it on the PATH.
const WasmOpt = "wasm-opt"

// StackSize is the module's stack. The input's reader and checks, the
// evaluation and an explanation's writer keep a value's nesting off the
// C stack (each says how), so an input at the JSON reader's 10000
// levels decides in a quarter of it (TestDecisionReadsInputsAsEngine
// and TestDecisionExplainsDeepInputs in package wasmhost pass with 256
// KiB). A plan's trees nest as deep as they are long, so a forged plan
// can still go deeper: the stack comes first in memory (--stack-first),
// so that traps instead of overwriting the module's data
// (internal/build/decisiongen/RATIONALE.md, "Why is the stack first, and why `StackSize`?").
const StackSize = 1 << 20

// Flags are clang's flags before the sources, but for the prefix map
// and the output. -Os: the smaller of -Os and -O2, at the same speed
// (internal/build/decisiongen/RATIONALE.md, "Why -Os?").
var Flags = []string{
	"--target=wasm32-wasi", "-mexec-model=reactor", "-Os", "-std=c11", "-Wall", "-Wextra", "-Werror",
	"-Wl,--strip-all", "-Wl,--stack-first", fmt.Sprintf("-Wl,-z,stack-size=%d", StackSize),
}

func main() { os.Exit(doMain(os.Args[1:], os.Stderr)) }

func doMain(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("decisiongen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	src := fs.String("src", filepath.Join("wasm", "decision", "src"), "the directory of the C sources")
	out := fs.String("o", filepath.Join("wasm", "decision", "decision.wasm"), "the module to write")
	clang := fs.String("clang", "clang", "the clang to run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	wasm, err := Build(*clang, *src)
	if err == nil {
		err = os.WriteFile(*out, wasm, 0o644)
	}
	if err != nil {
		fmt.Fprintln(stderr, "decisiongen:", err)
		return 1
	}
	return 0
}

// Command is the clang command that builds the module from the C files
// of src into out, to run in src.
func Command(clang, src, out string) ([]string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(src, "*.c"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no C sources in %s", src)
	}
	cmd := append([]string{clang}, Flags...)
	cmd = append(cmd, "-ffile-prefix-map="+abs+"=.", "-o", out)
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	slices.Sort(names)
	return append(cmd, names...), nil
}

// Build compiles the C sources of src with clang and returns the
// module's bytes.
func Build(clang, src string) ([]byte, error) {
	if _, err := exec.LookPath(clang); err != nil {
		return nil, fmt.Errorf("%s not found: install the Debian packages %s", clang, Packages)
	}
	if _, err := exec.LookPath(WasmOpt); err != nil {
		return nil, fmt.Errorf("%s not found: without it %s builds a larger module than the checked-in one, which it runs %s -Os over; install the Debian packages %s", WasmOpt, clang, WasmOpt, Packages)
	}
	tmp, err := os.MkdirTemp("", "decisiongen")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "decision.wasm")
	args, err := Command(clang, src, out)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = src
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if missingSysroot(msg) {
			return nil, fmt.Errorf("%s cannot build for wasm32-wasi: install the Debian packages %s\n%s", clang, Packages, msg)
		}
		return nil, errors.New(strings.Join(args, " ") + ": " + err.Error() + "\n" + msg)
	}
	return os.ReadFile(out)
}

// missingSysroot reports whether clang's message is that of a clang
// without wasi-libc, lld or the wasm32 builtins.
func missingSysroot(msg string) bool {
	if strings.Contains(msg, "file not found") && !strings.Contains(msg, "decision.h") {
		return true // a libc header: no wasi-libc
	}
	for _, s := range []string{"wasm-ld", "libclang_rt.builtins-wasm32", "crt1-reactor.o", "unable to find library"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
