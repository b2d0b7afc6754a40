// Package dlroute carries the source of dlroute's WebAssembly module, so
// that every dlroute binary, however it was built (`go install`, `go
// build -o`, `go run`) and wherever it runs, builds the module it uses from
// exactly the code it was itself built from: internal/wasmbuild builds it
// on first use and caches it by a hash of these files. It has no other API.
//
// TestModuleSourceIsComplete checks that ModuleSource holds every file of
// this module that `go build ./wasm` reads for wasip1.
package dlroute

import "embed"

// ModuleSource is go.mod, go.sum and the Go files of the packages the
// module is built from (their tests too, which the build skips and the
// hash leaves out).
//
//go:embed go.mod go.sum wasm/*.go engine/*.go internal/abi/*.go internal/exchange/*.go internal/guest/*.go internal/memo/*.go internal/number/*.go
var ModuleSource embed.FS
