// Package dlroute decides how an array crosses DLPack (the device type it
// advertises, whether an exchange copies, or the exception it raises) from
// versioned rule sets written in CEL. This root package holds only the
// source of the compiler module (ModuleSource); a Go
// program starts in one of the packages below, which are the public API.
// Everything else is under internal/ and may change.
//
// # Where to start
//
//   - github.com/dlroute/dlroute/engine: load rules once (engine.Load) and
//     decide inputs (Catalog.RuleSet, RuleSet.Resolve, RuleSet.ResolveJSON)
//     from many goroutines. Start here.
//   - github.com/dlroute/dlroute/rules: the rule sets dlroute ships, as an
//     fs.FS for engine.Load.
//   - github.com/dlroute/dlroute/wasmhost: the same decisions made by the
//     WebAssembly module, run by wazero, with the host functions that read
//     the machine and copy buffers.
//   - github.com/dlroute/dlroute/machine: what is read from the machine (the
//     platform version of a device) and the copiers of an exchange.
//   - github.com/dlroute/dlroute/bundle and github.com/dlroute/dlroute/live:
//     signed bundles of rules, and rules kept in force while they change.
//   - github.com/dlroute/dlroute/playground: the browser playground's
//     handler.
//
// Errors carry a stable code of one namespace, engine.Code; ERRORS.md in
// the repository lists every code.
//
// # ModuleSource
//
// Every dlroute binary, however it was built (`go install`, `go build -o`,
// `go run`) and wherever it runs, builds the compiler module (wasm/,
// cel-go inside) from exactly the code it was itself built from:
// internal/build/wasmbuild builds it on first use from its source here
// and caches it by a hash of those files. TestModuleSourceIsComplete
// checks that ModuleSource holds every file of this module that `go
// build` of ./wasm reads for wasip1. The decision module, which
// `resolve --engine wasm`, `serve --engine wasm`, the Node.js package and
// the page decide with, is C and checked in (package wasm/decision).
package dlroute

import "embed"

// ModuleSource is go.mod, go.sum and the Go files of the packages the
// module is built from (their tests too, which the build skips and the
// hash leaves out).
//
//go:embed go.mod go.sum wasm/*.go engine/*.go internal/contract/*.go wasm/internal/guest/*.go internal/memo/*.go internal/number/*.go plan/*.go
var ModuleSource embed.FS
