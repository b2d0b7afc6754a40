// Package decision holds the dlroute decision module: package plan, the
// evaluator of compiled decisions, ported to C (src/) and compiled by
// clang to a WebAssembly reactor of ABI version 3 (ABI.md). It holds no
// CEL compiler, no rules and no runtime to start, and imports only the
// compiler module's two host functions (platform_version, copy_to_host):
// the host hands it plans (rules/plans.bin, engine.RuleSet.Plan) and
// decides JSON lines with them, with the native engine's bytes.
//
// Module is checked in and embedded, so that a Go host, the Node.js
// package and the page decide with it without a C toolchain;
// `go generate ./wasm/decision` rebuilds it (internal/build/decisiongen:
// clang, lld, wasi-libc, libclang-rt-14-dev-wasm32 and binaryen from
// Debian), and decisiongen's TestCheckedInModuleIsFresh fails when it
// is stale. The wasmhost tests compare it with cel-go on every case of
// every embedded version and on generated inputs
// (wasm/decision/RATIONALE.md, "Why is the decision module written in
// C?").
package decision

import (
	_ "embed"
	"fmt"
	"os"
)

//go:generate go run ../../internal/build/decisiongen -src src -o decision.wasm

// Module is the decision module's bytes.
//
//go:embed decision.wasm
var Module []byte

// EnvModule names a decision module that Bytes reads instead of Module:
// another build, to run the hosts' tests against it.
const EnvModule = "DLROUTE_DECISION_WASM"

// Bytes returns the module hosts decide with: the file $DLROUTE_DECISION_WASM
// names, or Module.
func Bytes() ([]byte, error) {
	path := os.Getenv(EnvModule)
	if path == "" {
		return Module, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the module named by $%s: %w", EnvModule, err)
	}
	return data, nil
}
